"""``RagSystem``: the transparent answering pipeline, each stage visible, timed and replaceable.

    question ─► expand ─► retrieve ─► extract ─► rerank ─► answer
               (query)   (top_k)    (snippets)  (top n)   (short, cited, exact)

The stages but retrieval are ``rag.stages.Stages`` (``default_stages`` picks the model or
extractive variant from the generator); retrieval goes through a ``Retriever`` opened per
run, because an open index is not shared between threads. ``RagSystem.ask`` returns a
``RagRun`` with everything the run did: the queries, documents with scores, snippets with
offsets, answers, citations, generator, settings, per-stage timings and every warning about a
fallback. Model failures never raise here (each stage falls back and says so); an empty or
enormous question raises ``QuestionError`` and a malformed user query ``QuerySyntaxError``.
Each step of ``ask`` is a method of its own (the query, the search and its fallbacks, the
answer and its citation check, the record), sharing the run's clock and warnings (``_Run``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from rag.answering.answers import Answers
from rag.answering.citations import CitedAnswer
from rag.answering.evidence import judge, on_topic, read_sentences
from rag.answering.exact import QUESTION_TYPES, ExactAnswer, question_type
from rag.answering.extraction import StageOutput
from rag.answering.snippets import SimilarityScorer, Snippet, bm25_scores
from rag.answering.support import support_scores
from rag.answering.yesno import NoReader
from rag.corpus.article import Article
from rag.errors import QueryTooBroadError, QuestionError
from rag.models.generators import Generator
from rag.retrieval.expansion import Expansion, broaden_query
from rag.retrieval.feedback import feedback_expansion
from rag.retrieval.index import IndexLabel, make_tokenizer
from rag.retrieval.retrievers import Retriever, SearchResult, question_query
from rag.retrieval.vectors import Hybrid
from rag.run import Progress, ProgressEvent, RagRun, RagSettings, RetrievedDocument
from rag.stages import (
    StageClock,
    Stages,
    Tokenize,
    answer_note,
    check_question,
    count,
    default_stages,
    expansion_note,
    fallback_note,
    new_run_id,
)


@dataclass(slots=True)
class _Run:
    """One run while it proceeds: the question, its type and language, when it started, the
    clock of its stages and its warnings so far (private to one call of ``ask``)."""

    question: str
    kind: str
    language: str
    started: datetime
    clock: StageClock
    warnings: list[str] = field(default_factory=list)
    # why the evidence does not answer the question (empty: it does)
    abstention: str = ""
    index: IndexLabel | None = None
    # the question's closeness in meaning to the closest sentence read (None: not measured)
    closeness: float | None = None


class RagSystem:
    """The retrieval-augmented QA system."""

    def __init__(
        self,
        open_retriever: Callable[[], AbstractContextManager[Retriever]],
        generator: Generator,
        settings: RagSettings,
        *,
        stages: Stages | None = None,
        dense: SimilarityScorer | None = None,
        hybrid: Hybrid | None = None,
        hybrid_off: str = "off",
        meaning: SimilarityScorer | None = None,
        meaning_off: str = "off",
        reader: NoReader | None = None,
        reader_off: str = "off",
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._open = open_retriever
        self.generator = generator
        self.settings = settings
        self.stages = stages or default_stages(
            generator, settings, dense=dense, meaning=meaning, reader=reader
        )
        self._scorer = dense
        self._now = now
        self._dense = dense is not None
        self.hybrid = hybrid
        # why dense fusion does not run, when it does not (shown with the retrieval stage)
        self._hybrid_off = hybrid_off
        # the sentence model that weighs whether the evidence is close to the question in
        # meaning (``rag.answering.evidence.judge``), and why it does not when it does not
        self._meaning = meaning
        self._meaning_off = meaning_off
        # the yes/no reader model that reads yes/no questions beside the word rules
        # (``rag.answering.yesno.decide``), and why there is none when there is none
        self._reader_off = "" if reader is not None else reader_off

    def ask(
        self,
        question: str,
        *,
        query: str | None = None,
        edited: bool | None = None,
        kind: str | None = None,
        language: str = "en",
        progress: Progress | None = None,
    ) -> RagRun:
        """Answer ``question``; with ``query``, skip expansion and search that query.

        Args:
            question: the question as asked.
            query: a query in the index's query language (the user's edit); None to expand.
            edited: whether ``query`` differs from the expansion the user saw (default: True
                when a query is given).
            kind: the BioASQ question type when known (yesno, factoid, list, summary).
            language: the question's language (recorded; the index is English).
            progress: receives stage events while the run proceeds.

        Returns:
            The run.

        Raises:
            QuestionError: for an empty or enormous question or query, or no words to search for.
            QuerySyntaxError: when the given query is malformed (with the position).
            RagError: when the index cannot be opened.
        """
        run = self._start(question, kind, language, progress)
        given = None if query is None else self._given_query(query, edited)
        with self._open() as retriever:
            if given is None:
                searched, query_edited = self._expanded(run, retriever), False
            else:
                run.clock.skip("expand", GIVEN)
                searched, query_edited = given
            result, searched = self._retrieved(run, retriever, searched, own=given is not None)
            tokenize = retriever.tokenize
            run.index = retriever.label()
            found = run.clock.run(
                "extract",
                lambda: self.stages.extract(run.question, result.documents, tokenize),
                lambda o: count(len(o.snippets), "snippet"),
            )
        run.warnings.extend((*_retrieval_warnings(result), *found.warnings))
        ranked = self._reranked(run, found.snippets)
        articles = {d.pmid: d.article for d in result.documents}
        answers = self._answered(run, ranked.snippets, articles, tokenize)
        dense = (
            ("dense_rerank", str(self._dense).lower()),
            ("dense_fusion", "on" if self.hybrid is not None else self._hybrid_off),
            *self._meaning_settings(run),
            *self._reader_settings(run),
        )
        documents = tuple(
            RetrievedDocument(d.rank, d.pmid, d.score, d.article.title) for d in result.documents
        )
        return self._record(
            run, (searched, query_edited, result), documents, (ranked, answers), dense
        )

    def _start(
        self, question: str, kind: str | None, language: str, progress: Progress | None
    ) -> _Run:
        """Check the question and begin its run (its type guessed when not given).

        Raises:
            QuestionError: for an empty or enormous question.
        """
        text = check_question(question, self.settings.max_question_chars)
        kind = kind if kind in QUESTION_TYPES else question_type(text)
        return _Run(text, kind, language, self._now(), StageClock(progress))

    def _given_query(self, query: str, edited: bool | None) -> tuple[str, bool]:
        """Return the user's query and whether it was edited (by default: yes).

        Raises:
            QuestionError: for a query longer than a question may be.
        """
        text = query.strip()
        if len(text) > self.settings.max_question_chars:
            # every word of a query is searched: its length bounds the search's work
            raise QuestionError(
                f"the query has {len(text)} characters; at most "
                f"{self.settings.max_question_chars} are accepted (rag.max_question_chars)"
            )
        return text, True if edited is None else edited

    def _expanded(self, run: _Run, retriever: Retriever) -> str:
        """The expand stage: return the query to search for the question."""
        expansion = run.clock.run(
            "expand", lambda: self._expand(run.question, retriever), expansion_note
        )
        if expansion.note:
            run.warnings.append(expansion.note)
        return expansion.query

    def _expand(self, question: str, retriever: Retriever) -> Expansion:
        """The expansion; without a model's query, pseudo-relevance feedback when it is on."""
        expansion = self.stages.expand(question)
        if expansion.source == "identity" and self.settings.query_feedback:
            return feedback_expansion(question, retriever)
        return expansion

    def _retrieved(
        self, run: _Run, retriever: Retriever, query: str, *, own: bool
    ) -> tuple[SearchResult, str]:
        """The retrieve stage: search ``query`` (the user's own when ``own``), let the model
        broaden a query that found nothing, fuse dense scores; return the result and the
        query searched (the question's words when the model's query was too broad).

        Raises:
            QuestionError: when there is nothing to search for.
            QueryTooBroadError: for the user's own query that the index cannot run.
        """
        if not query:
            raise QuestionError(
                "the question has no content words to search for; type a query instead"
            )
        searched, fusion = [query], [f"dense fusion {self._hybrid_off}"]

        def retrieve() -> SearchResult:
            found, searched[0] = self._search(run, retriever, query, own=own)
            found = self._broadened(run, retriever, found, searched[0])
            if self.hybrid is None or not found.documents:
                return found
            fused, fusion[0] = self.hybrid.rerank(run.question, found.documents)
            return replace(found, documents=fused)

        result = run.clock.run(
            "retrieve",
            retrieve,
            lambda r: (
                count(len(r.documents), "document")
                + fallback_note(r.fallback.value)
                + f"; {fusion[0]}"
            ),
        )
        return result, searched[0]

    def _search(
        self, run: _Run, retriever: Retriever, query: str, *, own: bool
    ) -> tuple[SearchResult, str]:
        """Search ``query``; a model's query too broad for the index gives way to the
        question's words. Return the result and the query that ran.

        Raises:
            QueryTooBroadError: for the user's own query (they narrow it).
        """
        top_k = self.settings.top_k
        try:
            return retriever.search(query, top_k, question=run.question), query
        except QueryTooBroadError as exc:
            if own:
                raise
            run.warnings.append(
                f"query expansion failed: the model's query {query!r:.120} is "
                f"too broad ({exc.detail}); searched for the question's words instead"
            )
            words = question_query(run.question)
            return retriever.search(words, top_k, question=run.question), words

    def _broadened(
        self, run: _Run, retriever: Retriever, found: SearchResult, query: str
    ) -> SearchResult:
        """BioRAGent's fallback: the model broadens a query that found nothing; its results
        replace a fallback's when they are found without one."""
        if found.fallback.value == "none" or not self.generator.uses_llm:
            return found
        broader = broaden_query(run.question, query, self.generator)
        if broader is None:
            return found
        try:
            again = retriever.search(broader.query, self.settings.top_k)
        except QueryTooBroadError:
            return found  # a broader query that cannot run: keep what ran
        if again.fallback.value != "none" or not again.documents:
            return found
        run.warnings.append(
            f"the query found nothing; the model's broader query {broader.query!r:.200} ran instead"
        )
        return replace(again, query=found.query, attempts=(*found.attempts[:1], broader.query))

    def _reranked(self, run: _Run, snippets: Sequence[Snippet]) -> StageOutput:
        """The rerank stage: keep the best ``settings.snippets`` snippets."""
        ranked = run.clock.run(
            "rerank",
            lambda: self.stages.rerank(run.question, snippets, self.settings.snippets),
            lambda o: "kept " + count(len(o.snippets), "snippet"),
        )
        run.warnings.extend(ranked.warnings)
        return ranked

    def _meaning_settings(self, run: _Run) -> tuple[tuple[str, str], ...]:
        """What the run records about the evidence check: words and meaning, or words only
        (and why), and the closeness measured."""
        if self._meaning is None:
            return (("evidence_check", f"words only; meaning {self._meaning_off}"),)
        check = ("evidence_check", "words and meaning (sentence model)")
        if run.closeness is None:
            return (check,)
        return (check, ("evidence_closeness", f"{run.closeness:.3f}"))

    def _reader_settings(self, run: _Run) -> tuple[tuple[str, str], ...]:
        """What a yes/no run records about how its yes or no was read."""
        if run.kind != "yesno":
            return ()
        if self._reader_off:
            return (("yesno_check", f"words only; reader model {self._reader_off}"),)
        return (("yesno_check", "words and reader model (fine-tuned MiniLM)"),)

    def _closeness(self, run: _Run, documents: Sequence[tuple[str, str]]) -> float | None:
        """The question's cosine with the closest sentence read (None without the model or
        when it fails: the word rules then decide alone, and the run says so)."""
        if self._meaning is None or not documents:
            return None
        read = read_sentences(documents)
        try:
            scores = self._meaning.similarities(run.question, read)
        except (RuntimeError, ValueError) as exc:
            run.warnings.append(f"meaning check failed ({exc}); the word rules decided alone")
            return None
        run.closeness = max(scores, default=0.0)
        return run.closeness

    def _answered(
        self,
        run: _Run,
        evidence: Sequence[Snippet],
        articles: dict[str, Article],
        tokenize: Tokenize,
        *,
        dense: bool = True,
        writing: bool = True,
        judged: bool = True,
    ) -> Answers:
        """The answer stage: the answers from ``evidence``, each cited sentence checked against
        the text of the articles it cites (with the dense scorer when ``dense``; each part's
        text sent to the run's progress while it is written when ``writing``). Unless the
        evidence was given (``judged`` false), a run whose evidence does not address the question
        abstains (``rag.answering.evidence.judge``) and composes no answer."""

        def written(part: str, partial: str) -> None:
            run.clock.emit(ProgressEvent("answer", "writing", part=part, text=partial))

        def answer() -> Answers:
            if judged:
                documents = _judged_documents(evidence, articles)
                verdict = judge(
                    run.question,
                    run.kind,
                    documents,
                    closeness=self._closeness(run, documents),
                )
                if not verdict.answered:
                    run.abstention = verdict.reason
                    nothing = "no snippets were found, so there is nothing to answer from"
                    return Answers(
                        "", CitedAnswer(), ExactAnswer(run.kind), () if evidence else (nothing,)
                    )
            made = self.stages.answer(
                run.question,
                run.kind,
                _focused(run.question, run.kind, evidence) if judged else evidence,
                written if writing else None,
            )
            checked = support_scores(
                made.cited,
                articles,
                tokenize,
                dense=self._scorer if dense else None,
                threshold=self.settings.support_threshold,
                question=run.question,
            )
            return replace(made, cited=checked)

        answers = run.clock.run("answer", answer, answer_note)
        run.warnings.extend(answers.warnings)
        unsupported = sum(s.unsupported for s in answers.cited.sentences)
        if unsupported:
            run.warnings.append(
                f"citation check: {unsupported} cited sentence(s) are not supported by the "
                "abstract they cite (marked)"
            )
        return answers

    def _record(
        self,
        run: _Run,
        search: tuple[str, bool, SearchResult | None],
        documents: tuple[RetrievedDocument, ...],
        outputs: tuple[StageOutput, Answers],
        settings: tuple[tuple[str, str], ...],
    ) -> RagRun:
        """Return the run's record: ``search`` is the query searched, whether the user edited
        it and what it found (None: no search); ``outputs`` the rerank stage's and the answers;
        ``settings`` what this run adds to the system's settings."""
        searched, edited, result = search
        ranked, answers = outputs
        return RagRun(
            run_id=new_run_id(run.started),
            question=run.question,
            language=run.language,
            question_type=run.kind,
            expanded_query=searched,
            query_edited=edited,
            query_run=result.query_run if result is not None else "",
            fallback=result.fallback.value if result is not None else "none",
            documents=documents,
            snippets=ranked.snippets,
            short_answer=answers.short,
            cited_answer=answers.cited,
            exact_answer=answers.exact,
            generator=self.generator.info,
            settings=(*self.settings.as_pairs(), *settings),
            timings=tuple(run.clock.timings),
            warnings=tuple(dict.fromkeys(run.warnings)),
            started=run.started,
            finished=self._now(),
            answered=not run.abstention,
            index=run.index,
            abstention=_abstention(run.abstention, searched, result, ranked.snippets),
        )

    def answer_given(
        self,
        question: str,
        given: Sequence[Snippet],
        *,
        kind: str | None = None,
        language: str = "en",
        tokenize: Tokenize | None = None,
    ) -> RagRun:
        """Answer from given snippets (BioASQ phase B): no expansion, retrieval or extraction.

        The snippets are scored against the question (BM25 over them, the index analyzer's
        terms), reranked and answered from as in ``ask``; cited sentences are checked against
        the text of the given snippets of each document.

        Raises:
            QuestionError: for an empty or enormous question.
        """
        run = self._start(question, kind, language, None)
        tok = tokenize or make_tokenizer()
        for stage in ("expand", "retrieve"):
            run.clock.skip(stage, "skipped: phase B, the snippets were given")
        scored = _scored(run.question, given, tok)
        run.clock.skip("extract", f"{count(len(scored), 'given snippet')} scored")
        ranked = self._reranked(run, scored)
        articles = _given_articles(given)
        # the answers read every given snippet (BioASQ gives them as the evidence), best first
        kept = set(map(id, ranked.snippets))
        rest = sorted((s for s in scored if id(s) not in kept), key=lambda s: -s.score)
        evidence = (*ranked.snippets, *rest)
        # the snippets were given as the evidence for this question (BioASQ phase B): the run
        # does not judge whether they address it (an answer is asked for), but checks every
        # cited sentence against them as always
        answers = self._answered(
            run, evidence, articles, tok, dense=False, writing=False, judged=False
        )
        documents = tuple(
            RetrievedDocument(rank, pmid, 0.0) for rank, pmid in enumerate(articles, start=1)
        )
        extra = (("phase", "b"), *self._reader_settings(run))
        return self._record(run, ("", False, None), documents, (ranked, answers), extra)


# The expand stage's note when the user gave the query.
GIVEN = "skipped: a query was given"


def _retrieval_warnings(result: SearchResult) -> list[str]:
    """Return what a reader should know of a search: nothing found, or a fallback query ran."""
    if result.is_empty:
        return ["no documents were found, not even with the fallback queries"]
    if result.fallback.value != "none":
        return [
            f"the query found nothing; the {result.fallback.value} fallback query "
            f"{result.query_run!r:.200} ran instead"
        ]
    return []


def _judged_documents(
    evidence: Sequence[Snippet], articles: dict[str, Article]
) -> list[tuple[str, str]]:
    """The documents the answer would rest on: the whole article of every evidence snippet
    (its title and abstract), else the snippet's text."""
    texts: dict[str, list[str]] = {}
    for sn in evidence:
        article = articles.get(sn.pmid)
        if article is not None:
            texts.setdefault(sn.pmid, [article.title, article.abstract])
        else:
            texts.setdefault(sn.pmid, []).append(sn.text)
    return [(pmid, "\n".join(t for t in parts if t)) for pmid, parts in texts.items()]


def _focused(question: str, kind: str, evidence: Sequence[Snippet]) -> Sequence[Snippet]:
    """For factoid and list questions over retrieved snippets, those that mention every anchor
    of the question (an answer is named where its subject is), when there are any; given
    snippets (phase B) are all about the question and are not narrowed."""
    if kind not in ("factoid", "list"):
        return evidence
    keep = on_topic(question, [sn.text for sn in evidence])
    chosen = [sn for sn, ok in zip(evidence, keep, strict=True) if ok]
    return chosen or evidence


def _abstention(
    reason: str, searched: str, result: SearchResult | None, shown: Sequence[Snippet]
) -> str:
    """Say in plain words that the run does not answer, why, and what it searched and found."""
    if not reason:
        return ""
    read = len({sn.pmid for sn in shown})
    if result is None:
        found = f"The {read} given document(s) were read."
    else:
        best = next((d.article.title for d in result.documents if d.article.title), "")
        titled = f" (the best titled {best!r:.160})" if best else ""
        found = (
            f"Searched the index for {searched!r:.200}: {len(result.documents)} document(s) "
            f"found{titled}; the {read} best-matching were read."
        )
    return (
        f"No answer: the evidence found does not address the question ({reason}). {found} "
        "The index may not hold what the question asks about."
    )


def _scored(question: str, given: Sequence[Snippet], tok: Tokenize) -> tuple[Snippet, ...]:
    """Return the given snippets scored against the question (BM25 over them, best = 1)."""
    raw = bm25_scores(tok(question), [tok(sn.text) for sn in given])
    best = max(raw, default=0.0) or 1.0
    return tuple(
        replace(sn, score=v / best, lexical_score=v / best)
        for sn, v in zip(given, raw, strict=True)
    )


def _given_articles(given: Sequence[Snippet]) -> dict[str, Article]:
    """Return each document's given snippets as one text, in the order documents first appear."""
    texts: dict[str, list[str]] = {}
    for sn in given:
        texts.setdefault(sn.pmid, []).append(sn.text)
    # a blank line between snippets: each ends a sentence (snippets often lack a full stop)
    return {pmid: Article(pmid, "", "\n\n".join(parts)) for pmid, parts in texts.items()}

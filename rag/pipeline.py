"""``RagSystem``: the transparent answering pipeline, each stage visible, timed and replaceable.

    question ─► expand ─► retrieve ─► extract ─► rerank ─► answer
               (query)   (top_k)    (snippets)  (top n)   (short, cited, exact)

``Stages`` holds one callable per stage except retrieval (``default_stages`` picks the model
or extractive variant from the generator); retrieval goes through a ``Retriever`` opened per
run, because an open index is not shared between threads. ``RagSystem.ask`` returns a
``RagRun`` with everything the run did: the queries, documents with scores, snippets with
offsets, answers, citations, generator, settings, per-stage timings and every warning about a
fallback. Model failures never raise here (each stage falls back and says so); an empty or
enormous question raises ``QuestionError`` and a malformed user query ``QuerySyntaxError``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TypeVar

from rag.answering.answers import Answers, PartCallback, compose_answers
from rag.answering.exact import QUESTION_TYPES, question_type
from rag.answering.extraction import StageOutput, llm_rerank, llm_snippets, score_rerank
from rag.answering.snippets import SimilarityScorer, Snippet, bm25_scores, extract_snippets
from rag.answering.support import support_scores
from rag.corpus.article import Article
from rag.errors import QueryTooBroadError, QuestionError
from rag.models.generators import Generator
from rag.retrieval.expansion import Expansion, broaden_query, expand_query
from rag.retrieval.feedback import feedback_expansion
from rag.retrieval.index import make_tokenizer
from rag.retrieval.retrievers import RankedDocument, Retriever, SearchResult, question_query
from rag.retrieval.vectors import Hybrid
from rag.run import (
    Progress,
    ProgressEvent,
    RagRun,
    RagSettings,
    RetrievedDocument,
    StageTiming,
)

T = TypeVar("T")
STAGES = ("expand", "retrieve", "extract", "rerank", "answer")
Tokenize = Callable[[str], list[str]]


@dataclass(frozen=True, slots=True)
class Stages:
    """The replaceable stages (retrieval aside)."""

    expand: Callable[[str], Expansion]
    extract: Callable[[str, Sequence[RankedDocument], Tokenize], StageOutput]
    rerank: Callable[[str, Sequence[Snippet], int], StageOutput]
    answer: Callable[[str, str, Sequence[Snippet], PartCallback | None], Answers]


def default_stages(
    generator: Generator, settings: RagSettings, *, dense: SimilarityScorer | None = None
) -> Stages:
    """Return the stages for ``generator``: model stages with a model, extractive ones without."""

    def extractive(question: str, docs: Sequence[RankedDocument], tok: Tokenize) -> StageOutput:
        found = extract_snippets(
            question,
            docs,
            tokenize=tok,
            limit=settings.snippets * 2,
            dense=dense,
            document_weight=settings.snippet_document_weight,
        )
        return StageOutput(found)

    def extract(question: str, docs: Sequence[RankedDocument], tok: Tokenize) -> StageOutput:
        if not generator.uses_llm or not docs:
            return extractive(question, docs, tok)
        found = llm_snippets(
            question,
            docs[: settings.llm_documents],
            generator,
            tokenize=tok,
            workers=settings.llm_workers,
            max_tokens=settings.extract_tokens,
        )
        if found.snippets:
            return found
        note = (
            "snippet extraction: the model gave no verbatim snippet; used the extractive snippets"
        )
        return StageOutput(extractive(question, docs, tok).snippets, (*found.warnings, note))

    def rerank(question: str, snippets: Sequence[Snippet], limit: int) -> StageOutput:
        if generator.uses_llm:
            return llm_rerank(question, snippets, generator, limit)
        return score_rerank(snippets, limit)

    def answer(
        question: str, kind: str, snippets: Sequence[Snippet], on_text: PartCallback | None
    ) -> Answers:
        return compose_answers(
            question, kind, snippets, generator, on_text=on_text, max_tokens=settings.answer_tokens
        )

    return Stages(
        expand=lambda q: expand_query(q, generator, shots=settings.expansion_shots),
        extract=extract,
        rerank=rerank,
        answer=answer,
    )


def check_question(question: str, max_chars: int) -> str:
    """Return the question stripped, if it is acceptable.

    Raises:
        QuestionError: when it is empty or longer than ``max_chars``.
    """
    text = question.strip()
    if not text:
        raise QuestionError("the question is empty; type a question")
    if len(text) > max_chars:
        raise QuestionError(
            f"the question has {len(text)} characters; at most {max_chars} are accepted "
            "(rag.max_question_chars)"
        )
    return text


def new_run_id(now: datetime) -> str:
    """Return a fresh run id: the UTC time and six random hex digits."""
    return f"{now:%Y%m%d%H%M%S}-{secrets.token_hex(3)}"


class _Clock:
    def __init__(self, progress: Progress | None) -> None:
        self.timings: list[StageTiming] = []
        self._progress = progress

    def emit(self, event: ProgressEvent) -> None:
        if self._progress is not None:
            self._progress(event)

    def run(self, stage: str, work: Callable[[], T], note: Callable[[T], str]) -> T:
        self.emit(ProgressEvent(stage, "started"))
        started = time.perf_counter()
        value = work()
        millis = (time.perf_counter() - started) * 1000.0
        self.timings.append(StageTiming(stage, millis, note(value)))
        self.emit(ProgressEvent(stage, "finished", millis, note(value)))
        return value

    def skip(self, stage: str, note: str) -> None:
        self.timings.append(StageTiming(stage, 0.0, note))
        self.emit(ProgressEvent(stage, "finished", 0.0, note))


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
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._open = open_retriever
        self.generator = generator
        self.settings = settings
        self.stages = stages or default_stages(generator, settings, dense=dense)
        self._scorer = dense
        self._now = now
        self._dense = dense is not None
        self.hybrid = hybrid
        # why dense fusion does not run, when it does not (shown with the retrieval stage)
        self._hybrid_off = hybrid_off

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
        text = check_question(question, self.settings.max_question_chars)
        kind = kind if kind in QUESTION_TYPES else question_type(text)
        started = self._now()
        clock = _Clock(progress)
        warnings: list[str] = []
        if query is not None:
            query_text, query_edited = query.strip(), True if edited is None else edited
            if len(query_text) > self.settings.max_question_chars:
                # every word of a query is searched: its length bounds the search's work
                raise QuestionError(
                    f"the query has {len(query_text)} characters; at most "
                    f"{self.settings.max_question_chars} are accepted (rag.max_question_chars)"
                )
        with self._open() as retriever:
            if query is None:
                expansion = clock.run(
                    "expand", lambda: self._expand(text, retriever), _expansion_note
                )
                if expansion.note:
                    warnings.append(expansion.note)
                query_text, query_edited = expansion.query, False
            else:
                clock.skip("expand", "skipped: a query was given")
            if not query_text:
                raise QuestionError(
                    "the question has no content words to search for; type a query instead"
                )
            fusion = [f"dense fusion {self._hybrid_off}"]

            def retrieve() -> SearchResult:
                nonlocal query_text
                try:
                    found = retriever.search(query_text, self.settings.top_k, question=text)
                except QueryTooBroadError as exc:
                    if query is not None:
                        raise  # the user's own query: they narrow it
                    # the model's query expands too far on this index: the question's words
                    warnings.append(
                        f"query expansion failed: the model's query {query_text!r:.120} is "
                        f"too broad ({exc.detail}); searched for the question's words instead"
                    )
                    query_text = question_query(text)
                    found = retriever.search(query_text, self.settings.top_k, question=text)
                if found.fallback.value != "none" and self.generator.uses_llm:
                    # BioRAGent's fallback: the model broadens a query that found nothing
                    broader = broaden_query(text, query_text, self.generator)
                    if broader is not None:
                        again: SearchResult | None
                        try:
                            again = retriever.search(broader.query, self.settings.top_k)
                        except QueryTooBroadError:
                            again = None  # a broader query that cannot run: keep what ran
                        if again is not None and again.fallback.value == "none" and again.documents:
                            warnings.append(
                                f"the query found nothing; the model's broader query "
                                f"{broader.query!r:.200} ran instead"
                            )
                            found = replace(
                                again,
                                query=found.query,
                                attempts=(*found.attempts[:1], broader.query),
                            )
                if self.hybrid is None or not found.documents:
                    return found
                fused, fusion[0] = self.hybrid.rerank(text, found.documents)
                return replace(found, documents=fused)

            result = clock.run(
                "retrieve",
                retrieve,
                lambda r: (
                    _count(len(r.documents), "document")
                    + _fallback_note(r.fallback.value)
                    + f"; {fusion[0]}"
                ),
            )
            docs = result.documents
            tokenize = retriever.tokenize
            found = clock.run(
                "extract",
                lambda: self.stages.extract(text, docs, retriever.tokenize),
                lambda o: _count(len(o.snippets), "snippet"),
            )
        if result.is_empty:
            warnings.append("no documents were found, not even with the fallback queries")
        elif result.fallback.value != "none":
            warnings.append(
                f"the query found nothing; the {result.fallback.value} fallback query "
                f"{result.query_run!r:.200} ran instead"
            )
        warnings.extend(found.warnings)
        ranked = clock.run(
            "rerank",
            lambda: self.stages.rerank(text, found.snippets, self.settings.snippets),
            lambda o: "kept " + _count(len(o.snippets), "snippet"),
        )
        warnings.extend(ranked.warnings)

        def writing(part: str, partial: str) -> None:
            clock.emit(ProgressEvent("answer", "writing", part=part, text=partial))

        articles = {d.pmid: d.article for d in docs}

        def answer() -> Answers:
            made = self.stages.answer(text, kind, ranked.snippets, writing)
            checked = support_scores(
                made.cited,
                articles,
                tokenize,
                dense=self._scorer,
                threshold=self.settings.support_threshold,
                question=text,
            )
            return replace(made, cited=checked)

        answers = clock.run("answer", answer, _answer_note)
        warnings.extend(answers.warnings)
        unsupported = sum(s.unsupported for s in answers.cited.sentences)
        if unsupported:
            warnings.append(
                f"citation check: {unsupported} cited sentence(s) are not supported by the "
                "abstract they cite (marked)"
            )
        return RagRun(
            run_id=new_run_id(started),
            question=text,
            language=language,
            question_type=kind,
            expanded_query=query_text,
            query_edited=query_edited,
            query_run=result.query_run,
            fallback=result.fallback.value,
            documents=tuple(
                RetrievedDocument(d.rank, d.pmid, d.score, d.article.title) for d in docs
            ),
            snippets=ranked.snippets,
            short_answer=answers.short,
            cited_answer=answers.cited,
            exact_answer=answers.exact,
            generator=self.generator.info,
            settings=(
                *self.settings.as_pairs(),
                ("dense_rerank", str(self._dense).lower()),
                ("dense_fusion", "on" if self.hybrid is not None else self._hybrid_off),
            ),
            timings=tuple(clock.timings),
            warnings=tuple(dict.fromkeys(warnings)),
            started=started,
            finished=self._now(),
        )

    def _expand(self, question: str, retriever: Retriever) -> Expansion:
        """The expand stage; without a model's query, pseudo-relevance feedback when it is on."""
        expansion = self.stages.expand(question)
        if expansion.source == "identity" and self.settings.query_feedback:
            return feedback_expansion(question, retriever)
        return expansion

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
        text = check_question(question, self.settings.max_question_chars)
        kind = kind if kind in QUESTION_TYPES else question_type(text)
        tok = tokenize or make_tokenizer()
        started = self._now()
        clock = _Clock(None)
        for stage in ("expand", "retrieve"):
            clock.skip(stage, "skipped: phase B, the snippets were given")
        raw = bm25_scores(tok(text), [tok(sn.text) for sn in given])
        best = max(raw, default=0.0) or 1.0
        scored = tuple(
            replace(sn, score=v / best, lexical_score=v / best)
            for sn, v in zip(given, raw, strict=True)
        )
        clock.skip("extract", f"{_count(len(scored), 'given snippet')} scored")
        ranked = clock.run(
            "rerank",
            lambda: self.stages.rerank(text, scored, self.settings.snippets),
            lambda o: "kept " + _count(len(o.snippets), "snippet"),
        )
        texts: dict[str, list[str]] = {}
        for sn in given:
            texts.setdefault(sn.pmid, []).append(sn.text)
        # a blank line between snippets: each ends a sentence (snippets often lack a full stop)
        articles = {pmid: Article(pmid, "", "\n\n".join(parts)) for pmid, parts in texts.items()}

        # the answers read every given snippet (BioASQ gives them as the evidence), best first
        kept = set(map(id, ranked.snippets))
        rest = sorted((s for s in scored if id(s) not in kept), key=lambda s: -s.score)
        evidence = (*ranked.snippets, *rest)

        def answer() -> Answers:
            made = self.stages.answer(text, kind, evidence, None)
            checked = support_scores(
                made.cited, articles, tok, threshold=self.settings.support_threshold, question=text
            )
            return replace(made, cited=checked)

        answers = clock.run("answer", answer, _answer_note)
        return RagRun(
            run_id=new_run_id(started),
            question=text,
            language=language,
            question_type=kind,
            expanded_query="",
            query_edited=False,
            query_run="",
            fallback="none",
            documents=tuple(
                RetrievedDocument(rank, pmid, 0.0) for rank, pmid in enumerate(texts, start=1)
            ),
            snippets=ranked.snippets,
            short_answer=answers.short,
            cited_answer=answers.cited,
            exact_answer=answers.exact,
            generator=self.generator.info,
            settings=(*self.settings.as_pairs(), ("phase", "b")),
            timings=tuple(clock.timings),
            warnings=tuple(dict.fromkeys((*ranked.warnings, *answers.warnings))),
            started=started,
            finished=self._now(),
        )


def _answer_note(answers: Answers) -> str:
    sentences = answers.cited.sentences
    scored = [s for s in sentences if s.supported is not None]
    note = _count(len(sentences), "answer sentence")
    if scored:
        good = sum(bool(s.supported) for s in scored)
        note += f"; citations checked: {good} of {len(scored)} supported"
    return note


def _expansion_note(expansion: Expansion) -> str:
    return {
        "identity": "the question's words",
        "model": "the model's query",
        "feedback": "the question's words and words of its best hits (pseudo-relevance feedback)",
    }.get(expansion.source, "fallback to the question's words")


def _fallback_note(fallback: str) -> str:
    return "" if fallback == "none" else f" (fallback: {fallback})"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"

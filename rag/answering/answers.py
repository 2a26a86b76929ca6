"""The answering stage: a short answer, a cited answer and (yes/no, factoid, list) an exact answer.

Extractive (no model): the short (ideal) answer states the answer first and then the sentences
that address the question, diverse across articles (``rag.answering.ideal``); the cited answer
is the same with every sentence citing its article (the stated answer citing the articles of
the chosen sentences); the exact answer comes from ``rag.answering.exact``. With a model, each
part is asked for separately and checked: the short answer is cut to 200 words; the cited
answer goes through ``rag.answering.citations`` against the PMIDs of the snippets shown; the
exact answer must be the requested JSON. A part the model fails falls back to its extractive
form with a warning; so does a cited answer without a single verifiable citation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rag.answering.citations import MAX_CITATIONS, AnswerSentence, CitedAnswer, check_citations
from rag.answering.evidence import mentions_any
from rag.answering.exact import ExactAnswer, extractive_exact, parse_exact, stated_in_frame
from rag.answering.ideal import (
    BUDGETS,
    Sentence,
    candidate_sentences,
    question_frame,
    select,
    statement,
)
from rag.answering.snippets import SimilarityScorer, Snippet
from rag.answering.support import MIN_WORDS
from rag.answering.yesno import NoReader
from rag.errors import GeneratorError
from rag.models.generators import ChatMessage, Generator
from rag.models.prompts import SnippetLine, answer_messages, exact_messages, json_value

SHORT_WORDS = 200
CITED_WORDS = 150
SHORT_TOKENS = 256
CITED_TOKENS = 256
EXACT_TOKENS = 120
# Snippets shown to the model in the answer prompts.
PROMPT_SNIPPETS = 10

PartCallback = Callable[[str, str], None]  # (part: "short" | "cited", text so far)


@dataclass(frozen=True, slots=True)
class Answers:
    """What the answering stage produced."""

    short: str
    cited: CitedAnswer
    exact: ExactAnswer
    warnings: tuple[str, ...] = ()


def _words(text: str, limit: int) -> str:
    words = text.split()
    return " ".join(words[:limit]) + (" …" if len(words) > limit else "")


def extractive_short(
    question: str, kind: str, exact: ExactAnswer, sentences: Sequence[Sentence]
) -> str:
    """Return the ideal answer: the answer stated first, then the chosen sentences.

    Without sentences there is no evidence, and no answer is stated.
    """
    if not sentences:
        return ""
    first = _sentence_or_none(
        statement(question, kind, exact.yesno, exact.values() if exact.entities else ())
    )
    body = " ".join(s.text for s in sentences)
    return _words(" ".join(p for p in (first, body) if p), SHORT_WORDS)


def _sentence_or_none(text: str) -> str:
    """The stated answer when it is a sentence; names without the question's frame
    ("acetaminophen.") are no claim a reader can check, and the exact answer lists them."""
    return text if len(text.split()) >= MIN_WORDS else ""


def extractive_cited(
    question: str,
    kind: str,
    exact: ExactAnswer,
    sentences: Sequence[Sentence],
    snippets: Sequence[Snippet] = (),
) -> CitedAnswer:
    """Return the cited answer: the stated answer, then each chosen sentence citing its article.

    The stated answer cites the articles that name its entities (factoid, list; only the
    names those articles state are listed) or, for yes/no, the chosen sentences' articles; at
    most three. 150 words at most.
    """
    cited: list[AnswerSentence] = []
    if not sentences:
        return CitedAnswer()
    names, pmids = _named_in(exact.values() if exact.entities else (), snippets)
    if not exact.entities:
        pmids = tuple(dict.fromkeys(s.pmid for s in sentences))[:MAX_CITATIONS]
    first = _sentence_or_none(statement(question, kind, exact.yesno, names))
    if first and pmids:
        cited.append(AnswerSentence(first, pmids))
    words = sum(len(s.text.split()) for s in cited)
    for sentence in sentences:
        count = len(sentence.text.split())
        if cited and words + count > CITED_WORDS:
            break
        words += count
        cited.append(AnswerSentence(sentence.text, (sentence.pmid,)))
    return CitedAnswer(tuple(cited))


def _named_in(
    names: Sequence[str], snippets: Sequence[Snippet]
) -> tuple[list[str], tuple[str, ...]]:
    """The names (in order) that at most three articles state, and those articles."""
    pmids: list[str] = []
    kept: list[str] = []
    for name in names:
        lower = name.lower()
        holders = [s.pmid for s in snippets if lower in s.text.lower()]
        if not holders:
            continue
        if not any(p in pmids for p in holders):
            if len(pmids) == MAX_CITATIONS:
                continue
            pmids.append(holders[0])
        kept.append(name)
    return kept, tuple(pmids)


def extractive_answers(
    question: str,
    kind: str,
    snippets: Sequence[Snippet],
    *,
    meaning: SimilarityScorer | None = None,
    reader: NoReader | None = None,
) -> Answers:
    """Compose all three answers from the snippets without a generating model (``meaning``,
    the sentence model, helps choose the sentences; ``reader`` reads yes/no questions too)."""
    exact = extractive_exact(question, kind, snippets, reader)
    warnings: tuple[str, ...] = (
        () if snippets else ("no snippets were found, so there is nothing to answer from",)
    )
    budget = BUDGETS.get(kind, BUDGETS["summary"])
    candidates = candidate_sentences(snippets)
    chosen = select(question, candidates, budget, meaning=meaning)
    # the cited answer has room for more than the short one's budget, up to three articles;
    # a sentence in it must mention what the question is about (the short answer may carry
    # one that says it with a pronoun or an abbreviation: it cites nothing)
    about = [s for s in candidates if mentions_any(question, s.text)]
    cited_from = [s for s in chosen if s in about]
    if len(cited_from) < 2:
        cited_from = select(question, about, BUDGETS["summary"], meaning=meaning)
    stated = stated_in_frame(question, exact, snippets)
    frame = question_frame(question)
    if frame and exact.entities and not stated.entities:
        # the candidates are names the evidence mentions; none is stated in the asked relation
        warnings += (
            f'no sentence read states a name as the answer ("… {frame}"), so none is stated; '
            "the exact answer's candidates are only mentioned with the question's words",
        )
    return Answers(
        extractive_short(question, kind, stated, chosen),
        extractive_cited(question, kind, stated, cited_from, snippets),
        exact,
        warnings,
    )


def compose_answers(
    question: str,
    kind: str,
    snippets: Sequence[Snippet],
    generator: Generator,
    *,
    on_text: PartCallback | None = None,
    max_tokens: int = CITED_TOKENS,
    meaning: SimilarityScorer | None = None,
    reader: NoReader | None = None,
) -> Answers:
    """Answer from the snippets with the generator's model, falling back part by part.

    Args:
        question: the question.
        kind: the BioASQ question type (yesno, factoid, list, summary).
        snippets: the reranked snippets, best first.
        generator: the generator; without a model the extractive answers are returned.
        on_text: called with (part, text so far) while the model writes (streaming).
        max_tokens: the token budget of the short and of the cited answer call.
        meaning, reader: the sentence model that helps choose the extractive answers'
            sentences; the yes/no reader that reads yes/no questions beside the word rules.

    Returns:
        The answers and a warning for every part that fell back.
    """
    base = extractive_answers(question, kind, snippets, meaning=meaning, reader=reader)
    if not generator.uses_llm or not snippets:
        return base
    shown = [SnippetLine(s.pmid, s.text) for s in snippets[:PROMPT_SNIPPETS]]
    warnings: list[str] = []
    short = _model_short(question, shown, generator, on_text, warnings, max_tokens) or base.short
    cited = _model_cited(question, shown, generator, on_text, warnings, max_tokens) or base.cited
    asked = kind in ("yesno", "factoid", "list")
    exact = _model_exact(question, kind, shown, generator, warnings) if asked else None
    return Answers(short, cited, exact or base.exact, tuple(warnings))


def _stream(on_text: PartCallback | None, part: str) -> Callable[[str], None] | None:
    if on_text is None:
        return None
    return lambda text: on_text(part, text)


def _model_reply(
    generator: Generator,
    messages: list[ChatMessage],
    max_tokens: int,
    on_text: Callable[[str], None] | None,
    label: str,
    warnings: list[str],
) -> str | None:
    """Ask the model for one answer part; on failure note why and return ``None``."""
    try:
        return generator.chat(messages, max_tokens=max_tokens, on_text=on_text)
    except GeneratorError as exc:
        warnings.append(f"{label}: the model did not answer ({exc}); showing the extractive one")
        return None


def _model_short(
    question: str,
    shown: list[SnippetLine],
    generator: Generator,
    on_text: PartCallback | None,
    warnings: list[str],
    max_tokens: int = SHORT_TOKENS,
) -> str | None:
    reply = _model_reply(
        generator,
        answer_messages(question, shown, cited=False),
        max_tokens,
        _stream(on_text, "short"),
        "short answer",
        warnings,
    )
    return None if reply is None else _words(reply, SHORT_WORDS)


def _model_cited(
    question: str,
    shown: list[SnippetLine],
    generator: Generator,
    on_text: PartCallback | None,
    warnings: list[str],
    max_tokens: int = CITED_TOKENS,
) -> CitedAnswer | None:
    reply = _model_reply(
        generator,
        answer_messages(question, shown, cited=True),
        max_tokens,
        _stream(on_text, "cited"),
        "cited answer",
        warnings,
    )
    if reply is None:
        return None
    checked = check_citations(reply, {s.pmid for s in shown})
    if not checked.verified_sentences:
        warnings.append(
            "cited answer: no sentence of the model's answer carried a citation of a shown "
            "snippet; showing the extractive cited answer instead"
        )
        return None
    flagged = len(checked.sentences) - checked.verified_sentences
    if flagged:
        warnings.append(
            f"cited answer: {flagged} sentence(s) flagged: a citation was not among the shown "
            "snippets (removed) or the sentence cites nothing"
        )
    return _cut(checked)


def _cut(answer: CitedAnswer) -> CitedAnswer:
    kept: list[AnswerSentence] = []
    words = 0
    for sentence in answer.sentences:
        words += len(sentence.text.split())
        if kept and words > CITED_WORDS:
            break
        kept.append(sentence)
    return CitedAnswer(tuple(kept))


def _model_exact(
    question: str, kind: str, shown: list[SnippetLine], generator: Generator, warnings: list[str]
) -> ExactAnswer | None:
    try:
        reply = generator.chat(exact_messages(question, kind, shown), max_tokens=EXACT_TOKENS)
    except GeneratorError as exc:
        warnings.append(f"exact answer: the model did not answer ({exc}); used the extractive one")
        return None
    parsed = parse_exact(kind, json_value(reply))
    if parsed is None and kind == "yesno":
        # a bare "Yes." instead of the JSON still answers the question
        parsed = parse_exact(kind, {"answer": (reply.split() or [""])[0]})
    if parsed is None:
        warnings.append(
            f"exact answer: the model's reply {reply[:80]!r} is not the requested JSON; used the "
            "extractive one"
        )
    return parsed

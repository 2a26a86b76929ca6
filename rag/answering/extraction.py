"""Snippet extraction and reranking with a language model, checked against the original text.

Extraction asks the model for the relevant sentences of each of the top articles as JSON. A
returned sentence is kept only when it occurs verbatim in the title or abstract; the match is
made on a normalised copy (Unicode compatibility decomposition, accents dropped, lowercase,
runs of whitespace as one space) and mapped back, so offsets and text are those of the stored
original (BioASQ convention: inclusive end). Reranking asks for snippet numbers in order of
helpfulness. Every model failure degrades to the extractive result with a warning; nothing
here raises for a model's reply.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from rag.answering.snippets import SECTIONS, Snippet, bm25_scores, document_url
from rag.errors import GeneratorError
from rag.models.generators import Generator
from rag.models.prompts import extraction_messages, json_value, rerank_messages
from rag.retrieval.retrievers import RankedDocument

EXTRACT_TOKENS = 256
RERANK_TOKENS = 120
MIN_WORDS = 3


@dataclass(frozen=True, slots=True)
class StageOutput:
    """Snippets produced by a stage, with the warnings that explain any fallback."""

    snippets: tuple[Snippet, ...]
    warnings: tuple[str, ...] = ()


def normalised(text: str) -> tuple[str, list[int]]:
    """Return the matching form of ``text`` and, per character of it, the original index.

    >>> normalised("Café  au\\nLait")
    ('cafe au lait', [0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12])
    """
    chars: list[str] = []
    origin: list[int] = []
    last_space = True
    for index, char in enumerate(text):
        for part in unicodedata.normalize("NFKD", char):
            if unicodedata.combining(part):
                continue
            for c in part.lower():
                if c.isspace():
                    if last_space:
                        continue
                    c = " "
                last_space = c == " "
                chars.append(c)
                origin.append(index)
    while chars and chars[-1] == " ":
        chars.pop()
        origin.pop()
    return "".join(chars), origin


def locate(sentence: str, section: str) -> tuple[int, int] | None:
    """Return ``(begin, end)`` (end inclusive) of ``sentence`` in ``section``, or ``None``.

    >>> section = "Une étude. Le café  aide."
    >>> begin, end = locate("le cafe aide", section)
    >>> section[begin:end + 1]
    'Le café  aide'
    """
    needle, _ = normalised(sentence.strip())
    haystack, origin = normalised(section)
    if len(needle.split()) < MIN_WORDS:
        return None
    found = haystack.find(needle)
    if found < 0:
        return None
    end = origin[found + len(needle) - 1]
    # keep combining marks that follow the last matched character (written decomposed)
    while end + 1 < len(section) and unicodedata.combining(section[end + 1]):
        end += 1
    return origin[found], end


def _article_snippets(
    document: RankedDocument, sentences: Sequence[str]
) -> tuple[list[Snippet], int]:
    """Map the model's sentences onto the article; return the snippets and how many failed."""
    found: list[Snippet] = []
    missed = 0
    sections = (document.article.title, document.article.abstract)
    for sentence in sentences:
        for index, section in enumerate(sections):
            span = locate(sentence, section)
            if span is not None:
                begin, end = span
                found.append(
                    Snippet(
                        document=document_url(document.pmid),
                        text=section[begin : end + 1],
                        begin_section=SECTIONS[index],
                        end_section=SECTIONS[index],
                        offset_begin=begin,
                        offset_end=end,
                        pmid=document.pmid,
                        document_rank=document.rank,
                        score=0.0,
                        lexical_score=0.0,
                    )
                )
                break
        else:
            missed += 1
    return found, missed


def _sentences_of(reply: str) -> list[str] | None:
    value = json_value(reply)
    if isinstance(value, dict):
        value = value.get("snippets")
    if not isinstance(value, list):
        return None
    return [s for s in value if isinstance(s, str) and s.strip()]


def llm_snippets(
    question: str,
    documents: Sequence[RankedDocument],
    generator: Generator,
    *,
    tokenize: Callable[[str], list[str]],
    workers: int = 10,
    max_tokens: int = EXTRACT_TOKENS,
) -> StageOutput:
    """Ask the model for the relevant sentences of each document and keep the verbatim ones.

    Args:
        question: the question.
        documents: the documents to read (the pipeline passes the top few).
        generator: a generator with a language model.
        tokenize: the index analyzer, to give the snippets a lexical score for reranking.
        workers: how many articles are sent to the model at the same time (bounded pool; a
            local model still runs one call at a time).
        max_tokens: the token budget of one extraction call.

    Returns:
        The snippets in document order with lexical scores, and warnings for failed articles
        and dropped sentences (no snippets at all if every article failed).
    """

    def ask(document: RankedDocument) -> tuple[list[Snippet], int, str | None]:
        article = document.article
        try:
            reply = generator.chat(
                extraction_messages(question, article.title, article.abstract),
                max_tokens=max_tokens,
            )
        except GeneratorError as exc:
            return [], 0, str(exc)
        sentences = _sentences_of(reply)
        if sentences is None:
            return [], 0, 'the reply was not JSON {"snippets": [...]}'
        found, missed = _article_snippets(document, sentences)
        return found, missed, None

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(ask, documents))
    snippets = [s for found, _, _ in results for s in found]
    failures = [
        (d.pmid, error) for d, (_, _, error) in zip(documents, results, strict=True) if error
    ]
    missed = sum(m for _, m, _ in results)
    warnings = []
    if failures:
        pmid, error = failures[0]
        warnings.append(
            f"snippet extraction: the model's reply for {len(failures)} of {len(documents)} "
            f"articles could not be used (first, {pmid}: {error})"
        )
    if missed:
        warnings.append(
            f"snippet extraction: {missed} sentence(s) the model returned do not occur verbatim "
            "in their article and were dropped"
        )
    return StageOutput(_scored(question, _unique(snippets), tokenize), tuple(warnings))


def _unique(snippets: list[Snippet]) -> list[Snippet]:
    seen: set[tuple[str, str, int, int]] = set()
    out = []
    for s in snippets:
        key = (s.pmid, s.begin_section, s.offset_begin, s.offset_end)
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


def _scored(
    question: str, snippets: list[Snippet], tokenize: Callable[[str], list[str]]
) -> tuple[Snippet, ...]:
    raw = bm25_scores(tokenize(question), [tokenize(s.text) for s in snippets])
    best = max(raw, default=0.0)
    return tuple(
        replace(
            s,
            score=value / best if best > 0 else 0.0,
            lexical_score=value / best if best > 0 else 0.0,
        )
        for s, value in zip(snippets, raw, strict=True)
    )


def score_rerank(snippets: Sequence[Snippet], limit: int) -> StageOutput:
    """Order snippets by score (ties keep their order) and keep the best ``limit``."""
    ordered = sorted(snippets, key=lambda s: -s.score)
    return StageOutput(tuple(ordered[:limit]))


def llm_rerank(
    question: str, snippets: Sequence[Snippet], generator: Generator, limit: int
) -> StageOutput:
    """Let the model order the snippets; fall back to the score order on any failure.

    Snippets the model ranks come first, in its order; the others follow by score.
    """
    by_score = score_rerank(snippets, len(snippets)).snippets
    if len(by_score) <= 1:
        return StageOutput(by_score[:limit])
    try:
        reply = generator.chat(
            rerank_messages(question, [s.text for s in by_score]), max_tokens=RERANK_TOKENS
        )
    except GeneratorError as exc:
        return _score_fallback(by_score, limit, f"the model did not answer ({exc})")
    value = json_value(reply)
    if isinstance(value, dict):
        value = value.get("ranking")
    if not isinstance(value, list):
        return _score_fallback(by_score, limit, 'the reply was not JSON {"ranking": [...]}')
    order = list(
        dict.fromkeys(
            i
            for i in value
            if isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(by_score)
        )
    )
    if not order:
        return _score_fallback(by_score, limit, "the reply named no snippet number that exists")
    rest = [i for i in range(len(by_score)) if i not in set(order)]
    return StageOutput(tuple(by_score[i] for i in order + rest)[:limit])


def _score_fallback(snippets: tuple[Snippet, ...], limit: int, reason: str) -> StageOutput:
    return StageOutput(snippets[:limit], (f"reranking: {reason}; kept the lexical score order",))

"""Retrieval behind a small ``Retriever`` protocol, with the documented fallback chain.

``WhooshRetriever`` runs queries against a ``LiteratureIndex``. When a query finds nothing it
tries, in order: (1) the broadened query (phrases split into words, ``+``/``-``, ``NOT`` and
AND-like operators dropped, every group OR-ed), (2) an OR of the content words of the question
(or of the query when no question is given). Steps that would repeat an earlier query are
skipped. ``SearchResult`` says which query ran and which step produced it. A malformed query
raises ``QuerySyntaxError``; it is never silently replaced by a fallback.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from rag.corpus.article import Article
from rag.retrieval.index import QUERY_FIELDS, STOP_WORD_LIST, Hit, IndexLabel, LiteratureIndex
from rag.retrieval.query import broadened, check_query, content_words

DEFAULT_K = 50


class Fallback(StrEnum):
    """Which step of the fallback chain produced the documents."""

    NONE = "none"  # the query as given
    BROADENED = "broadened"
    CONTENT_WORDS = "content-words"


@dataclass(frozen=True, slots=True)
class RankedDocument:
    """One retrieved article with its 1-based rank and engine score (BM25F for Whoosh)."""

    rank: int
    score: float
    article: Article

    @property
    def pmid(self) -> str:
        """Return the article's PMID (or IRI)."""
        return self.article.pmid


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The outcome of a search: what was asked, what ran, and what it found."""

    query: str
    query_run: str
    fallback: Fallback
    documents: tuple[RankedDocument, ...]
    # every query tried, in order, the last one being ``query_run``
    attempts: tuple[str, ...]

    @property
    def is_empty(self) -> bool:
        """Return whether even the last fallback found nothing."""
        return not self.documents


class Retriever(Protocol):
    """A search engine over the literature; Whoosh today, something faster tomorrow."""

    def search(
        self, query: str, k: int = DEFAULT_K, *, question: str | None = None
    ) -> SearchResult:
        """Return the top ``k`` documents for ``query`` (falling back when it finds nothing)."""
        ...

    def tokenize(self, text: str) -> list[str]:
        """Return the index terms of ``text`` (used to score snippets the same way)."""
        ...

    def label(self) -> IndexLabel | None:
        """Return which index this is (name, size, demo), or None when it has no name."""
        ...


def question_query(question: str, stop_words: Collection[str] = STOP_WORD_LIST) -> str:
    """Turn a natural-language question into a query: the OR of its content words.

    This is the identity "expansion" used when no language model rewrites the question; it can
    never be malformed because every syntax character is dropped.

    Args:
        question: the question as typed.
        stop_words: words to leave out (the index's stop words by default).

    Returns:
        The query, or ``""`` when the question has no content words.
    """
    return content_words(question, stop_words)


def search_with_fallback(
    run: Callable[[str, int], tuple[Hit, ...]],
    query: str,
    k: int,
    *,
    question: str | None = None,
    fields: Collection[str] = QUERY_FIELDS,
    stop_words: Collection[str] = STOP_WORD_LIST,
) -> SearchResult:
    """Run ``query`` and, if it finds nothing, the fallback chain (engine independent).

    Args:
        run: the engine's raw search, ``(query, k) -> hits``.
        query: the query in the query language.
        k: the number of documents wanted (at least 1).
        question: the natural-language question behind the query, for step (2).
        fields: the field names the query may use.
        stop_words: the engine's stop words, for step (2).

    Returns:
        The result of the first step that found something (or of the last step tried).

    Raises:
        QuerySyntaxError: when ``query`` itself is malformed.
        ValueError: when ``k`` is below 1.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    atoms = check_query(query, fields)
    steps = [
        (Fallback.NONE, query),
        (Fallback.BROADENED, broadened(atoms)),
        (Fallback.CONTENT_WORDS, content_words(question or query, stop_words)),
    ]
    attempts: list[str] = []
    hits: tuple[Hit, ...] = ()
    ran = Fallback.NONE
    for step, text in steps:
        if not text.strip() or text in attempts:
            continue
        attempts.append(text)
        ran, hits = step, run(text, k)
        if hits:
            break
    documents = tuple(
        RankedDocument(rank=rank, score=hit.score, article=hit.article)
        for rank, hit in enumerate(hits, start=1)
    )
    return SearchResult(query, attempts[-1], ran, documents, tuple(attempts))


class WhooshRetriever:
    """The ``Retriever`` over the Whoosh literature index."""

    def __init__(self, index: LiteratureIndex) -> None:
        self._index = index

    def search(
        self, query: str, k: int = DEFAULT_K, *, question: str | None = None
    ) -> SearchResult:
        """Return the top ``k`` documents by BM25F, with the fallback chain.

        Args:
            query: the query in the query language (``question_query`` makes one from a question).
            k: the number of documents wanted (at least 1).
            question: the natural-language question, used by the last fallback step.

        Returns:
            The documents in rank order and the query that produced them.

        Raises:
            QuerySyntaxError: when the query is malformed (with the position).
        """
        return search_with_fallback(self._index.search, query, k, question=question)

    def tokenize(self, text: str) -> list[str]:
        """Return the index terms of ``text``."""
        return self._index.tokenize(text)

    def label(self) -> IndexLabel:
        """Return the index's name, document count and whether it is the demo index."""
        return self._index.label()

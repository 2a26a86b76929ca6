"""Query expansion: turn a question into a search query, with a language model or without.

Without a language model the expansion is the identity query: the OR of the question's content words
(``rag.retrieval.retrievers.question_query``). With one, a few-shot prompt asks for a query wrapped
in ``##...##``; the reply is parsed defensively and checked with the index's query checker. When the
model fails (no reply, no markers, a query the parser rejects, a query far too long), the identity
query is used and ``Expansion.note`` says why. Never raises for a model's failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rag.errors import GeneratorError, QuerySyntaxError
from rag.models.generators import Generator
from rag.models.prompts import broaden_messages, expansion_messages, marked_query
from rag.retrieval.index import QUERY_FIELDS
from rag.retrieval.query import check_query
from rag.retrieval.retrievers import question_query

# Longest expanded query accepted from a model (longer ones are runaway generations).
MAX_QUERY_CHARS = 1000
MAX_TOKENS = 160


@dataclass(frozen=True, slots=True)
class Expansion:
    """The query to run and how it was made.

    ``source`` is ``identity`` (no model), ``model`` (the model's query) or ``fallback`` (the
    model failed and the identity query is used; ``note`` says why).
    """

    query: str
    source: str
    note: str = ""
    raw: str = ""  # the model's reply as written (empty without a model)


def default_check(query: str) -> None:
    """Check a query with the index's parser rules.

    Raises:
        QuerySyntaxError: when the query is malformed.
    """
    check_query(query, QUERY_FIELDS)


def identity_expansion(question: str) -> Expansion:
    """Return the identity expansion: the OR of the question's content words."""
    return Expansion(question_query(question), "identity")


def expand_query(
    question: str,
    generator: Generator,
    *,
    check: Callable[[str], None] = default_check,
    shots: int = 3,
) -> Expansion:
    """Expand ``question`` with the generator's model, falling back to the identity query.

    Args:
        question: the question as asked.
        generator: the generator (without a model the identity query is returned).
        check: the retriever's query checker; raises ``QuerySyntaxError`` on a bad query.
        shots: how many few-shot examples to show.

    Returns:
        The expansion; ``source`` tells whether the model's query is used.
    """
    if not generator.uses_llm:
        return identity_expansion(question)
    try:
        raw = generator.chat(expansion_messages(question, shots), max_tokens=MAX_TOKENS)
    except GeneratorError as exc:
        return _fallback(question, f"the model did not answer ({exc})", "")
    query = marked_query(raw)
    if query is None:
        return _fallback(question, "the model's reply had no ##query## marker", raw)
    if len(query) > MAX_QUERY_CHARS:
        return _fallback(question, f"the model's query is over {MAX_QUERY_CHARS} characters", raw)
    try:
        check(query)
    except QuerySyntaxError as exc:
        return _fallback(
            question, f"the model's query {query!r:.120} is malformed: {exc.detail}", raw
        )
    return Expansion(query, "model", raw=raw)


def _fallback(question: str, reason: str, raw: str) -> Expansion:
    return Expansion(
        question_query(question),
        "fallback",
        f"query expansion failed: {reason}; searched for the question's words instead",
        raw,
    )


def broaden_query(
    question: str,
    query: str,
    generator: Generator,
    *,
    check: Callable[[str], None] = default_check,
) -> Expansion | None:
    """Ask the model for a broader query after ``query`` found nothing (BioRAGent's fallback).

    Returns:
        The broader query (``source`` ``broadened``), or ``None`` when there is no model or its
        reply is unusable (no marker, malformed, too long, or the same query again).
    """
    if not generator.uses_llm:
        return None
    try:
        raw = generator.chat(broaden_messages(question, query), max_tokens=MAX_TOKENS)
    except GeneratorError:
        return None
    broader = marked_query(raw)
    if broader is None or broader == query or len(broader) > MAX_QUERY_CHARS:
        return None
    try:
        check(broader)
    except QuerySyntaxError:
        return None
    return Expansion(broader, "broadened", raw=raw)

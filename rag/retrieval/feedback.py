"""Query expansion without a model: pseudo-relevance feedback (RM3) over the literature index.

The question's words are searched once; the best ``documents`` (3) hits are taken as relevant
and their words weighed as RM3 does: a word's weight is the sum, over those documents, of its
share of the document's words times the document's share of the retrieval scores. The
``terms`` (5) heaviest words that the question does not already have (no stop words, no
generic words such as "patients" or "study", no numbers) are added to the question's words
with boosts (``word^0.21``: ``weight`` (0.3) times the word's weight over the heaviest one's),
so the query stays in the query language: the ask page shows it in the editable box and
searches it again as typed. Scored over the compiled postings like any query of words.

Measured on and off in ``bench/rag.py`` (docs/rag-retrieval.md, *Query expansion*).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rag.retrieval.expansion import Expansion
from rag.retrieval.retrievers import Retriever, question_query
from rag.text.phrases import CLASS_NOUNS, FUNCTION_WORDS, GENERIC, LEADING, VERBS, words

_SKIP = FUNCTION_WORDS | GENERIC | LEADING | VERBS | CLASS_NOUNS


@dataclass(frozen=True, slots=True)
class Feedback:
    """How the feedback expansion is made (``rag.query_feedback_*`` settings)."""

    documents: int = 3
    terms: int = 5
    weight: float = 0.3


def feedback_expansion(
    question: str, retriever: Retriever, settings: Feedback = Feedback()
) -> Expansion:
    """Expand the question's words with the heaviest words of its best hits (RM3).

    Returns the identity expansion when the question finds nothing or no word qualifies.
    """
    base = question_query(question)
    if not base:
        return Expansion(base, "identity")
    found = retriever.search(base, settings.documents, question=question)
    hits = found.documents[: settings.documents]
    total = sum(max(d.score, 0.0) for d in hits)
    if not hits or total <= 0:
        return Expansion(base, "identity")
    asked = set(retriever.tokenize(question))
    weights: dict[str, float] = {}
    surfaces: dict[str, Counter[str]] = {}
    for hit in hits:
        tokens = [w.lower for w in words(f"{hit.article.title} {hit.article.abstract}")]
        kept = [t for t in tokens if _eligible(t)]
        if not kept:
            continue
        share = max(hit.score, 0.0) / total
        for token, count in Counter(kept).items():
            stems = retriever.tokenize(token)
            if len(stems) != 1 or stems[0] in asked:
                continue
            weights[stems[0]] = weights.get(stems[0], 0.0) + share * count / len(tokens)
            surfaces.setdefault(stems[0], Counter())[token] += count
    chosen = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[: settings.terms]
    if not chosen:
        return Expansion(base, "identity")
    heaviest = chosen[0][1]
    added = " ".join(
        f"{surfaces[key].most_common(1)[0][0]}^{settings.weight * value / heaviest:.2f}"
        for key, value in chosen
    )
    return Expansion(f"{base} {added}", "feedback")


def _eligible(token: str) -> bool:
    """A word that may be added: alphabetic, three letters or more, not a listed common word."""
    return len(token) >= 3 and token.isalpha() and token not in _SKIP

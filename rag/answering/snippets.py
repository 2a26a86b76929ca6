"""Extract and rank BioASQ snippets from retrieved articles without a language model.

Every title and abstract is split into sentences (``rag.text.sentences``). Each sentence gets a
lexical score, BM25 (k1=1.2, b=0.75, Lucene idf) of the question's index terms over the set of
candidate sentences, divided by the best score so it lies in [0, 1]. With a ``DenseScorer``
the best ``pool`` sentences by that score are re-scored as
``(1 - dense_weight) * lexical + dense_weight * max(0, cosine)``. With a ``document_weight``
(``rag.snippet_document_weight``) the lexical score of a matching sentence becomes
``(1 - w) * lexical + w * document score / best document score``, so sentences of better-ranked
documents come first (the document ranking, fused with the dense vectors, is the stronger
signal: measured in docs/rag-retrieval.md). Sentences scoring 0 are
dropped; ties go to the better-ranked document, then the title, then the earlier sentence.
Deterministic for a given index and model.

Offsets follow the official BioASQ evaluator: ``offset_begin`` is the index of the first
character and ``offset_end`` the index of the last one (inclusive), counted in code points of
the stored title or abstract, so ``section[offset_begin:offset_end + 1] == text``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from rag.retrieval.retrievers import RankedDocument
from rag.text.sentences import sentence_spans

PUBMED_URL = "http://www.ncbi.nlm.nih.gov/pubmed/"
SECTIONS = ("title", "abstract")
K1, B = 1.2, 0.75


class SimilarityScorer(Protocol):
    """Scores texts against a query by meaning (``rag.models.dense.DenseScorer``)."""

    def similarities(self, query: str, texts: Sequence[str]) -> list[float]:
        """Return one cosine similarity in [-1, 1] per text."""
        ...


@dataclass(frozen=True, slots=True)
class Snippet:
    """A ranked snippet; the first six fields are those of ``evaluators.model.Snippet``."""

    document: str
    text: str
    begin_section: str
    end_section: str
    offset_begin: int
    offset_end: int  # inclusive, as BioASQ counts
    pmid: str
    document_rank: int
    score: float
    lexical_score: float
    dense_score: float | None = None


@dataclass(frozen=True, slots=True)
class _Candidate:
    document: RankedDocument
    section: int
    begin: int
    end: int  # exclusive
    text: str


def document_url(pmid: str) -> str:
    """Return the BioASQ document URL of a PMID (an IRI is returned unchanged).

    >>> document_url("12345")
    'http://www.ncbi.nlm.nih.gov/pubmed/12345'
    """
    return PUBMED_URL + pmid if pmid.isdigit() else pmid


def extract_snippets(
    question: str,
    documents: Sequence[RankedDocument],
    *,
    tokenize: Callable[[str], list[str]],
    limit: int = 10,
    dense: SimilarityScorer | None = None,
    dense_weight: float = 0.5,
    pool: int = 100,
    document_weight: float = 0.0,
) -> tuple[Snippet, ...]:
    """Return the best ``limit`` sentences of ``documents`` as snippets, best first.

    Args:
        question: the question (or query text) to score against.
        documents: retrieved documents in rank order.
        tokenize: the index's analyzer, so a sentence matches the way the index does.
        limit: how many snippets to return at most.
        dense: an optional semantic scorer (the packaged MiniLM model).
        dense_weight: the share of the dense score in the combined score.
        pool: how many lexically best sentences the dense scorer re-scores.
        document_weight: the share of the sentence's document score (divided by the best
            document's) in the lexical score, so sentences of better documents come first.

    Returns:
        The snippets, best first.
    """
    candidates = [
        _Candidate(doc, index, begin, end, section[begin:end])
        for doc in documents
        for index, section in enumerate((doc.article.title, doc.article.abstract))
        for begin, end in sentence_spans(section)
    ]
    lexical = _normalised(bm25_scores(tokenize(question), [tokenize(c.text) for c in candidates]))
    if document_weight > 0 and candidates:
        best = max(d.score for d in documents) or 1.0
        lexical = [
            (1 - document_weight) * value + document_weight * c.document.score / best
            if value > 0
            else 0.0
            for value, c in zip(lexical, candidates, strict=True)
        ]
    order = sorted(range(len(candidates)), key=lambda i: (-lexical[i], _tiebreak(candidates[i])))
    chosen: list[tuple[int, float, float | None]]
    if dense is None:
        chosen = [(i, lexical[i], None) for i in order]
    else:
        top = order[:pool]
        sims = dense.similarities(question, [candidates[i].text for i in top])
        chosen = [
            (i, (1 - dense_weight) * lexical[i] + dense_weight * max(0.0, sim), sim)
            for i, sim in zip(top, sims, strict=True)
        ]
        chosen.sort(key=lambda item: (-item[1], _tiebreak(candidates[item[0]])))
    return tuple(
        _snippet(candidates[i], score, lexical[i], sim)
        for i, score, sim in chosen[:limit]
        if score > 0
    )


def bm25_scores(query_terms: Sequence[str], sentences: Sequence[Sequence[str]]) -> list[float]:
    """Return the BM25 score of each tokenised sentence for the distinct query terms.

    ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` over the ``N`` sentences given, and
    ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))`` per term, with k1=1.2, b=0.75.

    >>> [round(s, 3) for s in bm25_scores(["x"], [["x", "y"], ["y"]])]
    [0.61, 0.0]
    """
    if not sentences:
        return []
    terms = set(query_terms)
    count = len(sentences)
    average = sum(len(s) for s in sentences) / count or 1.0
    frequency = Counter(term for s in sentences for term in set(s) & terms)
    idf = {t: math.log(1 + (count - frequency[t] + 0.5) / (frequency[t] + 0.5)) for t in terms}
    scores = []
    for sentence in sentences:
        tf = Counter(term for term in sentence if term in terms)
        norm = K1 * (1 - B + B * len(sentence) / average)
        scores.append(sum((idf[t] * n * (K1 + 1) / (n + norm) for t, n in tf.items()), 0.0))
    return scores


def bioasq_snippet(snippet: Snippet) -> dict[str, str | int]:
    """Return the snippet as a BioASQ JSON object (task b, phase A)."""
    return {
        "document": snippet.document,
        "text": snippet.text,
        "beginSection": snippet.begin_section,
        "endSection": snippet.end_section,
        "offsetInBeginSection": snippet.offset_begin,
        "offsetInEndSection": snippet.offset_end,
    }


def _normalised(scores: list[float]) -> list[float]:
    best = max(scores, default=0.0)
    return [s / best if best > 0 else 0.0 for s in scores]


def _tiebreak(candidate: _Candidate) -> tuple[int, int, int]:
    return (candidate.document.rank, candidate.section, candidate.begin)


def _snippet(candidate: _Candidate, score: float, lexical: float, sim: float | None) -> Snippet:
    section = SECTIONS[candidate.section]
    return Snippet(
        document=document_url(candidate.document.pmid),
        text=candidate.text,
        begin_section=section,
        end_section=section,
        offset_begin=candidate.begin,
        offset_end=candidate.end - 1,
        pmid=candidate.document.pmid,
        document_rank=candidate.document.rank,
        score=score,
        lexical_score=lexical,
        dense_score=sim,
    )

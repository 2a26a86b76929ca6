"""ROUGE-2 and ROUGE-SU4 for BioASQ ideal answers (recall, precision and F1).

Pure functions, no I/O. Tokenisation follows the ``rouge-score`` package: lowercase, every run of
characters other than ``a-z0-9`` is a separator, and tokens longer than three characters are
Porter-stemmed (``evaluators.bioasq.stemmer``). ROUGE-2 counts shared bigrams; ROUGE-SU4 counts
shared skip-bigrams (two tokens in order with at most four tokens between them) plus shared
unigrams, as ROUGE-1.5.5 does with ``-2 4 -u``. Counts are clipped (a gram shared twice needs to
occur twice on both sides). Several reference answers: each value is the maximum over them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from evaluators.bioasq.stemmer import stem

MAX_SKIP = 4  # tokens allowed between the two halves of a skip-bigram (ROUGE-S4)
_SEPARATORS = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True, slots=True)
class RougeScore:
    """ROUGE of one candidate against one reference."""

    recall: float
    precision: float
    f1: float


@dataclass(frozen=True, slots=True)
class IdealScores:
    """The four ROUGE values BioASQ reports for an ideal answer."""

    rouge2_recall: float
    rouge2_f1: float
    rougesu4_recall: float
    rougesu4_f1: float


def tokens(text: str, *, stemming: bool = True) -> tuple[str, ...]:
    """Split a text into ROUGE tokens.

    Args:
        text: any text.
        stemming: Porter-stem tokens longer than three characters.

    Returns:
        The tokens in order.

    >>> tokens("BRCA1 mutations (in 2 genes) were found.")
    ('brca1', 'mutat', 'in', '2', 'gene', 'were', 'found')
    """
    words = _SEPARATORS.sub(" ", text.lower()).split()
    if not stemming:
        return tuple(words)
    return tuple(stem(w) if len(w) > 3 else w for w in words)


def bigrams(words: Sequence[str]) -> Counter[tuple[str, ...]]:
    """Return the multiset of adjacent token pairs.

    >>> sorted(bigrams(["a", "b", "a", "b"]).items())
    [(('a', 'b'), 2), (('b', 'a'), 1)]
    """
    return Counter(tuple(words[i : i + 2]) for i in range(len(words) - 1))


def skip_bigrams_and_unigrams(
    words: Sequence[str], max_skip: int = MAX_SKIP
) -> Counter[tuple[str, ...]]:
    """Return ROUGE-SU's grams: every unigram and every in-order pair ``max_skip`` or less apart.

    >>> sorted(skip_bigrams_and_unigrams(["a", "b", "c"], max_skip=0))
    [('a',), ('a', 'b'), ('b',), ('b', 'c'), ('c',)]
    """
    grams: Counter[tuple[str, ...]] = Counter((w,) for w in words)
    for i, first in enumerate(words):
        for second in words[i + 1 : i + 2 + max_skip]:
            grams[(first, second)] += 1
    return grams


def _score(candidate: Counter[tuple[str, ...]], reference: Counter[tuple[str, ...]]) -> RougeScore:
    shared = sum((candidate & reference).values())
    recall = shared / max(sum(reference.values()), 1)
    precision = shared / max(sum(candidate.values()), 1)
    total = recall + precision
    return RougeScore(recall, precision, 2 * recall * precision / total if total else 0.0)


def rouge_2(candidate: str, reference: str, *, stemming: bool = True) -> RougeScore:
    """Return ROUGE-2 of a candidate against one reference.

    Recall = shared bigrams / reference bigrams, precision = shared / candidate bigrams,
    F1 = 2RP / (R + P); a side without bigrams (under two tokens) gives 0.

    Args:
        candidate: the system's ideal answer.
        reference: one gold ideal answer.
        stemming: Porter-stem tokens longer than three characters.

    Returns:
        Recall, precision and F1.

    >>> rouge_2("the cat sat on the mat", "the cat lay on the mat", stemming=False)
    RougeScore(recall=0.6, precision=0.6, f1=0.6)
    """
    return _score(
        bigrams(tokens(candidate, stemming=stemming)), bigrams(tokens(reference, stemming=stemming))
    )


def rouge_su4(candidate: str, reference: str, *, stemming: bool = True) -> RougeScore:
    """Return ROUGE-SU4 of a candidate against one reference.

    Grams are unigrams and skip-bigrams with at most four tokens in between; recall, precision
    and F1 are computed from clipped shared counts as for ROUGE-2. Empty texts give 0.

    Args:
        candidate: the system's ideal answer.
        reference: one gold ideal answer.
        stemming: Porter-stem tokens longer than three characters.

    Returns:
        Recall, precision and F1.

    >>> rouge_su4("a b", "a c", stemming=False)
    RougeScore(recall=0.3333333333333333, precision=0.3333333333333333, f1=0.3333333333333333)
    """
    return _score(
        skip_bigrams_and_unigrams(tokens(candidate, stemming=stemming)),
        skip_bigrams_and_unigrams(tokens(reference, stemming=stemming)),
    )


def ideal_scores(
    candidate: str, references: Sequence[str], *, stemming: bool = True
) -> IdealScores:
    """Score an ideal answer against every gold ideal answer and keep the best of each value.

    Each of the four values is the maximum over the references, taken separately.

    Args:
        candidate: the system's ideal answer.
        references: the gold ideal answers.
        stemming: Porter-stem tokens longer than three characters.

    Returns:
        ROUGE-2 and ROUGE-SU4 recall and F1; all 0 without references.

    >>> ideal_scores("a b c", ["a b x", "x a b c"], stemming=False).rouge2_recall
    0.6666666666666666
    """
    if not references:
        return IdealScores(0.0, 0.0, 0.0, 0.0)
    words = tokens(candidate, stemming=stemming)
    candidate_2, candidate_su4 = bigrams(words), skip_bigrams_and_unigrams(words)
    two = []
    su4 = []
    for reference in references:
        reference_words = tokens(reference, stemming=stemming)
        two.append(_score(candidate_2, bigrams(reference_words)))
        su4.append(_score(candidate_su4, skip_bigrams_and_unigrams(reference_words)))
    return IdealScores(
        max(s.recall for s in two),
        max(s.f1 for s in two),
        max(s.recall for s in su4),
        max(s.f1 for s in su4),
    )

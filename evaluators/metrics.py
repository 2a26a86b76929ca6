"""Precision, recall and F1: per question, micro, macro, GERBIL's "Macro F1 QALD" and the classic
QALD script's aggregation.

Pure arithmetic on counts; no matching, no I/O. Values are IEEE doubles computed in the same order
as GERBIL's Java code (sum per question in question order, then divide), so results agree with
GERBIL to the last digit. An undefined value (GERBIL's NaN) is ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Counts:
    """True positives, false positives and false negatives of one question (or a sum)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)


@dataclass(frozen=True, slots=True)
class PRF:
    """Precision, recall and F1."""

    precision: float
    recall: float
    f1: float


def prf(counts: Counts) -> PRF:
    """Return GERBIL's precision, recall and F1 of one count triple.

    P = tp/(tp+fp), R = tp/(tp+fn), F1 = 2PR/(P+R). Empty sets: nothing to find and nothing found
    (0, 0, 0) gives 1, 1, 1; any other triple with tp = 0 (including an empty answer to a
    non-empty gold set) gives 0, 0, 0.

    >>> prf(Counts(10, 0, 11))
    PRF(precision=1.0, recall=0.47619047619047616, f1=0.6451612903225806)
    >>> prf(Counts()), prf(Counts(0, 0, 3))
    (PRF(precision=1.0, recall=1.0, f1=1.0), PRF(precision=0.0, recall=0.0, f1=0.0))
    """
    if counts.tp == 0:
        if counts.fp == 0 and counts.fn == 0:
            return PRF(1.0, 1.0, 1.0)
        return PRF(0.0, 0.0, 0.0)
    precision = counts.tp / (counts.tp + counts.fp)
    recall = counts.tp / (counts.tp + counts.fn)
    return PRF(precision, recall, (2 * precision * recall) / (precision + recall))


def qald_prf(counts: Counts) -> PRF:
    """Return the per-question values behind GERBIL's "Macro F1 QALD".

    As ``prf``, except that a system that answers nothing to a non-empty gold set (tp = fp = 0,
    fn > 0) gets P = 1, R = 0, F1 = 0: "I don't know" is not imprecise.

    >>> qald_prf(Counts(0, 0, 3))
    PRF(precision=1.0, recall=0.0, f1=0.0)
    """
    if counts.tp == 0 and counts.fp == 0 and counts.fn > 0:
        return PRF(1.0, 0.0, 0.0)
    return prf(counts)


def micro(counts: Iterable[Counts]) -> PRF:
    """Return micro precision, recall and F1: ``prf`` of the summed counts.

    No questions, or only empty ones, sum to (0, 0, 0) and give 1, 1, 1 as in GERBIL.

    >>> micro([Counts(1, 0, 0), Counts(0, 2, 3)])
    PRF(precision=0.3333333333333333, recall=0.25, f1=0.28571428571428575)
    """
    total = Counts()
    for c in counts:
        total = total + c
    return prf(total)


def mean(values: Sequence[float]) -> float | None:
    """Return the arithmetic mean, summed in order as Java does (``None`` for no values).

    >>> mean([1.0, 0.5]), mean([])
    (0.75, None)
    """
    if not values:
        return None
    total = 0.0
    for v in values:
        total += v
    return total / len(values)


def macro(scores: Sequence[PRF]) -> PRF | None:
    """Return macro precision, recall and F1: the mean of each over the questions.

    Macro F1 is the mean of per-question F1, not the F1 of macro P and R (GERBIL, issue #87).
    Undefined (``None``) without questions.

    >>> macro([PRF(1.0, 0.25, 0.4), PRF(0.0, 0.0, 0.0)])
    PRF(precision=0.5, recall=0.125, f1=0.2)
    """
    p = mean([s.precision for s in scores])
    r = mean([s.recall for s in scores])
    f = mean([s.f1 for s in scores])
    if p is None or r is None or f is None:
        return None
    return PRF(p, r, f)


def harmonic_mean(precision: float, recall: float) -> float | None:
    """Return 2PR/(P+R), or ``None`` when P + R = 0 (where Java divides to NaN).

    >>> harmonic_mean(1.0, 0.5), harmonic_mean(0.0, 0.0)
    (0.6666666666666666, None)
    """
    if precision + recall == 0:
        return None
    return 2 * precision * recall / (precision + recall)


def macro_f1_qald(counts: Sequence[Counts]) -> float | None:
    """Return GERBIL's "Macro F1 QALD": the harmonic mean of the means of ``qald_prf`` P and R.

    ``None`` without questions or when mean P + mean R = 0 (GERBIL shows NaN as "?").

    >>> macro_f1_qald([Counts(1, 0, 0), Counts(0, 0, 3)])
    0.6666666666666666
    >>> macro_f1_qald([Counts(0, 2, 0)]) is None
    True
    """
    scores = [qald_prf(c) for c in counts]
    p = mean([s.precision for s in scores])
    r = mean([s.recall for s in scores])
    if p is None or r is None:
        return None
    return harmonic_mean(p, r)


@dataclass(frozen=True, slots=True)
class ClassicScore:
    """One question under the classic QALD script: P, R and whether the submission had it."""

    precision: float
    recall: float
    processed: bool

    @property
    def f1(self) -> float:
        """Return the per-question F1 the script prints (0 when P + R = 0)."""
        return harmonic_mean(self.precision, self.recall) or 0.0


def classic_score(gold: int, system: int, correct: int, *, answered: bool) -> ClassicScore:
    """Return the classic QALD script's precision and recall of one question.

    Gold empty: an empty answer gives P = R = 1, a non-empty one P = R = 0. Gold non-empty and an
    empty answer: P = 1, R = 0. Otherwise P = correct/|system|, R = correct/|gold|. A question the
    submission does not contain gets P = R = 0 and is not processed.

    Args:
        gold: the number of distinct gold values.
        system: the number of distinct system values.
        correct: how many of them are equal.
        answered: whether the submission contains the question.

    Returns:
        The score.

    >>> classic_score(4, 0, 0, answered=True)
    ClassicScore(precision=1.0, recall=0.0, processed=True)
    """
    if not answered:
        return ClassicScore(0.0, 0.0, False)
    if gold == 0:
        return ClassicScore(1.0, 1.0, True) if system == 0 else ClassicScore(0.0, 0.0, True)
    if system == 0:
        return ClassicScore(1.0, 0.0, True)
    return ClassicScore(correct / system, correct / gold, True)


@dataclass(frozen=True, slots=True)
class ClassicSummary:
    """The classic QALD script's aggregate: macro values over processed and over all questions."""

    processed: int
    processed_precision: float | None
    processed_recall: float | None
    processed_f1: float | None
    global_precision: float | None
    global_recall: float | None
    global_f1: float | None


def classic_summary(scores: Sequence[ClassicScore]) -> ClassicSummary:
    """Aggregate classic per-question scores; each F1 is the harmonic mean of the macro P and R.

    Means are over the processed questions and, separately, over all questions ("global").
    Undefined values (no questions, or P + R = 0) are ``None``.

    >>> s = classic_summary([ClassicScore(1.0, 0.5, True), ClassicScore(0.0, 0.0, False)])
    >>> s.processed, s.processed_f1, s.global_precision
    (1, 0.6666666666666666, 0.5)
    """
    done = [s for s in scores if s.processed]

    def f1(p: float | None, r: float | None) -> float | None:
        return None if p is None or r is None else harmonic_mean(p, r)

    pp = mean([s.precision for s in done])
    pr = mean([s.recall for s in done])
    gp = mean([s.precision for s in scores])
    gr = mean([s.recall for s in scores])
    return ClassicSummary(len(done), pp, pr, f1(pp, pr), gp, gr, f1(gp, gr))

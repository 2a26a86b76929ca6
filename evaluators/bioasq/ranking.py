"""BioASQ task-b ranked-list measures: documents and concepts per question, MAP and GMAP.

Pure functions that follow the official evaluator (BioASQ/Evaluation-Measures, ``EvaluatorTask1b``)
including its quirks; snippets are in ``evaluators.bioasq.snippets`` and
``evaluators.bioasq.scoring`` aggregates. Nothing here reads files, logs or mutates its arguments:
the official code changes its input lists while scoring, so every function works on its own copies.

The ``version`` argument is the evaluator's ``-e`` flag (2, 3, 5, 8 or 9); here it only changes
the divisor of average precision (see ``ap_divisor``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

VERSIONS = (2, 3, 5, 8, 9)
EPSILON = 1e-5  # added to each AP before the logarithm of GMAP


@dataclass(frozen=True, slots=True)
class RankedScores:
    """Per-question scores of a ranked list (documents, concepts or snippets).

    ``average_precision`` is ``None`` where the official evaluator computes 0/0 (NaN): snippet
    AP of a question without gold snippets under versions 2, 8 and 9.
    """

    precision: float
    recall: float
    f1: float
    average_precision: float | None


def ap_divisor(version: int, gold_size: int) -> int:
    """Return what the sum of precisions is divided by to give average precision.

    Version 2 divides by the number of gold items, versions 3 and 5 by 10, and versions 8 and 9
    by ``min(10, |gold|)`` (the "BioASQ modification").

    Args:
        version: the official evaluator's version flag.
        gold_size: the number of gold items (after de-duplication or merging).

    Returns:
        The divisor; 0 when the gold list is empty under versions 2, 8 and 9.

    >>> ap_divisor(2, 12), ap_divisor(5, 3), ap_divisor(8, 3), ap_divisor(9, 12)
    (12, 10, 3, 10)
    """
    if version == 2:
        return gold_size
    if version in (3, 5):
        return 10
    return min(10, gold_size)


def unique(items: Iterable[str]) -> tuple[str, ...]:
    """Return ``items`` without repetitions, keeping each first occurrence (official parsing)."""
    return tuple(dict.fromkeys(items))


def f1(precision: float, recall: float) -> float:
    """Return 2PR / (P + R), or 0 when P or R is 0 (the official rule).

    >>> f1(0.5, 1.0) == 2 / 3
    True
    """
    total = precision + recall
    return 2 * precision * recall / total if precision and recall and total else 0.0


def list_scores(gold: Sequence[str], ranked: Sequence[str], version: int) -> RankedScores:
    """Score a ranked list of documents or concepts against the gold list.

    P = |R ∩ G| / |R|, R = |R ∩ G| / |G|, F1 = 2PR / (P + R);
    AP = Σ_r P@r · rel(r) / ``ap_divisor``. Both lists are de-duplicated first. An empty
    submission scores 0 everywhere; so does AP when no submitted item is relevant (which also
    covers an empty gold list).

    Args:
        gold: the gold items (full URLs, compared as exact strings).
        ranked: the submitted items in rank order (not truncated to 10).
        version: the official evaluator's version flag.

    Returns:
        Precision, recall, F1 and average precision of the question.

    >>> s = list_scores(["d1", "d2", "d3"], ["d1", "x", "d2", "y", "d3"], 8)
    >>> round(s.precision, 6), s.recall, round(s.average_precision or 0, 6)
    (0.6, 1.0, 0.755556)
    """
    gold_items = unique(gold)
    submitted = unique(ranked)
    if not submitted:
        return RankedScores(0.0, 0.0, 0.0, 0.0)
    gold_set = set(gold_items)
    hits = 0
    precision_sum = 0.0
    for rank, item in enumerate(submitted, start=1):
        if item in gold_set:
            hits += 1
            precision_sum += hits / rank
    precision = hits / len(submitted)
    recall = hits / len(gold_items) if gold_items else 0.0
    ap = precision_sum / ap_divisor(version, len(gold_items)) if hits else 0.0
    return RankedScores(precision, recall, f1(precision, recall), ap)


def mean_average_precision(aps: Sequence[float | None]) -> float:
    """Return the arithmetic mean of APs, an undefined AP counting as 0 (official).

    >>> mean_average_precision([0.5, None, 1.0])
    0.5
    """
    return sum(a or 0.0 for a in aps) / len(aps) if aps else 0.0


def gmap(aps: Sequence[float | None], *, snippets: bool = False) -> float:
    """Return exp(mean(ln(AP + ε))), ε = 1e-5, as the official evaluator computes it.

    For documents and concepts an undefined AP counts as 0 (ln ε). For snippets
    (``snippets=True``) an undefined AP adds nothing to the sum of logarithms (as if AP were
    1 - ε) and a sum that is exactly 0 gives 0.

    Args:
        aps: the per-question average precisions.
        snippets: apply the snippet rules.

    Returns:
        The geometric mean; 0 for an empty list.

    >>> round(gmap([1.0, 0.0]), 6)
    0.003162
    """
    if not aps:
        return 0.0
    logs = 0.0
    for a in aps:
        if a is not None:
            logs += math.log(a + EPSILON)
        elif not snippets:
            logs += math.log(EPSILON)
    if snippets and logs == 0.0:
        return 0.0
    return math.exp(logs / len(aps))

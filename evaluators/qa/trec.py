"""trec_eval's set measures and nDCG over flat result sets, and the two means the client uses.

The TEXT2SPARQL client scores each question with pytrec_eval 0.5 (trec_eval 9): the reference
result set is the qrels (``{item: relevance}``), the system's the run (``{item: score}``).
Written from trec_eval's definitions, to the same floating-point operations:

* ``set_P`` = rel_ret / ret (0 when nothing is retrieved), ``set_recall`` = rel_ret / rel
  (0 when nothing is relevant), ``set_F`` = (1 + 1) P R / (1 P + R) (0 when rel_ret = 0);
  relevant means relevance > 0, retrieved is every item of the run whatever its score;
* ``ndcg``: the run ranked by score, ties by item string descending (trec_eval's rule), gains
  the relevances, DCG = Σ gain_i / log2(i + 1) over ranks i = 1, 2, …, divided by the DCG of the
  relevances sorted best first (0 when that is 0);
* the client averages a measure with numpy's ``mean`` (pairwise summation) and the combined
  headline with ``statistics.fmean`` (an exactly rounded sum): ``numpy_mean`` and
  ``exact_mean``.

Pure functions of their arguments.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class SetMeasures:
    """trec_eval's set precision, recall and F1 of one question."""

    precision: float
    recall: float
    f1: float


def set_measures(qrels: Mapping[str, int], run: Mapping[str, float]) -> SetMeasures:
    """Return ``set_P``, ``set_recall`` and ``set_F`` of one question.

    >>> set_measures({"a": 1, "b": 1, "c": 1}, {"a": 1, "x": 1})
    SetMeasures(precision=0.5, recall=0.3333333333333333, f1=0.4)
    >>> set_measures({"true": 1}, {"true": 0}), set_measures({}, {"a": 1}).f1
    (SetMeasures(precision=1.0, recall=1.0, f1=1.0), 0.0)
    """
    relevant = {item for item, level in qrels.items() if level > 0}
    retrieved = len(run)
    rel_ret = sum(1 for item in run if item in relevant)
    precision = rel_ret / retrieved if retrieved else 0.0
    recall = rel_ret / len(relevant) if relevant else 0.0
    beta = 1.0
    f1 = (beta + 1.0) * precision * recall / (beta * precision + recall) if rel_ret else 0.0
    return SetMeasures(precision, recall, f1)


def trec_ranking(run: Mapping[str, float]) -> list[str]:
    """Return the run's items in trec_eval's order: score descending, then item descending.

    >>> trec_ranking({"a": 1, "x": 1, "0": 1})
    ['x', 'a', '0']
    """
    return sorted(run, key=lambda item: (run[item], item), reverse=True)


def ndcg(qrels: Mapping[str, int], ranking: Sequence[str]) -> float:
    """Return trec_eval's nDCG of ``ranking`` (items, best first) against ``qrels``.

    >>> round(ndcg({"a": 1, "b": 1, "c": 1}, ["x", "a"]), 5)
    0.29608
    >>> round(ndcg({"a": 1, "b": 1, "c": 1}, ["a", "0"]), 5), ndcg({"true": 0}, ["true"])
    (0.46928, 0.0)
    """
    ideal = sorted((level for level in qrels.values() if level > 0), reverse=True)
    results_dcg = 0.0
    for i, item in enumerate(ranking):
        gain = qrels.get(item, 0)
        if gain > 0:
            results_dcg += gain / math.log2(i + 2)
    ideal_dcg = 0.0
    for i, gain in enumerate(ideal):
        ideal_dcg += gain / math.log2(i + 2)
    return results_dcg / ideal_dcg if ideal_dcg > 0.0 else 0.0


def numpy_mean(values: Sequence[float]) -> float:
    """Return the mean as pytrec_eval aggregates a measure (numpy's pairwise summation).

    >>> numpy_mean([0.1] * 10) == sum([0.1] * 10) / 10
    False
    """
    return float(np.mean(np.asarray(values, dtype=np.float64)))


def exact_mean(values: Sequence[float]) -> float:
    """Return the mean as ``statistics.fmean`` computes it (the client's combined headline).

    >>> exact_mean([0.1] * 10)
    0.1
    """
    return statistics.fmean(values)

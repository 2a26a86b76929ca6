"""Uncertainty of macro measures: bootstrap confidence intervals and a paired randomisation test.

Pure and repeatable: every random draw comes from a ``random.Random`` seeded by the caller, so the
same inputs and seed give the same numbers on every machine.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from evaluators.errors import EvaluationError
from evaluators.results import EvaluationResult


@dataclass(frozen=True, slots=True)
class Interval:
    """A confidence interval of a mean."""

    low: float
    high: float
    confidence: float


def _quantile(ordered: Sequence[float], q: float) -> float:
    # linear interpolation between closest ranks (the default of numpy and R type 7)
    position = (len(ordered) - 1) * q
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


# Bootstrap resamples when nobody says otherwise (``evaluation.bootstrap_samples``).
DEFAULT_BOOTSTRAP_SAMPLES = 1000


def bootstrap_interval(
    values: Sequence[float],
    *,
    samples: int = DEFAULT_BOOTSTRAP_SAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> Interval | None:
    """Return the percentile-bootstrap confidence interval of the mean of ``values``.

    Each of ``samples`` resamples draws ``len(values)`` values with replacement; the interval is
    bounded by the (1 - confidence)/2 and (1 + confidence)/2 quantiles of the resampled means.

    Args:
        values: per-question scores (for example F1).
        samples: number of bootstrap resamples.
        seed: the random seed.
        confidence: the coverage, between 0 and 1.

    Returns:
        The interval, or ``None`` without values.

    >>> bootstrap_interval([1.0, 1.0, 1.0])
    Interval(low=1.0, high=1.0, confidence=0.95)
    """
    if not values or samples < 1:
        return None
    rng = random.Random(seed)  # noqa: S311 -- statistics, not secrets; seeded for repeatability
    n = len(values)
    means = sorted(math.fsum(rng.choices(values, k=n)) / n for _ in range(samples))
    tail = (1 - confidence) / 2
    return Interval(_quantile(means, tail), _quantile(means, 1 - tail), confidence)


@dataclass(frozen=True, slots=True)
class RandomisationTest:
    """A paired approximate-randomisation test of the difference of two means."""

    difference: float  # mean(a) - mean(b)
    p_value: float
    iterations: int


def approximate_randomisation(
    a: Sequence[float], b: Sequence[float], *, iterations: int = 10_000, seed: int = 0
) -> RandomisationTest:
    """Test whether two systems' per-question scores differ (two-sided, paired).

    Each iteration swaps the two systems' scores of every question with probability 1/2; the
    p-value is (r + 1) / (iterations + 1), where r counts iterations whose absolute mean
    difference is at least the observed one.

    Args:
        a: per-question scores of the first run.
        b: per-question scores of the second run, in the same question order.
        iterations: number of random relabellings.
        seed: the random seed.

    Returns:
        The observed difference and its p-value.

    Raises:
        EvaluationError: if the two sequences differ in length or are empty.

    >>> approximate_randomisation([1.0, 1.0], [1.0, 1.0]).p_value
    1.0
    """
    if len(a) != len(b) or not a:
        raise EvaluationError(
            f"A paired test needs two non-empty score lists of equal length, got {len(a)} and "
            f"{len(b)}; evaluate both runs on the same questions"
        )
    n = len(a)
    deltas = [x - y for x, y in zip(a, b, strict=True)]
    observed = abs(math.fsum(deltas))
    rng = random.Random(seed)  # noqa: S311 -- statistics, not secrets; seeded for repeatability
    at_least = 0
    for _ in range(iterations):
        bits = rng.getrandbits(n)
        total = math.fsum(-d if (bits >> i) & 1 else d for i, d in enumerate(deltas))
        # a tolerance keeps ties (identical sums reached in another order) counted as ties
        if abs(total) >= observed - 1e-12:
            at_least += 1
    return RandomisationTest(math.fsum(deltas) / n, (at_least + 1) / (iterations + 1), iterations)


def compare_runs(
    first: EvaluationResult,
    second: EvaluationResult,
    *,
    experiment_type: str = "QA",
    measure: str = "f1",
    iterations: int = 10_000,
    seed: int = 0,
) -> RandomisationTest:
    """Test two evaluations of the same dataset on one per-question measure (paired by id).

    Raises:
        EvaluationError: if an experiment type is missing or the question ids differ.
    """
    scores = []
    for run in (first.get(experiment_type), second.get(experiment_type)):
        if run is None:
            raise EvaluationError(f"Both runs need {experiment_type} results to be compared")
        scores.append({q.question_id: q.value(measure) or 0.0 for q in run.per_question})
    if set(scores[0]) != set(scores[1]):
        differing = sorted(set(scores[0]) ^ set(scores[1]))[:5]
        raise EvaluationError(
            f"The runs cover different questions (for example {differing}); compare runs of the "
            "same dataset version and language"
        )
    ids = sorted(scores[0])
    return approximate_randomisation(
        [scores[0][i] for i in ids], [scores[1][i] for i in ids], iterations=iterations, seed=seed
    )

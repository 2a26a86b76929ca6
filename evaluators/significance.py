"""Uncertainty of macro measures: bootstrap confidence intervals and a paired randomisation test.

Pure and repeatable: every random draw comes from a ``random.Random`` seeded by the caller, so the
same inputs and seed give the same numbers on every machine.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from evaluators import defaults
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
DEFAULT_BOOTSTRAP_SAMPLES = defaults.BOOTSTRAP_SAMPLES


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


def bootstrap_of_means(
    columns: Sequence[Sequence[float]],
    combine: Callable[[Sequence[float]], float | None],
    *,
    samples: int = DEFAULT_BOOTSTRAP_SAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> Interval | None:
    """Return the percentile-bootstrap interval of a statistic of per-question means.

    Each resample draws the questions (rows of ``columns``, one column per per-question value)
    with replacement, takes every column's mean over the drawn rows and ``combine``s them, as
    Macro F1 QALD combines mean precision and recall (an undefined combination counts 0). With
    one column and ``combine`` picking it, this is ``bootstrap_interval``'s interval of a mean.

    >>> bootstrap_of_means([[1.0, 1.0], [0.5, 0.5]], lambda m: m[0] * m[1])
    Interval(low=0.5, high=0.5, confidence=0.95)
    """
    n = len(columns[0]) if columns else 0
    if not n or samples < 1:
        return None
    table = np.asarray(columns, dtype=np.float64)
    rng = random.Random(seed)  # noqa: S311 -- statistics, not secrets; seeded for repeatability
    rows = range(n)
    found = []
    for _ in range(samples):
        drawn = table[:, rng.choices(rows, k=n)]
        found.append(combine([float(m) for m in drawn.mean(axis=1)]) or 0.0)
    found.sort()
    tail = (1 - confidence) / 2
    return Interval(_quantile(found, tail), _quantile(found, 1 - tail), confidence)


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
    at_least = _relabelled_at_least(deltas, observed, rng, iterations)
    return RandomisationTest(math.fsum(deltas) / n, (at_least + 1) / (iterations + 1), iterations)


# Relabellings evaluated per numpy block (bounds the bit matrix: block x questions bytes).
_BLOCK = 4096


def _relabelled_at_least(
    deltas: Sequence[float], observed: float, rng: random.Random, iterations: int
) -> int:
    """Count relabellings whose absolute summed difference reaches ``observed``.

    Iteration ``k`` draws ``rng.getrandbits(n)`` and flips the sign of question ``i``'s
    difference when bit ``i`` is set: the draws of the plain loop. The sum of the flipped
    differences is read from a table per byte of the draw (the sum of each byte's 256 bit
    patterns), so a block of draws costs one gather and one sum in numpy.
    """
    n = len(deltas)
    width = (n + 7) // 8
    padded = np.zeros(width * 8)
    padded[:n] = deltas
    patterns = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little")
    flipped = padded.reshape(width, 8) @ patterns.T.astype(np.float64)  # (width, 256)
    total = math.fsum(deltas)
    columns = np.arange(width)
    at_least = 0
    done = 0
    while done < iterations:
        block = min(_BLOCK, iterations - done)
        raw = b"".join(rng.getrandbits(n).to_bytes(width, "little") for _ in range(block))
        draws = np.frombuffer(raw, dtype=np.uint8).reshape(block, width)
        sums = total - 2.0 * flipped[columns, draws].sum(axis=1)
        # a tolerance keeps ties (identical sums reached in another order) counted as ties
        at_least += int(np.count_nonzero(np.abs(sums) >= observed - 1e-12))
        done += block
    return at_least


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


def chi2_survival(x: float, df: int) -> float:
    """Return P(X >= x) for a chi-square variable with ``df`` (integer) degrees of freedom.

    Closed forms: for even ``df`` a finite Poisson sum, for odd ``df`` the normal tail plus a
    finite sum (both exact up to rounding).

    >>> round(chi2_survival(3.841458820694124, 1), 6), round(chi2_survival(5.991464547107979, 2), 6)
    (0.05, 0.05)

    Raises:
        ValueError: if ``df`` is below 1.
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {df}")
    if x <= 0:
        return 1.0
    half = x / 2
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for i in range(1, df // 2):
            term *= half / i
            total += term
        return min(1.0, math.exp(-half) * total)
    root = math.sqrt(x)
    tail = math.erfc(root / math.sqrt(2))
    density = math.exp(-half) / math.sqrt(2 * math.pi)
    term, total = root, 0.0
    for i in range(1, (df - 1) // 2 + 1):
        if i > 1:
            term *= x / (2 * i - 1)
        total += term
    return min(1.0, tail + 2 * density * total)


@dataclass(frozen=True, slots=True)
class FriedmanTest:
    """Friedman's test: do ``k`` systems differ on the same questions (ranks within questions)?"""

    statistic: float | None  # None when every question ties every system
    p_value: float
    systems: int
    questions: int
    mean_ranks: tuple[float, ...]  # rank 1 = best (highest score), ties share their mean rank


def _ranks(row: Sequence[float]) -> list[float]:
    # rank 1 for the highest score; tied scores share the mean of their ranks
    order = sorted(range(len(row)), key=lambda j: -row[j])
    ranks = [0.0] * len(row)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and row[order[j + 1]] == row[order[i]]:
            j += 1
        for position in range(i, j + 1):
            ranks[order[position]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def friedman(scores: Sequence[Sequence[float]]) -> FriedmanTest:
    """Run Friedman's test on per-question scores (one sequence per system, same order).

    The statistic corrects for ties: Q = (k - 1) Σ_j (R_j - n(k + 1)/2)² /
    (Σ r_ij² - n k (k + 1)² / 4), with R_j the rank sum of system j over the n questions; its
    p-value is the chi-square tail with k - 1 degrees of freedom (Demšar 2006). When every
    question ties every system the statistic is undefined and p = 1.

    Raises:
        EvaluationError: with fewer than two systems, no questions, or ragged sequences.

    >>> friedman([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]).mean_ranks
    (1.3333333333333333, 1.6666666666666667)
    """
    k = len(scores)
    n = len(scores[0]) if scores else 0
    if k < 2 or n == 0 or any(len(s) != n for s in scores):
        raise EvaluationError(
            "Friedman's test needs at least two systems scored on the same, non-empty list of "
            "questions"
        )
    sums = [0.0] * k
    squares = 0.0
    for i in range(n):
        ranks = _ranks([s[i] for s in scores])
        for j, r in enumerate(ranks):
            sums[j] += r
            squares += r * r
    expected = n * (k + 1) / 2
    denominator = squares - n * k * (k + 1) ** 2 / 4
    means = tuple(s / n for s in sums)
    if denominator <= 1e-12:
        return FriedmanTest(None, 1.0, k, n, means)
    statistic = (k - 1) * math.fsum((s - expected) ** 2 for s in sums) / denominator
    return FriedmanTest(statistic, chi2_survival(statistic, k - 1), k, n, means)


def holm(p_values: Sequence[float]) -> list[float]:
    """Return Holm-Bonferroni adjusted p-values (same order as given).

    The i-th smallest p is multiplied by (m - i + 1), then made monotone and capped at 1.

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = round(running, 15)
    return adjusted


@dataclass(frozen=True, slots=True)
class PairwiseTest:
    """One pair of systems: the paired randomisation test and its Holm-adjusted p-value."""

    first: int
    second: int
    test: RandomisationTest
    adjusted_p: float


def pairwise(
    scores: Sequence[Sequence[float]], *, iterations: int = 2_000, seed: int = 0
) -> list[PairwiseTest]:
    """Test every pair of systems with ``approximate_randomisation``, Holm-corrected.

    Pairs come in order (0, 1), (0, 2), …, (1, 2), …; each pair uses its own seed derived from
    ``seed`` so that adding a system does not change the other pairs' draws.

    Raises:
        EvaluationError: if the sequences differ in length or are empty.
    """
    pairs: list[tuple[int, int, RandomisationTest]] = []
    for a in range(len(scores)):
        for b in range(a + 1, len(scores)):
            test = approximate_randomisation(
                scores[a], scores[b], iterations=iterations, seed=seed + 1000 * a + b
            )
            pairs.append((a, b, test))
    adjusted = holm([t.p_value for _, _, t in pairs])
    return [PairwiseTest(a, b, t, p) for (a, b, t), p in zip(pairs, adjusted, strict=True)]

"""Bootstrap confidence intervals and the paired approximate-randomisation test."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import NamedNode

from evaluators.errors import EvaluationError
from evaluators.qa.scoring import evaluate, gold_as_answers
from evaluators.significance import (
    approximate_randomisation,
    bootstrap_interval,
    bootstrap_of_means,
    chi2_survival,
    compare_runs,
    friedman,
    holm,
    pairwise,
)
from tests.plugins.scoring import answered, dataset, question

DBR = "http://dbpedia.org/resource/"


def test_bootstrap_is_repeatable_and_seed_dependent() -> None:
    values = [0.0, 0.25, 0.5, 1.0, 1.0, 0.0, 0.75, 1.0, 0.2, 0.9]
    a = bootstrap_interval(values, samples=500, seed=7)
    assert a == bootstrap_interval(values, samples=500, seed=7)
    assert a != bootstrap_interval(values, samples=500, seed=8)
    assert a is not None and a.low < sum(values) / len(values) < a.high
    assert bootstrap_interval([]) is None


def test_bootstrap_interval_narrows_with_more_questions() -> None:
    few = bootstrap_interval([0.0, 1.0] * 5, seed=1)
    many = bootstrap_interval([0.0, 1.0] * 500, seed=1)
    assert few is not None and many is not None
    assert many.high - many.low < few.high - few.low
    assert many.low == pytest.approx(0.5, abs=0.05) and many.high == pytest.approx(0.5, abs=0.05)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30), st.integers(0, 100))
def test_bootstrap_bounds_lie_within_the_values(values: list[float], seed: int) -> None:
    interval = bootstrap_interval(values, samples=50, seed=seed)
    assert interval is not None
    assert min(values) - 1e-12 <= interval.low <= interval.high <= max(values) + 1e-12


def test_randomisation_test_separates_clearly_different_runs() -> None:
    better = [1.0] * 30
    worse = [0.0] * 30
    test = approximate_randomisation(better, worse, iterations=2000, seed=3)
    assert test.difference == 1.0
    assert test.p_value == pytest.approx(1 / 2001)  # no relabelling reaches the observed gap
    same = approximate_randomisation([0.5, 0.2, 0.9], [0.5, 0.2, 0.9], iterations=200)
    assert same.p_value == 1.0 and same.difference == 0.0


def test_randomisation_test_exact_small_case() -> None:
    # two questions with deltas 1 and 1: half of all relabellings keep |sum| = 2 -> p near 1/2
    test = approximate_randomisation([1.0, 1.0], [0.0, 0.0], iterations=4000, seed=5)
    assert test.p_value == pytest.approx(0.5, abs=0.03)


def test_randomisation_test_needs_paired_scores() -> None:
    with pytest.raises(EvaluationError, match="equal length"):
        approximate_randomisation([1.0], [1.0, 0.0])


def test_compare_runs_pairs_questions_by_id() -> None:
    gold = dataset(*(question(str(i), [NamedNode(f"{DBR}R{i}")]) for i in range(12)))
    perfect = evaluate(gold, gold_as_answers(gold), bootstrap_samples=10)
    empty = evaluate(gold, {q.id: answered(q) for q in gold.questions}, bootstrap_samples=10)
    test = compare_runs(perfect, empty, iterations=1000)
    assert test.difference == 1.0 and test.p_value < 0.01
    other = evaluate(dataset(question("x", [])), {}, bootstrap_samples=10)
    with pytest.raises(EvaluationError, match="different questions"):
        compare_runs(perfect, other)
    with pytest.raises(EvaluationError, match="RE2KB"):
        compare_runs(perfect, perfect, experiment_type="RE2KB")  # no queries: not scored


# Values computed with SciPy 1.17 (scipy.stats.chi2.sf and friedmanchisquare, which corrects for
# ties the same way) and kept here, so the suite does not depend on SciPy.
CHI2_TABLE = [
    (3.841458820694124, 1, 0.05),
    (5.991464547107979, 2, 0.05),
    (7.814727903251178, 3, 0.05),
    (11.070497693516351, 5, 0.05),
    (1.0, 7, 0.9948285365165155),
    (40.0, 4, 4.328422607120966e-08),
]


@pytest.mark.parametrize(("x", "df", "expected"), CHI2_TABLE)
def test_chi_square_tail_matches_the_tables(x: float, df: int, expected: float) -> None:
    assert chi2_survival(x, df) == pytest.approx(expected, rel=1e-6)


def test_friedman_matches_scipy_with_ties() -> None:
    a = [1.0, 0.5, 0.0, 1.0, 0.25, 0.0, 1.0, 0.8]
    b = [1.0, 0.0, 0.0, 0.5, 0.25, 1.0, 0.0, 0.6]
    c = [0.0, 0.5, 0.0, 0.0, 0.75, 0.0, 1.0, 0.9]
    test = friedman([a, b, c])
    assert test.statistic == pytest.approx(1.1304347826086956, abs=1e-12)
    assert test.p_value == pytest.approx(0.5682366036329846, abs=1e-12)
    assert test.mean_ranks == (1.8125, 2.25, 1.9375)
    # every question tied: undefined statistic, nothing to reject
    tied = friedman([[1.0, 0.0], [1.0, 0.0]])
    assert tied.statistic is None and tied.p_value == 1.0
    with pytest.raises(EvaluationError):
        friedman([[1.0]])


def test_holm_adjusts_and_keeps_order_monotone() -> None:
    assert holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]
    assert holm([0.5, 0.9]) == [1.0, 1.0]
    assert holm([]) == []


def test_pairwise_tests_every_pair_and_is_repeatable() -> None:
    strong = [1.0] * 30
    weak = [0.0] * 30
    mid = [1.0, 0.0] * 15
    first = pairwise([strong, weak, mid], iterations=500, seed=3)
    assert [(p.first, p.second) for p in first] == [(0, 1), (0, 2), (1, 2)]
    assert first[0].test.p_value < 0.01 and first[0].adjusted_p <= 1.0
    assert all(p.adjusted_p >= p.test.p_value for p in first)
    assert pairwise([strong, weak, mid], iterations=500, seed=3) == first


def _plain_loop_p(a: list[float], b: list[float], iterations: int, seed: int) -> float:
    """The randomisation test as a plain loop over the same draws (the reference)."""
    import math
    import random

    deltas = [x - y for x, y in zip(a, b, strict=True)]
    observed = abs(math.fsum(deltas))
    rng = random.Random(seed)
    at_least = 0
    for _ in range(iterations):
        bits = rng.getrandbits(len(a))
        total = math.fsum(-d if (bits >> i) & 1 else d for i, d in enumerate(deltas))
        at_least += abs(total) >= observed - 1e-12
    return (at_least + 1) / (iterations + 1)


def test_vectorised_randomisation_equals_the_plain_loop() -> None:
    import random

    rng = random.Random(11)
    cases = 0
    for trial in range(60):
        n = rng.choice([1, 2, 7, 8, 9, 64, 65, 408])
        scores = [0.0, 0.25, 1 / 3, 0.5, 2 / 3, 1.0]
        a = [rng.choice(scores) for _ in range(n)]
        b = [rng.choice(scores) for _ in range(n)]
        iterations = rng.choice([1, 50, 300])
        found = approximate_randomisation(a, b, iterations=iterations, seed=trial).p_value
        assert found == _plain_loop_p(a, b, iterations, trial), (n, iterations, trial)
        cases += 1
    assert cases == 60


def test_bootstrap_of_one_mean_draws_as_the_interval_of_a_mean() -> None:
    values = [float(n % 3 == 0) for n in range(60)]
    assert bootstrap_of_means([values], lambda m: m[0]) == bootstrap_interval(values)


def test_bootstrap_of_means_combines_each_resamples_means() -> None:
    # F1 of mean P and mean R (Macro F1 QALD): the interval holds the full sample's value,
    # and a statistic undefined on a resample counts 0
    p = [1.0, 1.0, 0.0, 1.0, 0.5, 1.0, 0.0, 1.0]
    r = [1.0, 0.0, 0.0, 1.0, 0.5, 1.0, 0.0, 0.5]
    f1 = 2 * (sum(p) / 8) * (sum(r) / 8) / (sum(p) / 8 + sum(r) / 8)
    found = bootstrap_of_means([p, r], lambda m: 2 * m[0] * m[1] / (m[0] + m[1]))
    assert found is not None and found.low < f1 < found.high
    zero = bootstrap_of_means([[0.0, 0.0]], lambda m: None)
    assert zero is not None and zero.low == zero.high == 0.0
    assert bootstrap_of_means([[]], lambda m: m[0]) is None

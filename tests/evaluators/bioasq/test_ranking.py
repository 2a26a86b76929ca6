"""Ranked-list measures: documents and concepts, AP by version, MAP and GMAP."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluators.bioasq.ranking import ap_divisor, gmap, list_scores, mean_average_precision

F = Fraction

# (gold, ranked, P, R, F1, AP under version 8)
LIST_ROWS = [
    ([], [], 0, 0, 0, 0),
    ([], ["a"], 0, 0, 0, 0),
    (["a"], [], 0, 0, 0, 0),
    (["a", "b"], ["c"], 0, 0, 0, 0),
    (["a", "b", "c", "d"], ["b", "a"], 1, F(1, 2), F(2, 3), F(1, 2)),
    (["a", "b"], ["b", "a"], 1, 1, 1, 1),
    (["a"], ["a", "a", "x"], F(1, 2), 1, F(2, 3), 1),  # duplicates removed first
    (["a", "b", "c"], ["x", "a", "y", "b"], F(1, 2), F(2, 3), F(4, 7), (F(1, 2) + F(2, 4)) / 3),
]


@pytest.mark.parametrize(("gold", "ranked", "p", "r", "f1", "ap"), LIST_ROWS)
def test_list_scores_table(
    gold: list[str], ranked: list[str], p: Fraction, r: Fraction, f1: Fraction, ap: Fraction
) -> None:
    scores = list_scores(gold, ranked, 8)
    assert scores.precision == pytest.approx(float(p))
    assert scores.recall == pytest.approx(float(r))
    assert scores.f1 == pytest.approx(float(f1))
    assert scores.average_precision == pytest.approx(float(ap))


@pytest.mark.parametrize(
    ("version", "expected"),
    [(2, F(3, 12)), (3, F(3, 10)), (5, F(3, 10)), (8, F(3, 10)), (9, F(3, 10))],
)
def test_ap_divisor_depends_on_version(version: int, expected: Fraction) -> None:
    gold = [f"d{i}" for i in range(12)]
    scores = list_scores(gold, ["d0", "d1", "d2"], version)
    assert scores.average_precision == pytest.approx(float(expected))


def test_ap_divisor_for_small_gold_lists() -> None:
    assert [ap_divisor(v, 3) for v in (2, 3, 5, 8, 9)] == [3, 10, 10, 3, 3]
    assert [ap_divisor(v, 0) for v in (2, 3, 5, 8, 9)] == [0, 10, 10, 0, 0]


def test_ap_exceeds_one_when_more_than_ten_hits_are_submitted() -> None:
    # The evaluator does not truncate to 10 documents; min(10, |G|) then undercounts.
    gold = [f"d{i}" for i in range(20)]
    assert list_scores(gold, gold, 8).average_precision == 2.0
    assert list_scores(gold, gold, 2).average_precision == 1.0


@given(
    st.lists(st.sampled_from("abcdefgh"), max_size=8),
    st.lists(st.sampled_from("abcdefghij"), max_size=10),
    st.randoms(use_true_random=False),
    st.sampled_from([2, 3, 5, 8, 9]),
)
def test_list_scores_properties(
    gold: list[str], ranked: list[str], rng: object, version: int
) -> None:
    scores = list_scores(gold, ranked, version)
    for value in (scores.precision, scores.recall, scores.f1, scores.average_precision or 0):
        assert 0.0 <= value <= 1.0  # at most 10 submitted items: AP stays within [0, 1]
    if scores.precision and scores.recall:
        harmonic = 2 * scores.precision * scores.recall / (scores.precision + scores.recall)
        assert scores.f1 == pytest.approx(harmonic)
    shuffled = list(ranked)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    again = list_scores(gold, shuffled, version)
    assert (again.precision, again.recall, again.f1) == pytest.approx(
        (scores.precision, scores.recall, scores.f1)
    )
    if set(gold) and set(gold) <= set(ranked[: len(set(gold))]) and version in (2, 8, 9):
        assert scores.average_precision == pytest.approx(1.0)


def test_map_counts_undefined_as_zero() -> None:
    assert mean_average_precision([0.5, None, 1.0]) == 0.5
    assert mean_average_precision([]) == 0.0


def test_gmap_rules_for_documents_and_snippets() -> None:
    eps = 1e-5
    assert gmap([0.5, 0.0]) == pytest.approx(math.sqrt((0.5 + eps) * eps))
    assert gmap([0.5, None]) == pytest.approx(math.sqrt((0.5 + eps) * eps))
    assert gmap([0.5, None], snippets=True) == pytest.approx(math.sqrt(0.5 + eps))
    assert gmap([None, None], snippets=True) == 0.0  # the summed log is exactly 0
    assert gmap([None]) == pytest.approx(eps)
    assert gmap([]) == 0.0

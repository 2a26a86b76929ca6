"""Phase B measures: yes/no parsing and F1, factoid accuracy and MRR, list P/R/F1."""

from __future__ import annotations

from random import Random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluators.bioasq.exact import (
    factoid_scores,
    list_scores,
    system_entities,
    yesno_correct,
    yesno_label,
    yesno_scores,
)


@pytest.mark.parametrize(
    ("answer", "label"),
    [
        ("yes", "yes"),
        ("Yes.", "yes"),
        ("YES, but no", "yes"),  # "yes" is looked for first
        ("no", "no"),
        ("No.", "no"),
        ("I don't know", "no"),  # contains "no"
        ("unknown", "no"),
        ("not known", "no"),
        ("none", "no"),
        ("maybe", "none"),
        ("", "none"),
        (None, "none"),
    ],
)
def test_yesno_label_table(answer: str | None, label: str) -> None:
    assert yesno_label(answer) == label


@pytest.mark.parametrize(
    ("gold", "system", "correct"),
    [
        ("yes", "Yes.", True),
        ("no", "I don't know", True),
        ("yes", "maybe", False),
        ("yes", "", False),
        ("yes", None, False),
        (None, "yes", False),
        ("maybe", "perhaps", True),  # both parse to "none" (official)
    ],
)
def test_yesno_correct_table(gold: str | None, system: str | None, correct: bool) -> None:
    assert yesno_correct(gold, system) is correct


def test_yesno_f1_of_a_class_without_gold_questions_is_zero() -> None:
    scores = yesno_scores([(False, True), (False, True)])
    assert (scores.accuracy, scores.f1_yes, scores.f1_no, scores.macro_f1) == (1.0, 0.0, 1.0, 0.5)
    assert yesno_scores([]).accuracy == 0.0


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=30))
def test_yesno_scores_properties(outcomes: list[tuple[bool, bool]]) -> None:
    scores = yesno_scores(outcomes)
    for value in (scores.accuracy, scores.f1_yes, scores.f1_no, scores.macro_f1):
        assert 0.0 <= value <= 1.0
    assert scores.macro_f1 == pytest.approx((scores.f1_yes + scores.f1_no) / 2)
    shuffled = list(outcomes)
    Random(7).shuffle(shuffled)
    assert yesno_scores(shuffled) == scores
    perfect = yesno_scores([(gold_yes, True) for gold_yes, _ in outcomes])
    assert perfect.accuracy == 1.0
    assert perfect.f1_yes == (1.0 if any(g for g, _ in outcomes) else 0.0)


def test_system_entities_keep_the_first_string_from_version_5() -> None:
    entities = [("EGFR ", "egfr"), ("A",), ()]
    assert system_entities(entities, 5) == [["egfr "], ["a"], []]
    assert system_entities(entities, 3) == [["egfr ", "egfr"], ["a"], []]


@pytest.mark.parametrize(
    ("gold", "system", "expected"),
    [
        ([("IL-6", "interleukin 6")], [("interleukin 6",), ("tnf",)], (1, 1, 1)),
        ([("BRCA1",)], [("tp53",), ("brca1",)], (0, 1, 0.5)),
        ([("p53",)], [*((f"w{i}",) for i in range(5)), ("P53",)], (0, 1, 1 / 6)),  # no cut at 5
        ([("EGFR",)], [("egfr ", "EGFR")], (0, 0, 0)),  # only "egfr " is kept; no trimming
        ([("EGFR",)], [], (0, 0, 0)),
        ([("a",), ("b",)], [("x",), ("b",)], (0, 1, 0.5)),  # any gold entity counts
        ([], [("a",)], (0, 0, 0)),
    ],
)
def test_factoid_table(
    gold: list[tuple[str, ...]], system: list[tuple[str, ...]], expected: tuple[float, float, float]
) -> None:
    scores = factoid_scores(gold, system, 8)
    assert (scores.strict, scores.lenient, scores.reciprocal_rank) == pytest.approx(expected)


# (gold, system, TP, FP, FN)
LIST_ROWS = [
    ([("a", "alpha"), ("b",), ("c",)], [("alpha",), ("b",), ("d",), ("b",)], 2, 2, 1),
    ([("x",), ("y",)], [], 0, 0, 2),
    ([("m",)], [("M",)], 1, 0, 0),
    ([], [("a",)], 0, 1, 0),
    ([("a",), ("a",)], [("a",), ("a",)], 2, 0, 0),
    # Official quirk: "b" uses up the first gold entry; the leftover ("b",) still finds "b" in
    # the second (FN) pass, so it is not counted as missed.
    ([("a", "b"), ("b",)], [("b",)], 1, 0, 0),
]


@pytest.mark.parametrize(("gold", "system", "tp", "fp", "fn"), LIST_ROWS)
def test_list_table(
    gold: list[tuple[str, ...]], system: list[tuple[str, ...]], tp: int, fp: int, fn: int
) -> None:
    scores = list_scores(gold, system, 8)
    assert (scores.tp, scores.fp, scores.fn) == (tp, fp, fn)
    if system:
        assert scores.precision == pytest.approx(tp / (tp + fp))
        assert scores.recall == pytest.approx(tp / (tp + fn) if tp + fn else 0.0)
    else:
        assert (scores.precision, scores.recall, scores.f1) == (0, 0, 0)


def test_list_arguments_are_not_changed() -> None:
    gold = [("a", "alpha"), ("b",)]
    system = [("a",), ("b",)]
    first = list_scores(gold, system, 8)
    assert gold == [("a", "alpha"), ("b",)] and system == [("a",), ("b",)]
    assert list_scores(gold, system, 8) == first


_names = st.text(alphabet="abcd", min_size=1, max_size=2)


@given(
    st.lists(_names, max_size=6, unique=True),
    st.lists(_names, max_size=8),
    st.randoms(use_true_random=False),
)
def test_list_scores_properties(gold_names: list[str], answers: list[str], rng: Random) -> None:
    gold = [(name,) for name in gold_names]
    system = [(name,) for name in answers]
    scores = list_scores(gold, system, 8)
    for value in (scores.precision, scores.recall, scores.f1):
        assert 0.0 <= value <= 1.0
    if scores.precision and scores.recall:
        harmonic = 2 * scores.precision * scores.recall / (scores.precision + scores.recall)
        assert scores.f1 == pytest.approx(harmonic)
    # with single-name, distinct gold entries the greedy matching is order-free
    shuffled = list(system)
    rng.shuffle(shuffled)
    assert list_scores(gold, shuffled, 8) == scores
    if gold:
        perfect = list_scores(gold, gold, 8)
        assert (perfect.precision, perfect.recall, perfect.f1) == (1.0, 1.0, 1.0)

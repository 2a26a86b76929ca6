"""Precision/recall/F1, micro/macro, Macro F1 QALD and the classic QALD aggregation."""

from __future__ import annotations

import json
from fractions import Fraction as F
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluators.metrics import (
    PRF,
    ClassicScore,
    Counts,
    classic_score,
    classic_summary,
    harmonic_mean,
    macro,
    macro_f1_qald,
    mean,
    micro,
    prf,
    qald_prf,
)


def close(value: float | None, expected: F | float) -> bool:
    return value is not None and value == pytest.approx(float(expected), rel=1e-12, abs=1e-15)


# (gold, predicted, P, R, F1): empty gold, empty prediction, both empty, disjoint, subset, equal
SET_TABLE = [
    (set(), set(), F(1), F(1), F(1)),
    (set(), {"a"}, F(0), F(0), F(0)),
    ({"a"}, set(), F(0), F(0), F(0)),
    ({"a", "b"}, {"c"}, F(0), F(0), F(0)),
    ({"a", "b", "c", "d"}, {"a"}, F(1), F(1, 4), F(2, 5)),
    ({"a"}, {"a", "b", "c"}, F(1, 3), F(1), F(1, 2)),
    ({"a", "b"}, {"a", "b"}, F(1), F(1), F(1)),
    ({"a", "b", "c"}, {"b", "c", "d", "e"}, F(1, 2), F(2, 3), F(4, 7)),
]


def counts_of(gold: set[str], predicted: set[str]) -> Counts:
    tp = len(gold & predicted)
    return Counts(tp, len(predicted) - tp, len(gold) - tp)


@pytest.mark.parametrize(("gold", "predicted", "p", "r", "f1"), SET_TABLE)
def test_prf_matches_hand_computed_table(
    gold: set[str], predicted: set[str], p: F, r: F, f1: F
) -> None:
    got = prf(counts_of(gold, predicted))
    assert close(got.precision, p) and close(got.recall, r) and close(got.f1, f1)


def test_qald_prf_gives_precision_one_only_for_an_empty_answer() -> None:
    assert qald_prf(Counts(0, 0, 3)) == PRF(1.0, 0.0, 0.0)
    assert qald_prf(Counts(0, 2, 3)) == PRF(0.0, 0.0, 0.0)
    assert qald_prf(Counts(0, 0, 0)) == PRF(1.0, 1.0, 1.0)
    assert qald_prf(Counts(2, 1, 0)) == prf(Counts(2, 1, 0))


# gerbil-qa.md §2.7 "Extra vectors": counts -> microP, microR, microF1, macroP, macroR, macroF1,
# Macro F1 QALD (None = GERBIL's NaN)
EXTRA_VECTORS = [
    ([(1, 0, 0), (0, 0, 3)], (1, 0.25, 0.4, 0.5, 0.5, 0.5, F(2, 3))),
    ([(1, 0, 0), (0, 2, 3)], (F(1, 3), 0.25, F(2, 7), 0.5, 0.5, 0.5, 0.5)),
    ([(0, 0, 3), (0, 0, 1)], (0, 0, 0, 0, 0, 0, 0)),
    ([(0, 0, 0)], (1, 1, 1, 1, 1, 1, 1)),
    ([(0, 2, 0)], (0, 0, 0, 0, 0, 0, None)),
    (
        [(2, 1, 0), (0, 0, 5), (0, 0, 0), (1, 0, 1)],
        (0.75, F(1, 3), F(6, 13), F(2, 3), 0.625, F(37, 60), 0.743243),
    ),
]


@pytest.mark.parametrize(("triples", "expected"), EXTRA_VECTORS)
def test_gerbil_extra_vectors(triples: list[tuple[int, int, int]], expected: tuple) -> None:
    counts = [Counts(*t) for t in triples]
    mi = micro(counts)
    ma = macro([prf(c) for c in counts])
    assert ma is not None
    got = (mi.precision, mi.recall, mi.f1, ma.precision, ma.recall, ma.f1)
    for value, want in zip(got, expected[:6], strict=True):
        assert close(value, want)
    qald = macro_f1_qald(counts)
    if expected[6] is None:
        assert qald is None
    else:
        assert qald == pytest.approx(float(expected[6]), abs=5e-7)


def test_qanary_webservice_counts() -> None:
    # QanaryWebServiceFmeasureTest: (1,0,0), (0,1,3), (0,3,13)
    counts = [Counts(1, 0, 0), Counts(0, 1, 3), Counts(0, 3, 13)]
    mi = micro(counts)
    ma = macro([prf(c) for c in counts])
    assert close(mi.precision, F(1, 5)) and close(mi.recall, F(1, 17))
    assert close(mi.f1, F(2, 22))
    assert ma == PRF(1 / 3, 1 / 3, 1 / 3)


def test_macro_is_undefined_without_questions_but_micro_is_one() -> None:
    assert macro([]) is None
    assert micro([]) == PRF(1.0, 1.0, 1.0)
    assert macro_f1_qald([]) is None
    assert mean([]) is None


def test_values_are_computed_in_javas_order() -> None:
    # the published GERBIL vector "20/31" is the double 0.6451612903225806
    assert prf(Counts(10, 0, 11)).f1 == 0.6451612903225806
    assert prf(Counts(21, 2, 0)).f1 == 0.9545454545454545


CLASSIC_TABLE = [
    # gold, system, correct, answered -> P, R, processed
    (0, 0, 0, True, 1.0, 1.0, True),
    (0, 3, 0, True, 0.0, 0.0, True),
    (4, 0, 0, True, 1.0, 0.0, True),
    (4, 8, 2, True, 0.25, 0.5, True),
    (4, 4, 4, True, 1.0, 1.0, True),
    (4, 0, 0, False, 0.0, 0.0, False),
]


@pytest.mark.parametrize(("gold", "system", "correct", "answered", "p", "r", "done"), CLASSIC_TABLE)
def test_classic_score_rules(
    gold: int, system: int, correct: int, answered: bool, p: float, r: float, done: bool
) -> None:
    assert classic_score(gold, system, correct, answered=answered) == ClassicScore(p, r, done)


def test_classic_summary_uses_f1_of_means() -> None:
    scores = [ClassicScore(1.0, 0.0, True), ClassicScore(0.0, 1.0, True), ClassicScore(0, 0, False)]
    s = classic_summary(scores)
    assert s.processed == 2
    assert s.processed_precision == 0.5 and s.processed_recall == 0.5 and s.processed_f1 == 0.5
    assert close(s.global_precision, F(1, 3)) and close(s.global_f1, F(1, 3))
    empty = classic_summary([ClassicScore(0.0, 0.0, True)])
    assert empty.processed_f1 is None and empty.global_f1 is None


LOGS = "systems/AKSW_NLIWOD/qa.ml/src/main/resources/QALD6MultilingualLogs"
# "0 0 0" is printed both for a question missing from the submission and for a processed
# question with an empty gold set and a non-empty answer. Only the gold-empty rows are ambiguous;
# these are the ones UIQA (without manual entries) did not submit (its processed means over 36
# questions are the published ones).
NOT_SUBMITTED_GOLD_EMPTY = {"UIQA_withoutManualEntries": {"19", "20", "48", "70", "77"}}
GOLD_EMPTY = {"19", "20", "48", "70", "77"}  # qald-6-test-multilingual questions without answers


def _log_scores(tsv: Path) -> list[ClassicScore]:
    system = tsv.name.removeprefix("multilingual_").removesuffix(".html.tsv")
    scores = []
    for line in tsv.read_text().splitlines()[1:]:
        qid, recall, precision, _f1 = line.split("\t")
        integer_zeros = (recall, precision, _f1) == ("0", "0", "0")
        skipped = integer_zeros and (
            qid not in GOLD_EMPTY or qid in NOT_SUBMITTED_GOLD_EMPTY.get(system, set())
        )
        scores.append(ClassicScore(float(precision), float(recall), not skipped))
    return scores


def test_qald6_official_logs_are_reproduced(shared_data: Path) -> None:
    logs = sorted((shared_data / LOGS).glob("*.html.tsv"))
    assert len(logs) == 7
    for tsv in logs:
        scores = _log_scores(tsv)
        assert len(scores) == 100
        summary = json.loads(tsv.with_name(tsv.name.replace(".tsv", ".summary.json")).read_text())
        want = summary["results"]
        got = classic_summary(scores)
        assert got.global_precision == want["all"]["macro"]["precision"], tsv.name
        assert got.global_recall == want["all"]["macro"]["recall"], tsv.name
        assert got.global_f1 == want["all"]["macro"]["f1"], tsv.name
        assert got.processed_precision == want["processed"]["macro"]["precision"], tsv.name
        assert got.processed_recall == want["processed"]["macro"]["recall"], tsv.name
        assert got.processed_f1 == want["processed"]["macro"]["f1"], tsv.name


def test_qald6_published_table_cells(shared_data: Path) -> None:
    # qald-classic.md: CANaLI processed 0.8891/0.8936/0.8913, NbFramework global F1 0.5422
    canali = classic_summary(_log_scores(shared_data / LOGS / "multilingual_CANaLI.html.tsv"))
    assert (canali.processed_precision, canali.processed_recall, canali.processed_f1) == (
        pytest.approx(0.8891, abs=5e-5),
        pytest.approx(0.8936, abs=5e-5),
        pytest.approx(0.8913, abs=5e-5),
    )
    nb = classic_summary(_log_scores(shared_data / LOGS / "multilingual_NbFramework.html.tsv"))
    assert nb.global_f1 == pytest.approx(0.5422, abs=5e-5)
    assert nb.processed == 63


counts_strategy = st.builds(Counts, st.integers(0, 50), st.integers(0, 50), st.integers(0, 50))


@given(counts_strategy)
def test_scores_lie_between_zero_and_one(c: Counts) -> None:
    for s in (prf(c), qald_prf(c)):
        assert 0.0 <= s.precision <= 1.0 and 0.0 <= s.recall <= 1.0 and 0.0 <= s.f1 <= 1.0


@given(counts_strategy)
def test_f1_is_the_harmonic_mean_of_precision_and_recall(c: Counts) -> None:
    s = prf(c)
    expected = harmonic_mean(s.precision, s.recall)
    if c.tp == c.fp == c.fn == 0:
        assert s.f1 == 1.0
    else:
        assert s.f1 == pytest.approx(expected or 0.0)


@given(counts_strategy)
def test_macro_over_one_question_equals_that_question(c: Counts) -> None:
    assert macro([prf(c)]) == prf(c)
    assert micro([c]) == prf(c)


@given(st.lists(counts_strategy, min_size=1, max_size=20))
def test_aggregates_lie_between_zero_and_one(counts: list[Counts]) -> None:
    ma = macro([prf(c) for c in counts])
    assert ma is not None
    mi = micro(counts)
    for v in (mi.precision, mi.recall, mi.f1, ma.precision, ma.recall, ma.f1):
        assert 0.0 <= v <= 1.0
    q = macro_f1_qald(counts)
    assert q is None or 0.0 <= q <= 1.0

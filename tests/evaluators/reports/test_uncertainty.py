"""Significance marks on ranked values, and the profile notes' counts (pure)."""

from __future__ import annotations

from evaluators.experiments.model import TaskPlan, TaskStatus
from evaluators.experiments.read import TaskSummary
from evaluators.reports.comparisons import SignificanceGroup
from evaluators.reports.render import SIGNIFICANT, Estimate, to_csv, to_latex, to_markdown
from evaluators.reports.summaries import Summary, SummaryRow
from evaluators.reports.tables import summary_table
from evaluators.reports.uncertainty import MARK_NOTE, marked, profile_notes
from evaluators.results import ExperimentTypeResult, MeasureValue
from evaluators.significance import FriedmanTest, PairwiseTest, RandomisationTest


def _estimate(value: float) -> Estimate:
    return Estimate(MeasureValue("macro_f1_qald", value), value - 0.1, value + 0.1)


def _group(pairs: list[tuple[int, int, float, float]]) -> SignificanceGroup:
    systems = ("a", "b", "c")
    friedman = FriedmanTest(1.0, 0.01, 3, 10, (1.0, 2.0, 3.0))
    return SignificanceGroup(
        "d@1", "en", "strict", "QA", "f1", systems, (1, 2, 3), 10, friedman,
        tuple(PairwiseTest(i, j, RandomisationTest(diff, p, 100), p) for i, j, diff, p in pairs),
    )  # fmt: skip


def test_a_value_is_marked_when_significantly_better_than_the_next_one() -> None:
    rows = tuple(
        SummaryRow(s, "", "strict", False, (_estimate(v),))
        for s, v in (("c", 0.5), ("a", 0.9), ("b", 0.8))
    )
    summary = Summary("QA", "QA", "macro_f1_qald", ("d@1",), rows, "en")
    # a > b significant; b > c significant but c is b's next only: marks on a and b
    found = marked(summary, [_group([(0, 1, 0.1, 0.01), (1, 2, 0.3, 0.001), (0, 2, 0.4, 0.001)])])
    marks = {r.system: r.cells[0].mark for r in found.rows}  # type: ignore[union-attr]
    assert marks == {"a": SIGNIFICANT, "b": SIGNIFICANT, "c": ""}
    # not significant after Holm's correction: no mark; a test pointing the other way: no mark
    found = marked(summary, [_group([(0, 1, 0.1, 0.06), (1, 2, -0.3, 0.001)])])
    assert all(r.cells[0].mark == "" for r in found.rows)  # type: ignore[union-attr]
    # another language's group does not mark this table
    assert marked(summary, [_group([(0, 1, 0.1, 0.01)])]).rows[1].cells[0].mark == SIGNIFICANT  # type: ignore[union-attr]
    other = Summary("QA", "QA", "macro_f1_qald", ("d@1",), rows, "de")
    assert all(r.cells[0].mark == "" for r in marked(other, [_group([(0, 1, 0.1, 0.01)])]).rows)  # type: ignore[union-attr]
    # every form says what the mark and the brackets mean
    table = summary_table(marked(summary, [_group([(0, 1, 0.1, 0.01)])]))
    assert MARK_NOTE in table.notes
    assert "0.9000 [0.8000, 1.0000]\N{DAGGER}" in to_markdown([table])
    assert r"0.9000 [0.8000, 1.0000]$^\dagger$" in to_latex([table])
    assert "System,d@1,d@1 95% CI low,d@1 95% CI high,d@1 significance" in to_csv(table)


def _task(number: int, system: str, profile: str) -> TaskSummary:
    plan = TaskPlan(number, system, "d", 1, "", "en", profile)
    result = ExperimentTypeResult("QA", (MeasureValue("macro_f1", 0.5),))
    return TaskSummary(
        plan, f"http://x.test/task/e/{number}", TaskStatus.FINISHED, 0, results=(result,)
    )


def test_profile_notes_count_answers_scored_higher_and_lower_than_strict() -> None:
    tasks = [
        _task(1, "s", "strict"),
        _task(2, "s", "gerbil-legacy"),
        _task(3, "t", "gerbil-legacy"),  # no strict twin: not counted
        _task(4, "s", "gerbil"),  # no note for today's GERBIL
    ]
    scores = {
        1: {"1": 0.0, "2": 1.0, "3": 0.5},
        2: {"1": 1.0, "2": 1.0, "3": 0.0},
        3: {"1": 1.0},
        4: {"1": 0.0, "2": 1.0, "3": 0.5},
    }
    notes = profile_notes(tasks, lambda t: scores[t.plan.number])
    assert [(n.profile, n.higher, n.lower, n.answers) for n in notes] == [
        ("gerbil-legacy", 1, 1, 3)
    ]
    assert "scores 1 of 3 answers higher than strict and 1 lower" in notes[0].text
    none = profile_notes([_task(2, "s", "gerbil-legacy")], lambda t: scores[t.plan.number])
    assert none[0].answers == 0 and "no strict task" in none[0].text

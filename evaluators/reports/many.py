"""Several tasks on one dataset version compared: ranked, tested, and written out (pure).

The members are ranked by two aggregate measures (the first task's profile headline, or a
measure the reader chose) with sanity systems apart (``evaluators.reports.headline``); the
ranked ones are tested on the questions all of them were scored on (Friedman's test and
Holm-corrected pairwise randomisation tests, ``evaluators.reports.comparisons``). The result
is also written as CSV (one column of per-question scores per task) and as JSON, the forms
``/compare`` offers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluators.experiments.read import TaskSummary
from evaluators.model import question_order
from evaluators.reports.comparisons import MAX_PAIRWISE_SYSTEMS, PAIRWISE_ITERATIONS, test_systems
from evaluators.reports.headline import Ranked, rank
from evaluators.reports.render import Cell, Table, to_csv
from evaluators.results import MeasureValue
from evaluators.significance import FriedmanTest, PairwiseTest


@dataclass(frozen=True, slots=True)
class Member:
    """One task of a many-task comparison, with its aggregate ranking values."""

    ref: str
    task: TaskSummary
    first: float | None
    second: float | None
    sanity: bool


@dataclass(frozen=True, slots=True)
class ManyComparison:
    """Several tasks on one dataset version: ranked, and tested with Friedman and Holm."""

    experiment_type: str
    ranking: tuple[str, str]
    ranked: Ranked[Member]
    tested: tuple[Member, ...]  # the ranked members, in the order of the tests
    friedman: FriedmanTest | None
    pairs: tuple[PairwiseTest, ...]
    questions: tuple[str, ...]
    scores: dict[str, tuple[float, ...]]  # per question, one F1 per member of ``order``
    order: tuple[Member, ...]


def compare_members(
    members: Sequence[tuple[Member, Mapping[str, float]]],
    kind: str,
    ranking: tuple[str, str],
    *,
    iterations: int = PAIRWISE_ITERATIONS,
    seed: int = 0,
    max_pairwise: int = MAX_PAIRWISE_SYSTEMS,
) -> ManyComparison:
    """Rank members (each with its per-question scores) and test the ranked ones."""
    ranked = rank(
        [m for m, _ in members],
        values=lambda m: (m.first, m.second),
        label=lambda m: m.ref,
        sanity=lambda m: m.sanity,
    )
    tested = tuple(m for _, m in ranked.ranked)
    by_ref = {m.ref: s for m, s in members}
    # Every member's questions: the table shows them all, the tests use the ranked ones.
    ids = tuple(sorted(set.intersection(*(set(s) for _, s in members)), key=question_order))
    found = test_systems(
        [by_ref[m.ref] for m in tested],
        iterations=iterations,
        seed=seed,
        max_pairwise=max_pairwise,
    )
    order = tuple(m for m, _ in members)
    scores = {q: tuple(by_ref[m.ref].get(q, 0.0) for m in order) for q in ids}
    return ManyComparison(
        kind, ranking, ranked, tested, found.friedman, found.pairs, ids, scores, order
    )


def comparison_csv(many: ManyComparison) -> str:
    """Return the per-question values of a comparison as CSV: one column per task."""
    headings = ("Question", *(f"{m.ref} ({m.task.plan.system}) F1" for m in many.order))
    rows: list[tuple[Cell, ...]] = []
    for q in many.questions:
        rows.append((q, *(MeasureValue("f1", v) for v in many.scores[q])))
    return to_csv(Table("Per-question F1", headings, tuple(rows)))


def comparison_json(many: ManyComparison) -> dict[str, Any]:
    """Return a comparison as JSON: the ranking, sanity checks, Friedman's and pairwise tests."""

    def member(m: Member, position: int | None) -> dict[str, Any]:
        return {
            "rank": position,
            "task": m.task.iri,
            "system": m.task.plan.system,
            "language": m.task.plan.language,
            "profile": m.task.plan.profile,
            "sanity_check": m.sanity,
            many.ranking[0]: m.first,
            many.ranking[1]: m.second,
        }

    doc: dict[str, Any] = {
        "experiment_type": many.experiment_type,
        "ranking": list(many.ranking),
        "tasks": [member(m, n) for n, m in many.ranked.ranked]
        + [member(m, None) for m in many.ranked.sanity],
        "questions": len(many.questions),
    }
    if many.friedman is not None:
        doc["friedman"] = {
            "statistic": many.friedman.statistic,
            "p_value": many.friedman.p_value,
            "degrees_of_freedom": many.friedman.systems - 1,
            "mean_ranks": [
                {"task": m.task.iri, "mean_rank": r}
                for m, r in zip(many.tested, many.friedman.mean_ranks, strict=True)
            ],
        }
        doc["pairwise"] = [
            {
                "a": many.tested[p.first].task.iri,
                "b": many.tested[p.second].task.iri,
                "difference": p.test.difference,
                "p_value": p.test.p_value,
                "holm_p_value": p.adjusted_p,
                "iterations": p.test.iterations,
            }
            for p in many.pairs
        ]
    return doc

"""Significance across many systems: Friedman's test and Holm-corrected pairwise tests.

Systems are compared where they answered the same questions: the finished tasks of one dataset
version, language, profile and experiment type. Sanity systems (``gold``) are left out: they
answer from the gold standard. Per-question scores come from a function the caller passes (the
stored cube, or fresh results), so this module stays pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluators.experiments.model import TaskStatus
from evaluators.experiments.read import TaskSummary
from evaluators.reports.summaries import dataset_label
from evaluators.significance import FriedmanTest, PairwiseTest, friedman, pairwise

# Relabellings per pair when many systems are compared (p-values resolve to 1/2001).
PAIRWISE_ITERATIONS = 2_000
# Beyond this many systems the pairwise tests (k(k-1)/2 of them) are left to Friedman's test.
MAX_PAIRWISE_SYSTEMS = 12


@dataclass(frozen=True, slots=True)
class SignificanceGroup:
    """The systems that answered the same questions, and the tests between them."""

    dataset: str
    language: str
    profile: str
    experiment_type: str
    measure: str
    systems: tuple[str, ...]
    tasks: tuple[int, ...]
    questions: int
    friedman: FriedmanTest
    pairs: tuple[PairwiseTest, ...]
    note: str | None = None


PerQuestion = Callable[[TaskSummary], Mapping[str, float]]


def significance_groups(
    tasks: Sequence[TaskSummary],
    per_question: PerQuestion,
    sanity: frozenset[str] = frozenset(),
    *,
    experiment_type: str = "QA",
    measure: str = "f1",
    iterations: int = PAIRWISE_ITERATIONS,
    seed: int = 0,
) -> tuple[SignificanceGroup, ...]:
    """Group comparable tasks and test each group of two or more (non-sanity) systems.

    Args:
        tasks: an experiment's tasks (or tasks from several experiments).
        per_question: a task's per-question values of ``measure`` by question id.
        sanity: names of sanity systems, left out.
        experiment_type: which results to compare.
        measure: the per-question measure (``f1``: under ``qald-classic`` the script's F1).
        iterations: relabellings per pairwise test.
        seed: the random seed (the same inputs give the same p-values).
    """
    groups: dict[tuple[str, str, str], list[TaskSummary]] = {}
    for task in tasks:
        has_type = any(r.experiment_type == experiment_type for r in task.results)
        if task.status is TaskStatus.FINISHED and has_type and task.plan.system not in sanity:
            key = (dataset_label(task.plan), task.plan.language, task.plan.profile)
            groups.setdefault(key, []).append(task)
    out = []
    for (dataset, language, profile), members in groups.items():
        if len({t.plan.system for t in members}) < 2:
            continue
        scores = [per_question(t) for t in members]
        common = set(scores[0]).intersection(*scores[1:])
        ids = sorted(common)
        if not ids:
            continue
        note = None
        if any(len(s) != len(ids) for s in scores):
            note = f"compared on the {len(ids)} questions every system was scored on"
        matrix = [[s[i] for i in ids] for s in scores]
        pairs: tuple[PairwiseTest, ...] = ()
        if len(members) <= MAX_PAIRWISE_SYSTEMS:
            pairs = tuple(pairwise(matrix, iterations=iterations, seed=seed))
        else:
            note = f"more than {MAX_PAIRWISE_SYSTEMS} systems: Friedman's test only"
        out.append(
            SignificanceGroup(
                dataset,
                language,
                profile,
                experiment_type,
                measure,
                tuple(t.plan.system for t in members),
                tuple(t.plan.number for t in members),
                len(ids),
                friedman(matrix),
                pairs,
                note,
            )
        )
    return tuple(out)


def significance_json(group: SignificanceGroup) -> dict[str, Any]:
    """Return one group as JSON (``experiment show --json``, ``/compare``)."""
    f = group.friedman
    doc: dict[str, Any] = {
        "dataset": group.dataset,
        "language": group.language,
        "profile": group.profile,
        "experiment_type": group.experiment_type,
        "measure": group.measure,
        "systems": list(group.systems),
        "tasks": list(group.tasks),
        "questions": group.questions,
        "friedman": {
            "statistic": f.statistic,
            "p_value": f.p_value,
            "degrees_of_freedom": f.systems - 1,
            "mean_ranks": dict(zip(group.systems, f.mean_ranks, strict=True)),
        },
        "pairwise": [
            {
                "a": group.systems[p.first],
                "b": group.systems[p.second],
                "difference": p.test.difference,
                "p_value": p.test.p_value,
                "holm_p_value": p.adjusted_p,
                "iterations": p.test.iterations,
            }
            for p in group.pairs
        ],
    }
    if group.note:
        doc["note"] = group.note
    return doc

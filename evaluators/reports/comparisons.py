"""Comparisons of systems on the same questions: every statistic the pages and commands show.

* ``test_systems``: Friedman's test over two or more systems and Holm-corrected paired
  randomisation tests between every pair, on the questions all of them were scored on (in the
  dataset's natural order), with a note when some were left out or there are too many systems
  for pairwise tests.
* ``significance_groups``: an experiment's finished tasks grouped where they answered the same
  questions (one dataset version, language, profile and experiment type), each group tested.
* ``compare_pair``: two systems question by question: which each got right (per-question
  F1 = 1), the paired randomisation test and percentile-bootstrap intervals of both means and of
  their difference.

Sanity systems (``gold``) are left out of tests: they answer from the gold standard.
Per-question scores come from the caller (the stored cube, or fresh results), so this module
stays pure; the same inputs and seed give the same numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluators.errors import EvaluationError
from evaluators.experiments.model import TaskStatus
from evaluators.experiments.read import TaskSummary
from evaluators.model import question_order
from evaluators.reports.summaries import dataset_label
from evaluators.significance import (
    FriedmanTest,
    Interval,
    PairwiseTest,
    RandomisationTest,
    approximate_randomisation,
    bootstrap_interval,
    friedman,
    pairwise,
)

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


@dataclass(frozen=True, slots=True)
class Tested:
    """Systems tested on the questions all of them were scored on."""

    questions: tuple[str, ...]
    friedman: FriedmanTest | None  # None: fewer than two systems or no common question
    pairs: tuple[PairwiseTest, ...]
    note: str | None = None


def test_systems(
    scores: Sequence[Mapping[str, float]],
    *,
    iterations: int = PAIRWISE_ITERATIONS,
    seed: int = 0,
    max_pairwise: int = MAX_PAIRWISE_SYSTEMS,
) -> Tested:
    """Run Friedman's test and the pairwise tests over per-question scores (one map a system).

    >>> tested = test_systems([{"1": 1.0, "2": 1.0}, {"1": 0.0, "2": 0.0, "3": 1.0}])
    >>> tested.questions, tested.note, len(tested.pairs)
    (('1', '2'), 'compared on the 2 questions every system was scored on', 1)
    """
    common = set(scores[0]).intersection(*scores[1:]) if scores else set()
    ids = tuple(sorted(common, key=question_order))
    if len(scores) < 2 or not ids:
        return Tested(ids, None, ())
    note = None
    if any(len(s) != len(ids) for s in scores):
        note = f"compared on the {len(ids)} questions every system was scored on"
    matrix = [[s[i] for i in ids] for s in scores]
    pairs: tuple[PairwiseTest, ...] = ()
    if len(scores) <= max_pairwise:
        pairs = tuple(pairwise(matrix, iterations=iterations, seed=seed))
    else:
        note = f"more than {max_pairwise} systems: Friedman's test only"
    return Tested(ids, friedman(matrix), pairs, note)


@dataclass(frozen=True, slots=True)
class PairComparison:
    """Two systems on the same questions (per-question F1 by question id)."""

    questions: tuple[str, ...]  # natural order
    both: tuple[str, ...]
    only_first: tuple[str, ...]
    only_second: tuple[str, ...]
    neither: tuple[str, ...]
    means: tuple[float, float]
    intervals: tuple[Interval | None, Interval | None]
    test: RandomisationTest
    difference: Interval | None


def compare_pair(
    first: Mapping[str, float],
    second: Mapping[str, float],
    *,
    iterations: int = 10_000,
    samples: int = 1000,
    seed: int = 0,
) -> PairComparison:
    """Compare two systems' per-question F1 on the same questions.

    Raises:
        EvaluationError: if the two cover different questions or none.

    >>> found = compare_pair({"1": 1.0, "2": 0.0}, {"1": 1.0, "2": 1.0}, iterations=100)
    >>> found.both, found.only_second, found.means
    (('1',), ('2',), (0.5, 1.0))
    """
    if set(first) != set(second) or not first:
        differing = sorted(set(first) ^ set(second))[:5]
        raise EvaluationError(
            f"The runs cover different questions (for example {differing}); compare runs of "
            "the same dataset version and language"
        )
    ids = tuple(sorted(first, key=question_order))
    a = [first[q] for q in ids]
    b = [second[q] for q in ids]

    def group(want_a: bool, want_b: bool) -> tuple[str, ...]:
        return tuple(q for q in ids if (first[q] == 1.0) == want_a and (second[q] == 1.0) == want_b)

    deltas = [x - y for x, y in zip(a, b, strict=True)]
    return PairComparison(
        ids,
        group(True, True),
        group(True, False),
        group(False, True),
        group(False, False),
        (sum(a) / len(a), sum(b) / len(b)),
        (
            bootstrap_interval(a, samples=samples, seed=seed),
            bootstrap_interval(b, samples=samples, seed=seed),
        ),
        approximate_randomisation(a, b, iterations=iterations, seed=seed),
        bootstrap_interval(deltas, samples=samples, seed=seed),
    )


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
        tested = test_systems([per_question(t) for t in members], iterations=iterations, seed=seed)
        if tested.friedman is None:
            continue
        out.append(
            SignificanceGroup(
                dataset,
                language,
                profile,
                experiment_type,
                measure,
                tuple(t.plan.system for t in members),
                tuple(t.plan.number for t in members),
                len(tested.questions),
                tested.friedman,
                tested.pairs,
                tested.note,
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

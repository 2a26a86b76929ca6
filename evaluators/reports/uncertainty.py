"""What a reader needs to judge a difference in a table: marks next to values that are
significantly better than the next one, and what a historical profile counts as right that
``strict`` does not, counted in the experiment at hand.

* ``marked``: a systems x datasets matrix whose cells carry ``SIGNIFICANT`` where a system is
  significantly better than the system ranked just below it in that column, by the paired test
  the compare page runs (approximate randomisation on per-question F1 over the questions both
  answered, Holm-corrected over the group's pairs: ``comparisons.significance_groups``).
* ``profile_notes``: for each historical profile of an experiment (``Profile.beyond_strict``),
  how many answers it scores higher and lower than ``strict`` scores the same answers (each
  task against the ``strict`` task of the same system, dataset and language).

Pure: summaries, significance groups and per-question scores in, marked tables and notes out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from evaluators.experiments.model import TaskStatus
from evaluators.experiments.read import TaskSummary
from evaluators.qa.profiles import PROFILES, profile_order
from evaluators.reports.comparisons import SignificanceGroup
from evaluators.reports.render import SIGNIFICANT, Estimate
from evaluators.reports.summaries import Summary, SummaryCell, dataset_label, plain

# Holm-corrected p-values below this mark a difference as significant.
ALPHA = 0.05
MARK_NOTE = (
    f"{SIGNIFICANT}: significantly better than the next system below it in this column "
    f"(paired approximate randomisation on per-question F1, Holm-corrected p < {ALPHA}); "
    "[low, high]: 95% bootstrap interval (questions resampled)."
)


def _better(group: SignificanceGroup, upper: str, lower: str) -> bool:
    """Return whether ``upper`` is significantly better than ``lower`` in ``group``."""
    for pair in group.pairs:
        a, b = group.systems[pair.first], group.systems[pair.second]
        if {a, b} != {upper, lower} or pair.adjusted_p >= ALPHA:
            continue
        difference = pair.test.difference if a == upper else -pair.test.difference
        return difference > 0
    return False


def marked(summary: Summary, groups: Sequence[SignificanceGroup]) -> Summary:
    """Return ``summary`` with ``SIGNIFICANT`` on each value significantly better than the next
    lower value of its column (sanity systems are neither marked nor compared)."""
    rows = [list(r.cells) for r in summary.rows]
    for column, dataset in enumerate(summary.columns):
        found = [
            (value, n)
            for n, row in enumerate(summary.rows)
            if not row.sanity
            and (cell := plain(row.cells[column])) is not None
            and (value := cell.value) is not None
        ]
        found.sort(key=lambda item: -item[0])
        for (_, upper), (_, lower) in pairwise(found):
            a, b = summary.rows[upper], summary.rows[lower]
            group = next(
                (
                    g
                    for g in groups
                    if (g.dataset, g.language, g.profile, g.experiment_type)
                    == (dataset, summary.language, a.profile, summary.experiment_type)
                ),
                None,
            )
            if group is not None and _better(group, a.system, b.system):
                rows[upper][column] = _with_mark(rows[upper][column])
    new_rows = tuple(replace(r, cells=tuple(c)) for r, c in zip(summary.rows, rows, strict=True))
    return replace(summary, rows=new_rows)


def _with_mark(cell: SummaryCell) -> SummaryCell:
    if isinstance(cell, Estimate):
        return replace(cell, mark=SIGNIFICANT)
    return Estimate(cell, mark=SIGNIFICANT) if cell is not None else None


@dataclass(frozen=True, slots=True)
class ProfileNote:
    """What a historical profile counts beyond ``strict``, counted in one experiment."""

    profile: str
    counts: str
    higher: int
    lower: int
    answers: int

    @property
    def text(self) -> str:
        """Return the note as one sentence for a page, a table or a paper."""
        head = f"{self.profile} counts as right what strict does not: {self.counts}."
        if not self.answers:
            return (
                f"{head} This experiment has no strict task of the same system, dataset and "
                "language to count the difference on."
            )
        return (
            f"{head} In this experiment it scores {self.higher} of {self.answers} answers "
            f"higher than strict and {self.lower} lower (per-question F1; each task against "
            "the strict task of the same system, dataset and language)."
        )


def profile_notes(
    tasks: Sequence[TaskSummary], per_question: Callable[[TaskSummary], Mapping[str, float]]
) -> tuple[ProfileNote, ...]:
    """Return a note for each historical profile the experiment's finished tasks used."""
    done = [t for t in tasks if t.status is TaskStatus.FINISHED and t.results]
    strict = {
        (t.plan.system, dataset_label(t.plan), t.plan.language): t
        for t in done
        if t.plan.profile == "strict"
    }
    out = []
    used = sorted({t.plan.profile for t in done}, key=profile_order)
    for name in used:
        counts = PROFILES[name].beyond_strict if name in PROFILES else ""
        if not counts:
            continue
        higher = lower = answers = 0
        for task in (t for t in done if t.plan.profile == name):
            twin = strict.get((task.plan.system, dataset_label(task.plan), task.plan.language))
            if twin is None:
                continue
            mine, theirs = per_question(task), per_question(twin)
            common = set(mine) & set(theirs)
            answers += len(common)
            higher += sum(1 for q in common if mine[q] > theirs[q])
            lower += sum(1 for q in common if mine[q] < theirs[q])
        out.append(ProfileNote(name, counts, higher, lower, answers))
    return tuple(out)

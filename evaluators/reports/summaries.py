"""Summaries of an experiment's tasks: per language, and systems x datasets.

Pure: stored task summaries in, tables of measure values out. A language appears only when a
task asked it (a question with texts in twelve languages asked in English is not "scored in
German"). Each summary cell holds the headline measure of its task's profile and experiment type
(``evaluators.reports.headline``) unless another measure is asked for; sanity systems are
marked, so a renderer can show them apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from evaluators.experiments.model import SystemDescription, TaskPlan, TaskStatus
from evaluators.experiments.read import TaskSummary
from evaluators.model import language_key
from evaluators.qa.profiles import profile_order
from evaluators.reports.headline import headline, is_sanity
from evaluators.reports.render import Estimate
from evaluators.results import INTERVALS, QA, MeasureValue, type_order

# A summary cell: a value (with its interval where one is stored), or nothing.
SummaryCell = MeasureValue | Estimate | None


def sanity_systems(systems: Iterable[SystemDescription]) -> frozenset[str]:
    """Return the names of the sanity systems among an experiment's systems."""
    return frozenset(s.name for s in systems if is_sanity(s.kind, s.builtin))


def measure_value(task: TaskSummary, experiment_type: str, measure: str) -> MeasureValue | None:
    """Return one aggregate value of a finished task (``None`` when it was not reported)."""
    if task.status is not TaskStatus.FINISHED:
        return None
    for result in task.results:
        if result.experiment_type == experiment_type:
            return next((m for m in result.measures if m.measure == measure), None)
    return None


def measure_estimate(task: TaskSummary, experiment_type: str, measure: str) -> SummaryCell:
    """Return one aggregate value of a finished task with its stored 95% interval, if any."""
    found = measure_value(task, experiment_type, measure)
    if found is None or measure not in INTERVALS:
        return found
    low, high = (measure_value(task, experiment_type, m) for m in INTERVALS[measure])
    return Estimate(found, low.value if low else None, high.value if high else None)


def plain(cell: SummaryCell) -> MeasureValue | None:
    """Return a summary cell's value without its interval."""
    return cell.value if isinstance(cell, Estimate) else cell


def dataset_label(plan: TaskPlan) -> str:
    """Return ``name@version``, the dataset column label."""
    return f"{plan.dataset}@{plan.version}"


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """One system on one dataset under one profile, with one cell per column."""

    system: str
    dataset: str
    profile: str
    sanity: bool
    cells: tuple[SummaryCell, ...]


@dataclass(frozen=True, slots=True)
class Summary:
    """A table of measure values: which measure, the columns, and the rows."""

    title: str
    experiment_type: str
    measure: str
    columns: tuple[str, ...]
    rows: tuple[SummaryRow, ...]
    language: str = ""  # a systems x datasets matrix's language (languages are its columns else)


def languages_asked(tasks: Iterable[TaskSummary]) -> tuple[str, ...]:
    """Return the languages the tasks asked, in first-asked order (each once).

    >>> from evaluators.experiments.read import TaskSummary
    >>> plan = lambda n, lang: TaskPlan(n, "s", "d", 1, "", lang, "strict")
    >>> tasks = [TaskSummary(plan(1, "en"), "", TaskStatus.QUEUED, -1),
    ...          TaskSummary(plan(2, "pt_BR"), "", TaskStatus.QUEUED, -1)]
    >>> languages_asked(tasks)
    ('en', 'pt_BR')
    """
    seen: dict[str, str] = {}
    for task in tasks:
        seen.setdefault(language_key(task.plan.language), task.plan.language)
    return tuple(seen.values())


def language_summary(
    tasks: Sequence[TaskSummary],
    sanity: frozenset[str] = frozenset(),
    *,
    experiment_type: str = QA,
    measure: str | None = None,
) -> tuple[Summary, ...]:
    """Return per profile one table: system x dataset rows, one column per language asked.

    ``measure`` defaults to each profile's headline measure for ``experiment_type``.
    """
    out = []
    for profile in sorted(dict.fromkeys(t.plan.profile for t in tasks), key=profile_order):
        chosen = measure or headline(profile, experiment_type)[0]
        mine = [t for t in tasks if t.plan.profile == profile]
        languages = languages_asked(mine)
        cells: dict[tuple[str, str], dict[str, SummaryCell]] = {}
        for task in mine:
            key = (task.plan.system, dataset_label(task.plan))
            cells.setdefault(key, {})[language_key(task.plan.language)] = measure_estimate(
                task, experiment_type, chosen
            )
        rows = tuple(
            SummaryRow(
                system,
                dataset,
                profile,
                system in sanity,
                tuple(found.get(language_key(lang)) for lang in languages),
            )
            for (system, dataset), found in cells.items()
        )
        title = f"{experiment_type} by language ({profile} profile)"
        out.append(Summary(title, experiment_type, chosen, languages, rows))
    return tuple(out)


def system_dataset_matrices(
    tasks: Sequence[TaskSummary],
    sanity: frozenset[str] = frozenset(),
    *,
    measure: str | None = None,
) -> tuple[Summary, ...]:
    """Return per experiment type, profile and language one systems x datasets table.

    Types come in the registry's order; each cell is the task's headline measure (or
    ``measure``) for that type.
    """
    keys: dict[tuple[str, str, str], None] = {}
    for task in tasks:
        for result in task.results:
            keys.setdefault((result.experiment_type, task.plan.profile, task.plan.language))
    out = []
    ordered = sorted(keys, key=lambda k: (type_order(k[0]), profile_order(k[1]), k[2]))
    for kind, profile, language in ordered:
        chosen = measure or headline(profile, kind)[0]
        mine = [t for t in tasks if t.plan.profile == profile and t.plan.language == language]
        datasets = tuple(dict.fromkeys(dataset_label(t.plan) for t in mine))
        cells: dict[str, dict[str, SummaryCell]] = {}
        for task in mine:
            found = cells.setdefault(task.plan.system, {})
            found[dataset_label(task.plan)] = measure_estimate(task, kind, chosen)
        rows = tuple(
            SummaryRow(system, "", profile, system in sanity, tuple(v.get(d) for d in datasets))
            for system, v in cells.items()
        )
        title = f"{kind}: systems x datasets ({profile} profile, {language})"
        out.append(Summary(title, kind, chosen, datasets, rows, language))
    return tuple(out)


def defined(cells: Mapping[str, SummaryCell]) -> dict[str, float]:
    """Return the defined values of a mapping of cells."""
    found = {k: plain(v) for k, v in cells.items()}
    return {k: v.value for k, v in found.items() if v is not None and v.value is not None}

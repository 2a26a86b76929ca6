"""What the lists show of each experiment and system, read from the experiment index alone.

An experiment's row names its systems, its dataset versions, its headline result (the best QA
value of a non-sanity system under its profile's headline measure, ``evaluators.reports
.headline``), its state in words and its date; a system's row its experiments, datasets and best
headline per dataset. Everything comes from ``server.listings`` (the index keeps each task's
aggregate values), so a list costs what it shows, never a store read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from evaluators.qa.profiles import PROFILE_TERMS, profile_order
from evaluators.reports.headline import headline, is_sanity
from evaluators.results import INTERVALS, MEASURES, QA
from server.listings import ExperimentEntry, TaskScores
from vocab import iris
from vocab.standard import GERBIL

# profile term IRI -> profile id
PROFILE_NAMES = {term.value: name for name, term in PROFILE_TERMS.items()}
_QA_TYPE = GERBIL.QA.value
# Ways to order the experiment list (``?sort=``); the first is the default.
SORTS = ("newest", "oldest", "score", "system", "dataset")


@dataclass(frozen=True, slots=True)
class Dataset:
    """A dataset version as lists show it: ``name v1`` linking to its page."""

    name: str
    version: int
    path: str

    @property
    def label(self) -> str:
        """Return ``name vN``."""
        return f"{self.name} v{self.version}"


@dataclass(frozen=True, slots=True)
class Headline:
    """A best result: the measure, its value, and whose and on what it is."""

    measure: str
    value: float
    system: str
    dataset: Dataset | None
    profile: str
    sanity: bool = False
    low: float | None = None  # the stored 95% bootstrap interval (None: none stored)
    high: float | None = None

    @property
    def label(self) -> str:
        """Return the measure's label."""
        return MEASURES[self.measure].label


def dataset_of(base: str, version: str) -> Dataset | None:
    """Return the dataset version an IRI names (None if it names none).

    >>> dataset_of("http://x.test", "http://x.test/dataset/qald-9/v2").label
    'qald-9 v2'
    """
    ref = iris.parse(base, version)
    if ref is None or ref.kind != "version" or not ref.exact:
        return None
    return Dataset(ref.parts[0], ref.number, version[len(base) :])


def profile_name(scores: TaskScores) -> str:
    """Return the profile id of a task's scores."""
    return PROFILE_NAMES.get(scores.profile, scores.profile.rsplit("/", 1)[-1])


def is_qa(scores: TaskScores) -> bool:
    """Return whether these are a task's QA values (not a sub-experiment's)."""
    return scores.type == _QA_TYPE


def headline_value(scores: TaskScores) -> tuple[str, float] | None:
    """Return the headline measure of a task's QA values and its value (None: undefined)."""
    measure = headline(profile_name(scores), QA)[0]
    value = scores.value(MEASURES[measure].term.value)
    return None if value is None else (measure, value)


def _headline(scores: TaskScores, system: str, dataset: Dataset | None) -> Headline | None:
    found = headline_value(scores)
    if found is None:
        return None
    measure, value = found
    low, high = (
        (scores.value(MEASURES[b].term.value) for b in INTERVALS[measure])
        if measure in INTERVALS
        else (None, None)
    )
    sanity = is_sanity(scores.kind, scores.builtin)
    return Headline(measure, value, system, dataset, profile_name(scores), sanity, low, high)


def _rank(h: Headline) -> tuple[bool, tuple[int, str], float]:
    # Real systems before sanity checks, then the profile (strict first: a number under a
    # historical profile never outranks one under strict), then the value.
    return (h.sanity, profile_order(h.profile), -h.value)


def best_headline(
    entries: Iterable[ExperimentEntry], base: str, system: str | None = None
) -> Headline | None:
    """Return the best headline value (of ``system`` only, if given), under the first profile
    in ``profile_order`` that has one (``strict`` first); sanity systems count only when
    nothing else has a value (and are marked)."""
    best: Headline | None = None
    for entry in entries:
        labels = {s.iri: s.label for s in entry.systems}
        for scores in entry.scores:
            if not is_qa(scores) or (system is not None and scores.system != system):
                continue
            label = labels.get(scores.system, scores.system.rsplit("/", 1)[-1])
            found = _headline(scores, label, dataset_of(base, scores.version))
            if found is not None and (best is None or _rank(found) < _rank(best)):
                best = found
    return best


def state_label(states: tuple[str, ...]) -> str:
    """Return an experiment's state in words from its tasks' states.

    >>> state_label(("Finished",)), state_label(("Finished", "Running")), state_label(())
    ('finished', 'running', 'empty')
    >>> state_label(("Aborted", "Finished"))
    'ended: aborted, finished'
    """
    names = {s.lower() for s in states}
    if not names:
        return "empty"
    for open_state in ("running", "queued"):
        if open_state in names:
            return open_state
    if names == {"finished"}:
        return "finished"
    return "ended: " + ", ".join(sorted(names))


@dataclass(frozen=True, slots=True)
class ExperimentRow:
    """One experiment in the list."""

    entry: ExperimentEntry
    systems: tuple[str, ...]
    datasets: tuple[Dataset, ...]
    headline: Headline | None
    state: str

    @property
    def date(self) -> str | None:
        """Return when the experiment started (or was created)."""
        return self.entry.started


def experiment_row(entry: ExperimentEntry, base: str) -> ExperimentRow:
    """Return what the experiment list shows of one experiment."""
    versions = dict.fromkeys(s.version for s in entry.scores)
    datasets = tuple(d for v in versions if (d := dataset_of(base, v)) is not None)
    return ExperimentRow(
        entry,
        tuple(s.label for s in entry.systems),
        datasets,
        best_headline((entry,), base),
        state_label(entry.states),
    )


def sort_key(sort: str, base: str) -> Callable[[ExperimentEntry], Any] | None:
    """Return the key that orders experiment entries by ``sort`` (newest first is the index's
    own order: ``None``)."""
    if sort == "score":

        def _score(entry: ExperimentEntry) -> float:
            found = best_headline((entry,), base)
            return -found.value if found is not None and not found.sanity else 1.0

        return _score
    if sort == "system":
        return lambda e: tuple(s.label.lower() for s in e.systems) or ("\uffff",)
    if sort == "dataset":
        return lambda e: tuple(sorted({s.version for s in e.scores})) or ("\uffff",)
    return None


@dataclass(frozen=True, slots=True)
class SystemRow:
    """One system in the list: its experiments and tasks, datasets and best result."""

    iri: str
    label: str
    experiments: int
    tasks: int
    datasets: tuple[Dataset, ...]
    best: Headline | None


def system_rows(entries: Iterable[ExperimentEntry], base: str) -> list[SystemRow]:
    """Return every system of ``entries`` with its totals, ordered by label."""
    found: dict[str, tuple[str, list[ExperimentEntry], int]] = {}
    for entry in entries:
        for system in entry.systems:
            label, mine, tasks = found.get(system.iri, (system.label, [], 0))
            mine.append(entry)
            found[system.iri] = (label, mine, tasks + system.tasks)
    rows = []
    for iri, (label, mine, tasks) in found.items():
        versions = dict.fromkeys(s.version for e in mine for s in e.scores if s.system == iri)
        datasets = tuple(d for v in versions if (d := dataset_of(base, v)) is not None)
        rows.append(
            SystemRow(iri, label, len(mine), tasks, datasets, best_headline(mine, base, iri))
        )
    rows.sort(key=lambda r: (r.label.lower(), r.iri))
    return rows


@dataclass(frozen=True, slots=True)
class DatasetResult:
    """A system's results on one dataset version: its best task and how many it has."""

    dataset: Dataset
    best: Headline | None
    task: str | None
    tasks: int


def results_across_datasets(
    entries: Iterable[ExperimentEntry], base: str, system: str
) -> list[DatasetResult]:
    """Return, per dataset version, a system's best QA headline and its number of tasks."""
    found: dict[str, list[TaskScores]] = {}
    for entry in entries:
        for scores in entry.scores:
            if scores.system == system and is_qa(scores):
                found.setdefault(scores.version, []).append(scores)
    out = []
    for version, mine in found.items():
        dataset = dataset_of(base, version)
        if dataset is None:
            continue
        ranked = [(h, s) for s in mine if (h := _headline(s, "", dataset)) is not None]
        best = min(ranked, key=lambda hs: _rank(hs[0]), default=None)
        headline_ = replace(best[0], sanity=False) if best is not None else None
        task = best[1].task if best is not None else None
        out.append(DatasetResult(dataset, headline_, task, len(mine)))
    out.sort(key=lambda r: (r.dataset.name, r.dataset.version))
    return out

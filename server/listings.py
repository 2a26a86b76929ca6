"""The experiment index: every experiment's tasks, states, systems and scores, kept from changes.

The lists of experiments and systems, and the leaderboards, must answer in time that grows with
what they show, not with the number of experiments in the store. So each experiment graph is
summarised once, with queries bound to that graph, and summarised again only when a change
touches the graph; experiments are kept in id order (ids sort by date), so a page is a slice,
and each (dataset version, experiment type) pair knows the experiments that scored on it, with
their aggregate values (``TaskScores``), so a leaderboard reads only those. ``build`` reads
every experiment once (at start-up, and after a write whose effect is unknown). The index holds all
experiments, private ones too: callers filter by what the reader may see. Not thread-safe: one
owner applies changes (the server's ``Services``).
"""

from __future__ import annotations

import bisect
import logging
import math
import os
import pickle  # our own file in the private data directory, checked on reading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from pyoxigraph import Literal, NamedNode, QuerySolutions

from evaluators.results import MEASURES
from store import graphs, queries
from store.changes import Change, ChangeJournal
from store.protocol import RdfStore
from vocab import iris

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SystemCount:
    """A system of an experiment and how many of the experiment's tasks it has."""

    iri: str
    label: str
    tasks: int


# Every measure's slot in a TaskScores' values (term IRI -> position); NaN marks no value.
_SLOTS = {info.term.value: n for n, info in enumerate(MEASURES.values())}
# Experiments pickled per chunk of a snapshot. Pickling holds the interpreter lock: the index of
# 10,000 experiments (45 MB) took 0.6 s in one piece, every request waiting; a chunk takes ~15 ms.
SNAPSHOT_CHUNK = 250


@dataclass(frozen=True, slots=True)
class TaskScores:
    """The aggregate values of one task for one experiment type, with what a board ranks by.

    ``values`` packs one double per measure (``_SLOTS`` order, NaN when absent): about 370
    bytes per task and type, so 10,000 experiments cost megabytes, not a store scan.
    """

    task: str
    system: str
    version: str
    type: str  # the experiment type's IRI
    language: str
    profile: str  # the profile's IRI
    kind: str | None
    builtin: str | None
    values: bytes

    def value(self, measure: str) -> float | None:
        """Return the value of ``measure`` (its term IRI), or None when the task has none."""
        slot = _SLOTS.get(measure)
        if slot is None:
            return None
        found = memoryview(self.values).cast("d")[slot]
        return None if math.isnan(found) else found


@dataclass(frozen=True, slots=True)
class TaskEntry:
    """One task of an experiment: its state and plan as IRIs (None where the graph has none)."""

    task: str
    state: str | None
    system: str | None
    version: str | None
    language: str | None
    profile: str | None


@dataclass(frozen=True, slots=True)
class ExperimentEntry:
    """One experiment as the lists show it."""

    id: str
    iri: str
    graph: NamedNode
    tasks: int
    started: str | None
    states: tuple[str, ...]
    systems: tuple[SystemCount, ...]
    scores: tuple[TaskScores, ...] = ()
    task_list: tuple[TaskEntry, ...] = ()


def _snapshot_format() -> str:
    """Return what a snapshot must say it is: the shapes it pickles and the measure slots.

    A snapshot written by another version (other fields, other measures) is not read.
    """
    shapes = [
        ",".join(f.name for f in fields(kind))
        for kind in (ExperimentEntry, TaskScores, SystemCount, TaskEntry)
    ]
    return "experiment-index 2|" + "|".join(shapes) + "|" + ",".join(_SLOTS)


def _read_snapshot(path: Path) -> tuple[str | None, int, dict[str, ExperimentEntry]] | None:
    """Return the journal epoch, mark and entries a snapshot holds (None: another format).

    Raises:
        OSError, pickle.UnpicklingError, ValueError, TypeError, EOFError, AttributeError: the
            file cannot be read, or is cut short or damaged.
    """
    with path.open("rb") as fh:
        kind, epoch, mark, count = pickle.load(fh)  # noqa: S301 (see the import)
        if kind != _snapshot_format() or not isinstance(count, int):
            return None
        entries: dict[str, ExperimentEntry] = {}
        while len(entries) < count:
            entries.update(pickle.load(fh))  # noqa: S301
    return epoch, mark, entries


def _text(term: object) -> str | None:
    return term.value if isinstance(term, Literal | NamedNode) else None


@dataclass(slots=True)
class _Builder:
    iri: str
    graph: NamedNode
    started: str | None = None
    created: str | None = None
    tasks: dict[str, TaskEntry] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)

    def entry(self) -> ExperimentEntry:
        counts: dict[str, int] = {}
        for task in self.tasks.values():
            if task.system is not None:
                counts[task.system] = counts.get(task.system, 0) + 1
        return ExperimentEntry(
            id=iris.experiment_id_of(self.iri),
            iri=self.iri,
            graph=self.graph,
            tasks=len(self.tasks),
            started=self.started or self.created,
            states=tuple(
                sorted({t.state.rsplit("#", 1)[-1] for t in self.tasks.values() if t.state})
            ),
            systems=tuple(
                SystemCount(s, self.labels[s], counts[s])
                for s in sorted(counts, key=lambda k: (self.labels[k], k))
            ),
            task_list=tuple(self.tasks[k] for k in sorted(self.tasks, key=_task_order)),
        )


def _task_order(task: str) -> tuple[int, str]:
    """Tasks in number order (``…/task/<id>/<n>``), then by IRI."""
    number = iris.task_number_of(task)
    return (1 << 30 if number is None else number, task)


def _scores(rows: QuerySolutions) -> dict[str, tuple[TaskScores, ...]]:
    """Group board rows by graph, then by task and experiment type."""
    found: dict[str, dict[tuple[str, str], tuple[list[str | None], array[float]]]] = {}
    for row in rows:
        graph, measure, value = row["graph"], row["measure"], row["value"]
        slot = _SLOTS.get(measure.value) if isinstance(measure, NamedNode) else None
        if not isinstance(graph, NamedNode) or slot is None or not isinstance(value, Literal):
            continue
        try:
            number = float(value.value)
        except ValueError:
            continue
        keys = [
            _text(row[name])
            for name in ("task", "system", "version", "type", "language", "profile")
        ]
        if None in keys:
            continue
        per_graph = found.setdefault(graph.value, {})
        key = (str(keys[0]), str(keys[3]))
        if key not in per_graph:
            keys += [_text(row["kind"]), _text(row["builtin"])]
            per_graph[key] = (keys, array("d", [math.nan]) * len(_SLOTS))
        per_graph[key][1][slot] = number
    return {
        graph: tuple(
            TaskScores(
                task=str(keys[0]),
                system=str(keys[1]),
                version=str(keys[2]),
                type=str(keys[3]),
                language=str(keys[4]),
                profile=str(keys[5]),
                kind=keys[6],
                builtin=keys[7],
                values=values.tobytes(),
            )
            for _key, (keys, values) in sorted(per_graph.items())
        )
        for graph, per_graph in found.items()
    }


def _entries(rows: QuerySolutions) -> dict[str, ExperimentEntry]:
    found: dict[str, _Builder] = {}
    for row in rows:
        graph, experiment = row["graph"], row["experiment"]
        if not isinstance(graph, NamedNode) or not isinstance(experiment, NamedNode):
            continue
        builder = found.setdefault(graph.value, _Builder(experiment.value, graph))
        builder.created = builder.created or _text(row["created"])
        started = _text(row["started"])
        if started is not None and (builder.started is None or started < builder.started):
            builder.started = started
        task, system = _text(row["task"]), _text(row["system"])
        if task is None:
            continue
        builder.tasks[task] = TaskEntry(
            task,
            _text(row["state"]),
            system,
            _text(row["version"]),
            _text(row["language"]),
            _text(row["profile"]),
        )
        if system is not None:
            builder.labels.setdefault(system, _text(row["label"]) or system.rsplit("/", 1)[-1])
    return {name: builder.entry() for name, builder in found.items()}


class ExperimentIndex:
    """Every experiment's ``ExperimentEntry``, in id order, updated at the cost of each change."""

    def __init__(self, store: RdfStore, base: str, snapshot: Path | None = None) -> None:
        self._store = store
        self._base = base
        self._prefix = graphs.experiment_graph_prefix(base)
        self._entries: dict[str, ExperimentEntry] = {}
        self._order: list[str] = []  # graph IRIs, ascending experiment id
        self._systems: dict[str, list[str]] = {}  # system IRI -> its experiments' graph IRIs
        # (dataset version IRI, experiment type IRI) -> graph IRIs of experiments scored on it
        self._boards: dict[tuple[str, str], set[str]] = {}
        self.version = 0
        # The store journal's entry (and epoch) every change up to which the index reflects.
        self.mark = 0
        journal = getattr(store, "journal", None)
        self._journal = journal if isinstance(journal, ChangeJournal) else None
        # Experiments summarised again at start-up (None: all of them were read).
        self.caught_up: int | None = None
        # The version the snapshot on disk holds (-1: none, or an older one).
        self.on_disk = -1
        if snapshot is None or not self._resume(snapshot):
            self.build()

    # ------------------------------------------------------------------ snapshots
    def state(self) -> tuple[int, dict[str, ExperimentEntry]]:
        """Return what ``save`` writes: the mark and a copy of the entries (cheap: shared)."""
        return self.mark, dict(self._entries)

    def save(self, path: Path, state: tuple[int, dict[str, ExperimentEntry]] | None = None) -> None:
        """Write the index (or a ``state`` taken earlier) to ``path`` for the next start."""
        mark, entries = state if state is not None else self.state()
        epoch = self._journal.epoch if self._journal is not None else None
        items = list(entries.items())
        partial = path.with_name(path.name + ".part")
        with partial.open("wb") as fh:
            pickle.dump((_snapshot_format(), epoch, mark, len(items)), fh, pickle.HIGHEST_PROTOCOL)
            for start in range(0, len(items), SNAPSHOT_CHUNK):
                pickle.dump(items[start : start + SNAPSHOT_CHUNK], fh, pickle.HIGHEST_PROTOCOL)
                time.sleep(0)  # the request threads run between chunks
        partial.chmod(0o600)
        os.replace(partial, path)

    def _resume(self, path: Path) -> bool:
        """Read a snapshot and summarise again what was written since; False: build instead."""
        if self._journal is None:
            return False
        try:
            found = _read_snapshot(path)
        except (OSError, pickle.UnpicklingError, ValueError, TypeError, EOFError, AttributeError):
            return False
        if found is None:
            return False
        epoch, mark, entries = found
        span = self._journal.since(mark, epoch)
        if span is None or span.everything:
            return False
        self._entries = entries
        self._rebuild_derived()
        touched = [g for g in span.graphs if g.startswith(self._prefix)]
        self._refresh(touched)
        self.mark, self.caught_up = span.last, len(touched)
        if span.last == mark:
            self.on_disk = self.version  # nothing written since: no need to write it again
        log.info("experiment index kept: %d experiments summarised again", len(touched))
        return True

    def _rebuild_derived(self) -> None:
        self._order = sorted(self._entries)
        self._systems = {}
        self._boards = {}
        for name in self._order:
            entry = self._entries[name]
            for system in entry.systems:
                self._systems.setdefault(system.iri, []).append(name)
            self._boards_of(name, entry, add=True)
        self.version += 1

    def _read(self, graph: NamedNode | None = None) -> dict[str, ExperimentEntry]:
        """Summarise the experiment in ``graph`` (or every experiment: two queries in all)."""
        bound = {"graph": graph} if graph is not None else None
        result = self._store.query(queries.load("experiment_index"), substitutions=bound)
        assert isinstance(result, QuerySolutions)
        entries = _entries(result)
        result = self._store.query(queries.load("experiment_board"), substitutions=bound)
        assert isinstance(result, QuerySolutions)
        scores = _scores(result)
        return {
            g: replace(e, scores=scores.get(g, ()))
            for g, e in entries.items()
            if g.startswith(self._prefix)
        }

    def _boards_of(self, name: str, entry: ExperimentEntry, add: bool) -> None:
        for key in {(s.version, s.type) for s in entry.scores}:
            if add:
                self._boards.setdefault(key, set()).add(name)
            else:
                self._boards.get(key, set()).discard(name)

    def build(self) -> None:
        """Summarise every experiment of the store (two queries over all experiment graphs)."""
        mark = self._journal.last if self._journal is not None else 0
        self._entries = self._read()
        self._rebuild_derived()
        self.mark = mark

    def apply(self, changes: list[Change]) -> bool:
        """Summarise again the experiments ``changes`` touch; return whether anything changed."""
        mark = max([self.mark, *(c.journal for c in changes)])
        if any(c.everything for c in changes):
            self.build()
            self.mark = max(self.mark, mark)
            return True
        touched = {
            g.value
            for change in changes
            for g in change.touched()
            if g.value.startswith(self._prefix)
        }
        changed = self._refresh(touched)
        self.mark = mark
        return changed

    def _refresh(self, touched: Iterable[str]) -> bool:
        """Summarise the experiments of ``touched`` again; return whether anything changed."""
        changed = False
        for name in touched:
            entry = self._read(NamedNode(name)).get(name)
            if entry == self._entries.get(name):
                continue
            changed = True
            old = self._entries.get(name)
            for system in old.systems if old is not None else ():
                self._systems[system.iri].remove(name)
            if old is not None:
                self._boards_of(name, old, add=False)
            if entry is None:
                del self._entries[name]
                self._order.remove(name)
                continue
            if old is None:
                bisect.insort(self._order, name)
            self._entries[name] = entry
            for system in entry.systems:
                bisect.insort(self._systems.setdefault(system.iri, []), name)
            self._boards_of(name, entry, add=True)
        if changed:
            self.version += 1
        return changed

    def newest_first(self, visible: Callable[[NamedNode], bool]) -> Iterator[ExperimentEntry]:
        """Yield the experiments ``visible`` accepts, newest first (lazily: pages take slices)."""
        for name in reversed(self._order):
            entry = self._entries[name]
            if visible(entry.graph):
                yield entry

    def of_system(
        self, system: str, visible: Callable[[NamedNode], bool]
    ) -> Iterator[ExperimentEntry]:
        """Yield the experiments of ``system`` (an IRI) that ``visible`` accepts, newest first."""
        for name in reversed(self._systems.get(system, [])):
            entry = self._entries[name]
            if visible(entry.graph):
                yield entry

    def board(
        self, version: str, kind: str, visible: Callable[[NamedNode], bool]
    ) -> Iterator[tuple[ExperimentEntry, TaskScores]]:
        """Yield the scores of ``kind`` (a type IRI) on ``version`` of the visible experiments."""
        for name in sorted(self._boards.get((version, kind), ())):
            entry = self._entries.get(name)
            if entry is None or not visible(entry.graph):
                continue
            for scores in entry.scores:
                if scores.version == version and scores.type == kind:
                    yield entry, scores

    def entries(self) -> list[ExperimentEntry]:
        """Return every entry (private ones too), oldest first."""
        return [self._entries[name] for name in self._order]

"""The experiment index: every experiment's tasks, their states and its systems, kept from changes.

The lists of experiments and systems must answer in time that grows with the page shown, not
with the number of experiments in the store. So each experiment graph is summarised once, with a
query bound to that graph, and summarised again only when a change touches the graph;
experiments are kept in id order (ids sort by date), so a page is a slice. ``build`` reads every
experiment once (at start-up, and after a write whose effect is unknown). The index holds all
experiments, private ones too: callers filter by what the reader may see. Not thread-safe: one
owner applies changes (the server's ``Services``).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import unquote

from pyoxigraph import Literal, NamedNode, QuerySolutions

from store import graphs, queries
from store.changes import Change
from store.protocol import RdfStore


@dataclass(frozen=True, slots=True)
class SystemCount:
    """A system of an experiment and how many of the experiment's tasks it has."""

    iri: str
    label: str
    tasks: int


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


def _text(term: object) -> str | None:
    return term.value if isinstance(term, Literal | NamedNode) else None


@dataclass(slots=True)
class _Builder:
    iri: str
    graph: NamedNode
    started: str | None = None
    created: str | None = None
    tasks: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)

    def entry(self) -> ExperimentEntry:
        counts: dict[str, int] = {}
        for _state, system in self.tasks.values():
            if system is not None:
                counts[system] = counts.get(system, 0) + 1
        return ExperimentEntry(
            id=unquote(self.iri.rsplit("/", 1)[-1]),
            iri=self.iri,
            graph=self.graph,
            tasks=len(self.tasks),
            started=self.started or self.created,
            states=tuple(sorted({s.rsplit("#", 1)[-1] for s, _ in self.tasks.values() if s})),
            systems=tuple(
                SystemCount(s, self.labels[s], counts[s])
                for s in sorted(counts, key=lambda k: (self.labels[k], k))
            ),
        )


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
        builder.tasks[task] = (_text(row["state"]), system)
        if system is not None:
            builder.labels.setdefault(system, _text(row["label"]) or system.rsplit("/", 1)[-1])
    return {name: builder.entry() for name, builder in found.items()}


class ExperimentIndex:
    """Every experiment's ``ExperimentEntry``, in id order, updated at the cost of each change."""

    def __init__(self, store: RdfStore, base: str) -> None:
        self._store = store
        self._base = base
        self._prefix = graphs.experiment_graph_prefix(base)
        self._entries: dict[str, ExperimentEntry] = {}
        self._order: list[str] = []  # graph IRIs, ascending experiment id
        self._systems: dict[str, list[str]] = {}  # system IRI -> its experiments' graph IRIs
        self.version = 0
        self.build()

    def build(self) -> None:
        """Summarise every experiment of the store (one query over all experiment graphs)."""
        result = self._store.query(queries.load("experiment_index"))
        assert isinstance(result, QuerySolutions)
        entries = _entries(result)
        self._entries = {g: e for g, e in entries.items() if g.startswith(self._prefix)}
        self._order = sorted(self._entries)
        self._systems = {}
        for name in self._order:
            for system in self._entries[name].systems:
                self._systems.setdefault(system.iri, []).append(name)
        self.version += 1

    def apply(self, changes: list[Change]) -> bool:
        """Summarise again the experiments ``changes`` touch; return whether anything changed."""
        if any(c.everything for c in changes):
            self.build()
            return True
        touched = {
            g.value
            for change in changes
            for g in change.touched()
            if g.value.startswith(self._prefix)
        }
        changed = False
        for name in touched:
            result = self._store.query(
                queries.load("experiment_index"), substitutions={"graph": NamedNode(name)}
            )
            assert isinstance(result, QuerySolutions)
            entry = _entries(result).get(name)
            if entry == self._entries.get(name):
                continue
            changed = True
            old = self._entries.get(name)
            for system in old.systems if old is not None else ():
                self._systems[system.iri].remove(name)
            if entry is None:
                del self._entries[name]
                self._order.remove(name)
                continue
            if old is None:
                bisect.insort(self._order, name)
            self._entries[name] = entry
            for system in entry.systems:
                bisect.insort(self._systems.setdefault(system.iri, []), name)
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

    def count(self, visible: Callable[[NamedNode], bool]) -> int:
        """Return how many experiments ``visible`` accepts."""
        return sum(1 for e in self._entries.values() if visible(e.graph))

    def entries(self) -> list[ExperimentEntry]:
        """Return every entry (private ones too), oldest first."""
        return [self._entries[name] for name in self._order]

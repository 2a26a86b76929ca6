"""The change log of a store: what each committed write changed, for whoever follows the store.

A store with a ``ChangeLog`` appends one ``Change`` per committed write: the quads it added and
removed when the write named them (``add``, ``apply``, ``replace_graph``), or the graphs whose
whole content may have changed (a load into a graph, a dropped graph), or ``everything`` for a
write whose effect is not known without evaluating it (an arbitrary SPARQL update, a load
without a target graph). A follower (the server's public mirror) drains the log and replays it.
Nothing here reads or writes a store; a failed write records nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

from pyoxigraph import DefaultGraph, NamedNode, Quad


@dataclass(frozen=True, slots=True)
class Change:
    """What one committed write changed."""

    added: tuple[Quad, ...] = ()
    removed: tuple[Quad, ...] = ()
    graphs: tuple[NamedNode, ...] = ()
    everything: bool = False

    def touched(self) -> set[NamedNode]:
        """Return the named graphs this change is known to touch (empty for ``everything``)."""
        found = set(self.graphs)
        for quad in (*self.added, *self.removed):
            if not isinstance(quad.graph_name, DefaultGraph):
                found.add(quad.graph_name)  # type: ignore[arg-type]
        return found


class ChangeLog:
    """A thread-safe queue of changes with a sequence number per committed write."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._pending: list[Change] = []
        self._sequence = 0

    @property
    def sequence(self) -> int:
        """Return the number of changes recorded so far."""
        with self._lock:
            return self._sequence

    def record(self, change: Change) -> int:
        """Append ``change`` and return its sequence number."""
        with self._lock:
            self._pending.append(change)
            self._sequence += 1
            self._lock.notify_all()
            return self._sequence

    def record_quads(self, added: Iterable[Quad] = (), removed: Iterable[Quad] = ()) -> int:
        """Append the change of a write that added and removed the given quads."""
        return self.record(Change(tuple(added), tuple(removed)))

    def drain(self) -> tuple[list[Change], int]:
        """Return every pending change (oldest first) and the sequence they bring us to."""
        with self._lock:
            pending, self._pending = self._pending, []
            return pending, self._sequence

    def wait(self, after: int, timeout: float) -> bool:
        """Wait until a change after sequence ``after`` is recorded; return whether one was."""
        with self._lock:
            return self._lock.wait_for(lambda: self._sequence > after, timeout)

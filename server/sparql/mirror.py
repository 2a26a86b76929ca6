"""The public mirror: a second on-disk store that holds exactly the public graphs of the main one.

The public SPARQL endpoint evaluates queries over the union of the public graphs. Oxigraph
evaluates a union default graph fast, but a default graph given as a list of thousands of graph
names costs one index seek per graph and per triple pattern (about 20 µs each: 0.2 s per pattern
at 10,000 experiment graphs, measured in docs/server.md). So the graphs a reader may see are
made physical: the mirror receives the main store's changes, restricted to public graphs, and
the query workers read checkpoints of it (``server.sparql.views``).

``PublicMirror.apply`` replays a batch of changes: quads added to or removed from public graphs
are added or removed; a graph whose whole content changed, or whose visibility changed (an
experiment was published), is copied again from the main store, or dropped when it is not
public; an arbitrary update makes the mirror rebuild itself. Copies read the main store's
current content, so replaying a change twice is harmless. The mirror is rebuilt from the main
store at every start of the server (``rebuild``), in the background: it is a cache, never a
source of truth. Only the thread that owns it (``ViewPublisher``) writes to it.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

from pyoxigraph import NamedNode, Quad

from store.changes import Change
from store.errors import StoreError
from store.protocol import RdfStore
from store.triplestore import TripleStore

log = logging.getLogger(__name__)

# Quads per bulk write while copying a graph (bounds memory, not correctness).
_COPY_CHUNK = 50_000


def _in(graph: object, public: frozenset[str]) -> bool:
    return isinstance(graph, NamedNode) and graph.value in public


class PublicMirror:
    """A store holding the public graphs of ``main``, and the number of quads it holds."""

    def __init__(self, main: RdfStore, directory: Path) -> None:
        self._main = main
        self._directory = directory
        self.store: TripleStore | None = None
        self.quads = 0
        self._public: frozenset[str] = frozenset()

    @property
    def ready(self) -> bool:
        """Return whether the mirror has been built."""
        return self.store is not None

    def rebuild(self, public: list[NamedNode]) -> None:
        """Build the mirror from scratch: a fresh directory holding exactly ``public``.

        From an on-disk main store this is a checkpoint of it (hard links) from which every
        graph that is not public is dropped, so the cost follows the hidden data, not the
        store; from any other store the public graphs are copied.
        """
        if self.store is not None:
            self.store.close()
            self.store = None
        if self._directory.exists():
            shutil.rmtree(self._directory)
        self._directory.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        wanted = frozenset(g.value for g in public)
        if isinstance(self._main, TripleStore) and self._main.path is not None:
            self._main.checkpoint(self._directory)
            store = TripleStore.open(self._directory)
            hidden = [g for g in store.graphs() if g.value not in wanted]
            # The default graph is never public either (qabench writes only named graphs).
            store.update("DROP SILENT DEFAULT")
            store.drop_graphs(hidden)
            count = len(store)
        else:
            store = TripleStore.open(self._directory)
            count = 0

            def _quads() -> Iterator[Quad]:
                nonlocal count
                for graph in public:
                    for quad in self._main.quads(graph=graph):
                        count += 1
                        yield quad

            if public:
                store.bulk_add(_quads())
        self._directory.chmod(0o700)
        self.store, self.quads, self._public = store, count, wanted
        log.info("public mirror built: %d quads in %d graphs", count, len(public))

    def apply(self, changes: list[Change], public: frozenset[str]) -> frozenset[str] | None:
        """Replay ``changes`` (oldest first), given the public graphs after them.

        Returns:
            The names of the graphs the changes touched (public or not), or ``None`` when the
            mirror was rebuilt (every graph may have changed).
        """
        if self.store is None:
            raise RuntimeError("The public mirror has not been built")
        if any(c.everything for c in changes):
            self.rebuild([NamedNode(g) for g in sorted(public)])
            return None
        recopy: set[str] = {g for g in public ^ self._public}
        touched = set(recopy)
        for change in changes:
            recopy |= {g.value for g in change.graphs}
            touched |= {g.value for g in change.touched()}
            added = [q for q in change.added if _in(q.graph_name, public)]
            removed = [q for q in change.removed if _in(q.graph_name, public)]
            if added or removed:
                self._replay(added, removed)
        for graph in sorted(recopy):
            self._recopy(NamedNode(graph), graph in public)
        self._public = public
        return frozenset(touched | recopy)

    def verify(self, graphs: frozenset[str]) -> None:
        """Refuse a mirror holding any of ``graphs`` that is not public (defence in depth).

        Checks only the graphs a batch touched: the cost follows the change, and the graphs no
        change touched are as the previous check (or the rebuild) left them.

        Raises:
            StoreError: if a graph that is not public has quads in the mirror.
        """
        if self.store is None:
            raise RuntimeError("The public mirror has not been built")
        store = self.store
        leaked = sorted(
            g
            for g in graphs
            if g not in self._public and next(iter(store.quads(graph=NamedNode(g))), None)
        )
        if leaked:
            raise StoreError(
                f"The public mirror holds graphs its readers may not see: {leaked[:3]}"
            )

    def _replay(self, added: list[Quad], removed: list[Quad]) -> None:
        """Replay one change as the main store applied it: remove, then add.

        A quad both removed and added by one change is present afterwards, so it must not be
        removed here (deciding what to add before what to remove lost such quads).
        """
        assert self.store is not None
        raw = self.store.raw
        kept = set(added)
        fresh = [q for q in dict.fromkeys(added) if q not in raw]
        gone = [q for q in dict.fromkeys(removed) if q not in kept and q in raw]
        self.store.apply(remove=gone, add=fresh)
        self.quads += len(fresh) - len(gone)

    def _recopy(self, graph: NamedNode, is_public: bool) -> None:
        assert self.store is not None
        old = sum(1 for _ in self.store.quads(graph=graph))
        if old:
            self.store.drop_graphs([graph])
        copied = 0
        if is_public:
            chunk: list[Quad] = []
            for quad in self._main.quads(graph=graph):
                chunk.append(quad)
                if len(chunk) >= _COPY_CHUNK:
                    self.store.add(chunk)
                    copied += len(chunk)
                    chunk = []
            if chunk:
                self.store.add(chunk)
                copied += len(chunk)
        self.quads += copied - old

    def checkpoint(self, target: Path) -> None:
        """Write a checkpoint of the mirror to ``target`` (see ``TripleStore.checkpoint``)."""
        if self.store is None:
            raise RuntimeError("The public mirror has not been built")
        self.store.checkpoint(target)

    def close(self) -> None:
        """Release the mirror's store (its directory is rebuilt at the next start)."""
        if self.store is not None:
            self.store.close()
            self.store = None

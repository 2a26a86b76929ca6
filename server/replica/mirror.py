"""The public mirror: a store of its own holding exactly the public graphs of the main one.

The public SPARQL endpoint evaluates queries over the union of the public graphs. Oxigraph
evaluates a union default graph fast, but a default graph given as a list of thousands of graph
names costs one index seek per graph and per triple pattern (about 20 µs each: 0.2 s per pattern
at 10,000 experiment graphs, measured in docs/server.md). So the graphs a reader may see are
made physical: the mirror receives the main store's changes, restricted to public graphs, and
the query workers read checkpoints of it (``server.replica.views``).

The mirror shares no file with the main store: it is built from a copy of a checkpoint of the
store (real copies of its files, at disk speed) minus the hidden graphs, so a damaged view or
mirror can never damage the store. ``apply`` replays a batch of
changes as the main store applied them (each write removes, then adds); a graph whose whole
content changed, or whose visibility changed (an experiment was published), is copied again
from the main store, or dropped when it is not public; an arbitrary update makes the mirror
rebuild itself. Copies read the main store's current content, so replaying a change twice is
harmless.

The mirror stays on disk across restarts with a small state file: the main store's journal
entry it is up to date with (``store.changes.ChangeJournal``) and its quad count. At start-up
(``open``) it copies again only the graphs written since that entry, by this server or by
any command, and the graphs whose visibility differs; it is rebuilt from scratch only when the
journal no longer reaches back that far, an arbitrary update happened, or its files are
unusable. Only the thread that owns it (``ViewPublisher``) writes to it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pyoxigraph import NamedNode, Quad, QuerySolutions, RdfFormat

from store.changes import Change, ChangeJournal
from store.errors import StoreError, write_error
from store.permissions import private_directory
from store.protocol import RdfStore
from store.triplestore import TripleStore

log = logging.getLogger(__name__)

# Quads per transactional write while copying a graph (bounds memory, not correctness).
_COPY_CHUNK = 50_000
# Hidden quads dropped from a copied checkpoint beyond which the copy is compacted at once
# (keeps the mirror's disk use proportional to the public data).
_COMPACT_AFTER_DROPPING = 100_000
_STATE_VERSION = 1
_COUNT = "SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }}"


def _in(graph: object, public: frozenset[str]) -> bool:
    return isinstance(graph, NamedNode) and graph.value in public


def graph_size(store: RdfStore, graph: NamedNode) -> int:
    """Return the number of quads in ``graph`` (counted by the engine, not in Python)."""
    # A NamedNode prints as a checked IRI in angle brackets: safe to place in the query.
    result = store.query(_COUNT.format(graph=graph))
    assert isinstance(result, QuerySolutions)
    for row in result:
        value = row["n"]
        return int(value.value) if value is not None else 0
    return 0


class MirrorStoppedError(RuntimeError):
    """The mirror was told to stop in the middle of a copy (the server is shutting down)."""


@dataclass(frozen=True, slots=True)
class MirrorState:
    """What the state file says: the journal entry the mirror reflects and its quad count.

    ``quads`` is None when the count cannot be trusted (the server stopped while a batch was
    being applied): it is counted again.
    """

    journal: int
    quads: int | None
    epoch: str | None = None


class PublicMirror:
    """A store holding the public graphs of ``main``, its quad count and journal mark."""

    def __init__(self, main: RdfStore, directory: Path) -> None:
        self._main = main
        self._directory = directory
        self._state_path = directory.with_name(directory.name + ".json")
        self.store: TripleStore | None = None
        # Quads in the mirror; None while unknown (recounted by ``count``).
        self.quads: int | None = 0
        # The main store's journal entry every change up to which the mirror reflects.
        self.mark = 0
        self._public: frozenset[str] = frozenset()
        # Graphs copied again by the last ``open`` of the kept mirror.
        self.caught_up = 0
        # Set at shutdown: long copies stop between chunks.
        self.cancel = threading.Event()

    @property
    def ready(self) -> bool:
        """Return whether the mirror is open."""
        return self.store is not None

    @property
    def _journal(self) -> ChangeJournal | None:
        journal = getattr(self._main, "journal", None)
        return journal if isinstance(journal, ChangeJournal) else None

    # ------------------------------------------------------------------ state file
    def _read_state(self) -> MirrorState | None:
        try:
            data = json.loads(self._state_path.read_text("utf-8"))
            if data.get("version") != _STATE_VERSION:
                return None
            quads, epoch = data.get("quads"), data.get("epoch")
            return MirrorState(
                int(data["journal"]),
                int(quads) if isinstance(quads, int) else None,
                epoch if isinstance(epoch, str) else None,
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def _write_state(self, *, applying: bool) -> None:
        """Record the mark and count; ``applying`` marks the count untrusted until the next."""
        quads = None if applying or self.quads is None else self.quads
        journal = self._journal
        state = {
            "version": _STATE_VERSION,
            "journal": self.mark,
            "epoch": journal.epoch if journal is not None else None,
            "quads": quads,
        }
        partial = self._state_path.with_name(self._state_path.name + ".part")
        partial.write_text(json.dumps(state), "utf-8")
        partial.chmod(0o600)
        os.replace(partial, self._state_path)

    # ------------------------------------------------------------------ opening
    def open(self, public: frozenset[str]) -> bool:
        """Open the mirror kept on disk and bring it up to date, or build it from scratch.

        Returns:
            Whether the kept mirror was reused (False: it was rebuilt).
        """
        self.close()
        journal, state = self._journal, self._read_state()
        span = journal.since(state.journal, state.epoch or "") if journal and state else None
        if state is None or span is None or span.everything or not self._directory.exists():
            self.rebuild(public)
            return False
        try:
            store = TripleStore.open(self._directory, journaled=False)
        except StoreError:
            log.warning("the kept public mirror cannot be opened: building it again")
            self.rebuild(public)
            return False
        self.store, self.quads, self.mark = store, state.quads, state.journal
        present = {g.value for g in store.graphs()}
        # Written since, or visible differently: copied again (or dropped when not public).
        stale = (set(span.graphs) & (public | present)) | (present ^ public)
        self._write_state(applying=True)
        for name in sorted(stale):
            self._recopy(NamedNode(name), name in public)
        self._public, self.mark, self.caught_up = public, span.last, len(stale)
        if self.quads is None:
            self.quads = len(store)
        self._write_state(applying=False)
        log.info("public mirror kept: %d graphs copied again since the last run", len(stale))
        return True

    def rebuild(self, public: frozenset[str]) -> None:
        """Build the mirror from scratch: a fresh directory holding exactly ``public``.

        From an on-disk main store: a checkpoint of it (hard links, instant) whose files are
        then copied (so the mirror shares no file with the store; the copy runs at disk speed),
        from which the graphs that are not public are dropped (compacted away when they are
        many). From any other store the public quads are copied one by one. The old mirror is
        deleted first: published views keep their own links to its files, and after a full
        disk its space is what the new one needs.
        """
        journal = self._journal
        mark = journal.last if journal is not None else 0
        fresh = self._directory.with_name(self._directory.name + ".new")
        self.close()
        shutil.rmtree(self._directory, ignore_errors=True)
        self._state_path.unlink(missing_ok=True)
        shutil.rmtree(fresh, ignore_errors=True)
        private_directory(self._directory.parent)
        if isinstance(self._main, TripleStore) and self._main.path is not None:
            count = self._copy_files(self._main, fresh, public)
        else:
            count = self._copy_quads(fresh, public)
        fresh.rename(self._directory)
        self._directory.chmod(0o700)
        self.store = TripleStore.open(self._directory, journaled=False)
        self.quads, self.mark, self._public = count, mark, public
        self._write_state(applying=False)
        log.info("public mirror built: %s quads in %d graphs", count, len(public))

    def _copy_files(self, main: TripleStore, fresh: Path, public: frozenset[str]) -> int:
        """Copy a checkpoint of ``main`` into ``fresh`` and drop what is not public."""
        assert main.path is not None
        # Beside the store: hard links cannot cross file systems (the views may live elsewhere).
        links = main.path.with_name(main.path.name + ".mirror-links")
        shutil.rmtree(links, ignore_errors=True)
        main.checkpoint(links)
        try:
            fresh.mkdir(mode=0o700)
            for item in links.iterdir():
                shutil.copyfile(item, fresh / item.name)
        finally:
            shutil.rmtree(links, ignore_errors=True)
        store = TripleStore.open(fresh, journaled=False)
        try:
            hidden = [g for g in store.graphs() if g.value not in public]
            dropped = sum(graph_size(store, g) for g in hidden)
            store.update("DROP SILENT DEFAULT")
            store.drop_graphs(hidden)
            if dropped > _COMPACT_AFTER_DROPPING:
                store.raw.optimize()
            return len(store)  # counted by the engine: about a second at 11 M quads
        finally:
            store.close()

    def _copy_quads(self, fresh: Path, public: frozenset[str]) -> int:
        store = TripleStore.open(fresh, journaled=False)
        count = 0

        def _quads() -> Iterator[Quad]:
            nonlocal count
            for name in sorted(public):
                self._check_cancel()
                for quad in self._main.quads(graph=NamedNode(name)):
                    count += 1
                    yield quad

        try:
            if public:
                store.bulk_add(_quads())
        finally:
            store.close()
        return count

    # ------------------------------------------------------------------ changes
    def apply(self, changes: list[Change], public: frozenset[str]) -> frozenset[str] | None:
        """Replay ``changes`` (oldest first), given the public graphs after them.

        Returns:
            The names of the graphs the changes touched (public or not), or ``None`` when the
            mirror was rebuilt (every graph may have changed).
        """
        if self.store is None:
            raise RuntimeError("The public mirror has not been built")
        if any(c.everything for c in changes):
            self.rebuild(public)
            return None
        recopy = set(public ^ self._public)
        for change in changes:
            recopy |= {g.value for g in change.graphs}
        touched = set(recopy)
        self._write_state(applying=True)
        for change in changes:
            touched |= {g.value for g in change.touched()}
            # Graphs copied again below need no replay.
            added = [q for q in change.added if _in(q.graph_name, public - recopy)]
            removed = [q for q in change.removed if _in(q.graph_name, public - recopy)]
            if added or removed:
                self._replay(added, removed)
        for graph in sorted(recopy):
            self._recopy(NamedNode(graph), graph in public)
        self._public = public
        self.mark = max([self.mark, *(c.journal for c in changes)])
        self._write_state(applying=False)
        return frozenset(touched)

    def _replay(self, added: list[Quad], removed: list[Quad]) -> None:
        """Replay one change as the main store applied it: remove, then add every added quad.

        A quad both removed and added by one change is present afterwards, so the removals go
        first and the additions after them, all of them: the store keeps typed literals in a
        canonical form ("...+00:00" and "...Z" are one xsd:dateTime), so comparing quads as
        Python values here would miss a quad removed in one form and added in another (the
        tasks' prov:startedAtTime was lost that way).
        """
        assert self.store is not None
        raw = self.store.raw
        # The quads themselves, not SPARQL text: blank nodes keep their identity. Not one
        # transaction, but replaying is idempotent and a failed batch is applied again. The
        # store answers ``in`` on canonical values, so the counts hold for every form.
        gone = fresh = 0
        try:
            for quad in removed:
                if quad in raw:
                    raw.remove(quad)
                    gone += 1
            for quad in added:
                if quad not in raw:
                    raw.add(quad)
                    fresh += 1
        except OSError as exc:
            raise write_error("Replaying a change into the public mirror failed", exc) from exc
        if self.quads is not None:
            self.quads += fresh - gone

    def _recopy(self, graph: NamedNode, is_public: bool) -> None:
        assert self.store is not None
        store = self.store
        old = graph_size(store, graph)
        if old:
            store.drop_graphs([graph])
        copied = 0
        if is_public:
            size = graph_size(self._main, graph)
            if size > _COPY_CHUNK and isinstance(self._main, TripleStore):
                copied = self._copy_large(self._main, graph)
            else:
                chunk: list[Quad] = []
                for quad in self._main.quads(graph=graph):
                    chunk.append(quad)
                    if len(chunk) >= _COPY_CHUNK:
                        self._check_cancel()
                        store.add(chunk)
                        copied += len(chunk)
                        chunk = []
                if chunk:
                    store.add(chunk)
                    copied += len(chunk)
        if self.quads is not None:
            self.quads += copied - old

    def _copy_large(self, main: TripleStore, graph: NamedNode) -> int:
        """Copy a large graph through an N-Triples file, written and read by the engine."""
        assert self.store is not None
        path = self._directory.with_name(self._directory.name + ".graph.nt")
        try:
            main.raw.dump(str(path), RdfFormat.N_TRIPLES, from_graph=graph)
            self._check_cancel()
            self.store.raw.bulk_load(path=str(path), format=RdfFormat.N_TRIPLES, to_graph=graph)
        except (OSError, SyntaxError) as exc:
            raise StoreError(f"Copying a graph into the public mirror failed: {exc}") from exc
        finally:
            path.unlink(missing_ok=True)
        return graph_size(self.store, graph)

    def _check_cancel(self) -> None:
        if self.cancel.is_set():
            raise MirrorStoppedError("The public mirror is shutting down")

    # ------------------------------------------------------------------ checks
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

    def repair(self, graphs: Iterable[str], quiet: Callable[[], bool]) -> list[str]:
        """Compare the quad counts of ``graphs`` with the main store's; copy differing ones again.

        ``quiet`` says whether no write to the main store is pending; it is asked before and
        after counting, and counts taken while a write came in are not trusted (they may
        differ only because the mirror has not seen that write yet).

        Returns:
            The graphs that differed (and were copied again).
        """
        assert self.store is not None
        store = self.store
        if not quiet():
            return []
        differing = [
            name
            for name in sorted(graphs)
            if (graph_size(self._main, NamedNode(name)) if name in self._public else 0)
            != graph_size(store, NamedNode(name))
        ]
        if differing and not quiet():
            return []
        for name in differing:
            log.error("the public mirror differed from the store in %s: copied again", name)
            self._recopy(NamedNode(name), name in self._public)
        if differing:
            self._write_state(applying=False)
        return differing

    @property
    def public(self) -> frozenset[str]:
        """Return the public graphs the mirror holds."""
        return self._public

    def count(self) -> int:
        """Count the mirror's quads (when the kept count could not be trusted)."""
        assert self.store is not None
        self.quads = len(self.store)
        self._write_state(applying=False)
        return self.quads

    def optimize(self) -> None:
        """Compact the mirror's files (scans of a long-updated store slow down otherwise)."""
        if self.store is not None:
            try:
                self.store.raw.optimize()
            except OSError as exc:
                raise StoreError(f"Compacting the public mirror failed: {exc}") from exc

    def checkpoint(self, target: Path) -> None:
        """Write a checkpoint of the mirror to ``target`` (see ``TripleStore.checkpoint``)."""
        if self.store is None:
            raise RuntimeError("The public mirror has not been built")
        self.store.checkpoint(target)

    def close(self) -> None:
        """Release the mirror's store (it stays on disk for the next start).

        A failed flush is only logged: the state file names the last batch known to be
        applied, and the next start copies again what was written after it.
        """
        store, self.store = self.store, None
        if store is not None:
            try:
                store.close()
            except StoreError as exc:
                log.warning("the public mirror was closed without a flush: %s", exc)

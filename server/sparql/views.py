"""The views SPARQL workers read: read-only checkpoints holding exactly the graphs a reader sees.

``ViewPublisher`` runs one background thread in the serving process. It owns the public mirror
(``server.sparql.mirror``): it receives each batch of the main store's changes (from
``Services.notify_write``) with the visibility after them, replays them into the mirror, writes
a RocksDB checkpoint of the mirror (hard links: the cost follows the change, not the store) and
publishes it as the current ``View``. Workers open a view with ``Store.read_only`` and evaluate
over its union default graph, so the page cache is shared instead of one copy per worker and a
write is visible to SPARQL as soon as its checkpoint is published (well under a second).

A reader holding access tokens of private experiments gets a *token view*: a copy of the public
view (hard links again) with the opened experiments' graphs added, made on demand and kept for
a few such readers. Every view holds exactly the graphs its reader may see, so the dataset a
query runs over is decided before it reaches a worker and checked when the view is made
(``check_view`` after a rebuild and for token views; ``PublicMirror.verify`` of the graphs a
batch touched otherwise); the private main store and the views live in 0700 directories.

Old checkpoints are deleted once two newer ones exist and a grace period has passed (a worker
may still finish a query on one). The views directory is emptied at start-up.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import os
import queue
import shutil
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from pyoxigraph import NamedNode, RdfFormat

from server.sparql.mirror import PublicMirror
from store.changes import Change
from store.errors import StoreError
from store.protocol import RdfStore
from store.triplestore import TripleStore

log = logging.getLogger(__name__)

# A view older than this (and not among the two newest) is deleted.
VIEW_GRACE_SECONDS = 60.0
# Token views kept at once (each a directory of hard links; made again when needed).
TOKEN_VIEWS = 8
# Writes arriving within this window are published as one view.
_COALESCE_SECONDS = 0.02


class ViewNotReadyError(StoreError):
    """The first view is still being built (right after start-up on a large store)."""


@dataclass(frozen=True, slots=True)
class View:
    """One published checkpoint: the write generation it covers, its path and size."""

    generation: int
    path: Path
    quads: int
    graphs: frozenset[str]
    made_at: float


def _link_copy(source: Path, target: Path) -> None:
    """Copy a checkpoint directory, hard-linking its immutable table files."""
    target.mkdir(mode=0o700)
    for item in source.iterdir():
        if item.suffix == ".sst":
            os.link(item, target / item.name)
        elif item.is_file():
            shutil.copy2(item, target / item.name)


def check_view(path: Path, expected: frozenset[str]) -> None:
    """Refuse a view whose named graphs are not exactly ``expected`` (defence in depth)."""
    store = TripleStore.open_read_only(path)
    try:
        found = {g.value for g in store.graphs()}
    finally:
        store.close()
    if found - expected:
        extra = sorted(found - expected)[:3]
        raise StoreError(f"View {path.name} holds graphs its readers may not see: {extra}")


class ViewPublisher:
    """Keeps the public mirror current and publishes checkpoints of it for the query workers."""

    def __init__(
        self,
        main: RdfStore,
        public: frozenset[str],
        directory: Path,
        *,
        grace_seconds: float = VIEW_GRACE_SECONDS,
    ) -> None:
        self._main = main
        self._grace = grace_seconds
        self._public = public
        self._directory = directory
        if directory.exists():
            shutil.rmtree(directory)
        directory.mkdir(parents=True, mode=0o700)
        self._mirror = PublicMirror(main, directory / "mirror")
        self._queue: queue.Queue[tuple[int, list[Change], frozenset[str]] | None] = queue.Queue()
        self._lock = threading.Condition()
        self._current: View | None = None
        self._old: list[View] = []
        self._tokens: OrderedDict[tuple[int, frozenset[str]], View] = OrderedDict()
        self._token_lock = threading.Lock()
        self._dump_lock = threading.Lock()
        self._dumps: dict[int, Path] = {}
        self._names = itertools.count(1)
        self._failure: str | None = None
        self._thread = threading.Thread(target=self._run, name="qabench-views", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ feeding
    def submit(self, generation: int, changes: list[Change], public: frozenset[str]) -> None:
        """Hand over the changes that brought the store to write generation ``generation``.

        Args:
            generation: the write generation the store reached with ``changes``.
            changes: the committed changes since the last submission, oldest first.
            public: the public graphs (IRIs) after those changes.
        """
        self._queue.put((generation, changes, public))

    def _run(self) -> None:
        try:
            self._mirror.rebuild([NamedNode(g) for g in sorted(self._public)])
            self._publish(0, self._public)
        except (StoreError, OSError) as exc:
            log.exception("the public mirror could not be built")
            self._fail(f"The SPARQL view could not be built: {exc}")
            return
        while True:
            item = self._queue.get()
            if item is None:
                return
            time.sleep(_COALESCE_SECONDS)
            generation, changes, public = item
            stop = False
            while True:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                generation, changes, public = more[0], changes + more[1], more[2]
            try:
                started = time.perf_counter()
                touched = self._mirror.apply(changes, public)
                applied = time.perf_counter()
                self._publish(generation, public, touched)
                log.debug(
                    "view of generation %d: %d changes applied in %.0f ms, published in %.0f ms",
                    generation,
                    len(changes),
                    (applied - started) * 1000,
                    (time.perf_counter() - applied) * 1000,
                )
            except (StoreError, OSError, RuntimeError) as exc:
                log.exception("publishing a SPARQL view failed")
                self._fail(f"The SPARQL view could not be updated: {exc}")
                return
            if stop:
                return

    def _fail(self, message: str) -> None:
        with self._lock:
            self._failure = message
            self._lock.notify_all()

    def _publish(
        self, generation: int, public: frozenset[str], touched: frozenset[str] | None = None
    ) -> None:
        """Checkpoint the mirror as the view of ``generation`` after checking what it holds.

        After a rebuild (``touched`` is None) the whole checkpoint is checked; after a batch,
        the graphs it touched (``PublicMirror.verify``), so the cost follows the change.
        """
        path = self._directory / f"view-{next(self._names)}"
        started = time.perf_counter()
        if touched is not None:
            self._mirror.verify(touched)
        self._mirror.checkpoint(path)
        checkpointed = time.perf_counter()
        if touched is None:
            check_view(path, public)
        log.debug(
            "checkpoint %.0f ms, check %.0f ms",
            (checkpointed - started) * 1000,
            (time.perf_counter() - checkpointed) * 1000,
        )
        view = View(generation, path, self._mirror.quads, public, time.monotonic())
        with self._lock:
            if self._current is not None:
                # Kept only to be deleted after the grace period: without its graph set (a
                # frozenset of every public graph per write would grow with the writes).
                self._old.append(dataclasses.replace(self._current, graphs=frozenset()))
            self._current = view
            self._lock.notify_all()
        self._prune()

    def _prune(self) -> None:
        now = time.monotonic()
        with self._lock:
            keep = self._old[-2:]
            stale = [v for v in self._old[:-2] if now - v.made_at > self._grace]
            self._old = [v for v in self._old if v not in stale]
        for view in stale:
            shutil.rmtree(view.path, ignore_errors=True)
        del keep

    # ------------------------------------------------------------------ reading
    def current(self, at_least: int = 0, timeout: float = 5.0) -> View:
        """Return the newest view, waiting (at most ``timeout``) for one covering ``at_least``.

        Raises:
            ViewNotReadyError: if no view exists yet or the views cannot be built.
        """
        with self._lock:
            self._lock.wait_for(
                lambda: (
                    self._failure is not None
                    or (self._current is not None and self._current.generation >= at_least)
                ),
                timeout,
            )
            current = self._current
            if current is not None and current.generation >= at_least:
                return current
            if self._failure is not None:
                raise ViewNotReadyError(self._failure)
            if current is None:
                raise ViewNotReadyError("The SPARQL view is still being built")
            # Never an older view with 200: its reader would miss writes it has seen.
            raise ViewNotReadyError("The SPARQL view is catching up with the latest writes")

    def token_view(self, base: View, unlocked: tuple[NamedNode, ...]) -> View:
        """Return ``base`` plus the graphs ``unlocked`` (private experiments a token opens).

        Made once per view and set of graphs: the public checkpoint is copied with hard links
        and the opened graphs are added from the main store, so the cost follows the size of
        the opened experiments, not of the store.
        """
        names = frozenset(g.value for g in unlocked)
        key = (base.generation, names)
        with self._token_lock:
            found = self._tokens.get(key)
            if found is not None and found.path.exists():
                self._tokens.move_to_end(key)
                return found
            path = self._directory / f"token-{next(self._names)}"
            _link_copy(base.path, path)
            store = TripleStore.open(path)
            added = 0
            try:
                for graph in unlocked:
                    quads = list(self._main.quads(graph=graph))
                    store.add(quads)
                    added += len(quads)
            finally:
                store.close()
            view = View(
                base.generation, path, base.quads + added, base.graphs | names, time.monotonic()
            )
            check_view(path, view.graphs)
            self._tokens[key] = view
            while len(self._tokens) > TOKEN_VIEWS:
                _, old = self._tokens.popitem(last=False)
                shutil.rmtree(old.path, ignore_errors=True)
            return view

    def dump(self, view: View) -> Path:
        """Return an N-Quads file of ``view`` (written once per view, by the first asker).

        The file is written from a private hard-link copy of the view, so pruning the view
        meanwhile does no harm; files of older views are removed as newer ones are written.
        """
        with self._dump_lock:
            found = self._dumps.get(view.generation)
            if found is not None and found.exists():
                return found
            work = self._directory / f"dump-{next(self._names)}"
            _link_copy(view.path, work)
            target = self._directory / f"dump-{view.generation}.nq"
            partial = target.with_suffix(".part")
            store = TripleStore.open_read_only(work)
            try:
                store.raw.dump(str(partial), RdfFormat.N_QUADS)
            finally:
                store.close()
                shutil.rmtree(work, ignore_errors=True)
            partial.replace(target)
            target.chmod(0o600)
            for old in [g for g in self._dumps if g < view.generation]:
                self._dumps.pop(old).unlink(missing_ok=True)
            self._dumps[view.generation] = target
            return target

    def close(self) -> None:
        """Stop the thread and release the mirror (views are removed at the next start)."""
        self._queue.put(None)
        self._thread.join(30)
        self._mirror.close()

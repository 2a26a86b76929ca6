"""The views SPARQL workers read: read-only checkpoints holding exactly the graphs a reader sees.

``ViewPublisher`` runs one background thread in the serving process. It owns the public mirror
(``server.replica.mirror``): it receives each batch of the main store's changes (from
``Services.notify_write``) with the visibility after them, replays them into the mirror, writes
a RocksDB checkpoint of the mirror (hard links of the mirror's own files: the cost follows the
change, not the store) and publishes it as the current ``View``. A batch that changed no public
graph publishes the same checkpoint under the new generation. Workers open a view with
``Store.read_only`` and evaluate over its union default graph, so the page cache is shared
instead of one copy per worker. A reader is only ever given a view at least as new as the
write generation it has seen (``current``), else the endpoint answers 503: never a view that
misses a write with 200.

Faults heal without a restart: when replaying, checkpointing or checking fails (a full disk,
damaged files), the endpoint answers 503 with a message that names no server path, and the
thread tries again with growing pauses, rebuilding the mirror from the main store, until it
succeeds. After each batch the quad counts of the public graphs it touched are compared with
the main store's (when no newer write is pending) and a differing graph is copied again; in idle
time every public graph is compared the same way, a slice at a time, the mirror's files are
compacted after many changes, and an untrusted count is redone.

A reader holding access tokens of private experiments gets a *token view*: a copy of the public
view (hard links again) with the opened experiments' graphs added, made on demand and kept for
a few such readers. Every view holds exactly the graphs its reader may see, so the dataset a
query runs over is decided before it reaches a worker and checked when the view is made
(``check_view`` after a rebuild and for token views; ``PublicMirror.verify`` of the graphs a
batch touched otherwise); the private main store and the views live in 0700 directories.

Old checkpoints are deleted once two newer ones exist and a grace period has passed (a worker
may still finish a query on one). At start-up every checkpoint is deleted; the mirror and its
state file are kept (``PublicMirror.open``).
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
import traceback
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pyoxigraph import NamedNode

from server.replica.mirror import PublicMirror
from store.changes import Change, ChangeLog
from store.errors import StoreError
from store.permissions import private_directory
from store.protocol import RdfStore
from store.triplestore import TripleStore

log = logging.getLogger(__name__)

# A view older than this (and not among the two newest) is deleted.
VIEW_GRACE_SECONDS = 60.0
# Token views kept at once (each a directory of hard links; made again when needed).
TOKEN_VIEWS = 8
# Writes arriving within this window are published as one view.
_COALESCE_SECONDS = 0.02
# Pauses between attempts to heal after a fault (seconds): doubling up to the last.
RETRY_SECONDS = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
# Idle time (no batch) before maintenance runs, and the public graphs compared per idle tick.
IDLE_SECONDS = 2.0
VERIFY_SLICE = 200
# A full comparison of every public graph at most this often (seconds).
VERIFY_INTERVAL_SECONDS = 600.0
# Changes applied since the last compaction that make the mirror worth compacting.
OPTIMIZE_AFTER_CHANGES = 5_000

_UNAVAILABLE = (
    "The SPARQL endpoint's copy of the data could not be updated; it is being repaired "
    "and will answer again shortly"
)


class ViewNotReadyError(StoreError):
    """No view covering the reader's writes can be had now (starting, catching up, healing)."""


@dataclass(frozen=True, slots=True)
class View:
    """One published checkpoint: the write generation it covers, its path and size.

    ``quads`` is None while the mirror's count is being redone. ``made_at`` is monotonic (for
    pruning); ``modified`` is when its content last changed (seconds since the epoch).
    """

    generation: int
    path: Path
    quads: int | None
    graphs: frozenset[str]
    made_at: float
    modified: float = 0.0


@dataclass(slots=True)
class _Batch:
    generation: int
    changes: list[Change]
    public: frozenset[str]
    sequence: int


def link_copy(source: Path, target: Path) -> None:
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


def log_fault(message: str, exc: BaseException) -> None:
    """Log a fault with its traceback, whose frames no longer hold their variables.

    A frame of a failed write holds the store it wrote to; a log record keeping the traceback
    (a handler that stores records) would keep that store open, and its files, deleted by a
    rebuild, would keep their disk space: exactly what a full disk needs back.
    """
    seen: BaseException | None = exc
    while seen is not None:
        traceback.clear_frames(seen.__traceback__)
        seen = seen.__cause__ or seen.__context__
    log.error("%s", message, exc_info=exc)


def _clear_checkpoints(directory: Path) -> None:
    """Delete every checkpoint, token view and dump of an earlier run; keep the mirror."""
    for item in directory.iterdir():
        if item.name.startswith(("view-", "token-", "dump-", "mirror.new")):
            if item.is_dir():
                shutil.rmtree(item, ignore_errors=True)
            else:
                item.unlink(missing_ok=True)


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
        private_directory(directory)
        _clear_checkpoints(directory)
        self._mirror = PublicMirror(main, directory / "mirror")
        self._queue: queue.Queue[_Batch | None] = queue.Queue()
        self._lock = threading.Condition()
        self._current: View | None = None
        self._old: list[View] = []
        self._tokens: OrderedDict[tuple[int, frozenset[str]], View] = OrderedDict()
        self._token_lock = threading.Lock()
        self._names = itertools.count(1)
        self._failure: str | None = None
        self._stopping = threading.Event()
        # The last change-log sequence handed over (a count compared against the main store's
        # is only meaningful when no newer write is pending).
        self._sequence = 0
        self._since_optimize = 0
        self._verify: Iterator[str] | None = None
        self._verified_at = time.monotonic()
        # What the thread did: reused/rebuilt at start, heals, repaired graphs (for tests,
        # benchmarks and the log).
        self.events: dict[str, int] = {"kept": 0, "rebuilt": 0, "healed": 0, "repaired": 0}
        self._thread = threading.Thread(target=self._run, name="qabench-views", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ feeding
    def submit(
        self,
        generation: int,
        changes: list[Change],
        public: frozenset[str],
        sequence: int | None = None,
    ) -> None:
        """Hand over the changes that brought the store to write generation ``generation``.

        Args:
            generation: the write generation the store reached with ``changes``.
            changes: the committed changes since the last submission, oldest first.
            public: the public graphs (IRIs) after those changes.
            sequence: the main store's change-log sequence they bring it to.
        """
        self._queue.put(_Batch(generation, changes, public, sequence or 0))

    def _next(self, timeout: float | None) -> _Batch | None:
        """Return the next batch with every batch queued behind it merged in (None: stop)."""
        item = self._queue.get(timeout=timeout)
        if item is None:
            return None
        time.sleep(_COALESCE_SECONDS)
        while True:
            try:
                more = self._queue.get_nowait()
            except queue.Empty:
                return item
            if more is None:
                self._stopping.set()
                return item
            item = _Batch(more.generation, item.changes + more.changes, more.public, more.sequence)

    def _run(self) -> None:
        healthy = self._heal(_Batch(0, [], self._public, 0), starting=True)
        while healthy and not self._stopping.is_set():
            try:
                batch = self._next(IDLE_SECONDS)
            except queue.Empty:
                self._maintain()
                continue
            if batch is None:
                return
            self._sequence = max(self._sequence, batch.sequence)
            try:
                self._apply(batch)
            except (StoreError, OSError, RuntimeError) as exc:
                if self._stopping.is_set():
                    return  # told to stop in the middle of a copy
                log_fault("publishing a SPARQL view failed", exc)
                healthy = self._heal(batch)

    def _apply(self, batch: _Batch) -> None:
        started = time.perf_counter()
        current = self._current
        touched = self._mirror.apply(batch.changes, batch.public)
        applied = time.perf_counter()
        self._since_optimize += len(batch.changes)
        if touched is not None:
            repaired = self._mirror.repair(touched & batch.public, self._quiet)
            self.events["repaired"] += len(repaired)
            touched |= frozenset(repaired)
        if (
            touched is not None
            and current is not None
            and not touched & (batch.public | current.graphs)
            and batch.public == current.graphs
        ):
            # Nothing public changed (a private experiment ran): the same checkpoint serves.
            self._install(dataclasses.replace(current, generation=batch.generation))
        else:
            self._publish(batch.generation, batch.public, touched)
        log.debug(
            "view of generation %d: %d changes applied in %.0f ms, published in %.0f ms",
            batch.generation,
            len(batch.changes),
            (applied - started) * 1000,
            (time.perf_counter() - applied) * 1000,
        )

    def _quiet(self) -> bool:
        """Return whether every write of the main store has been handed over and applied."""
        changes = getattr(self._main, "changes", None)
        return (
            isinstance(changes, ChangeLog)
            and changes.sequence == self._sequence
            and self._queue.empty()
        )

    def _heal(self, pending: _Batch, *, starting: bool = False) -> bool:
        """Bring the views back after a fault (or up at start), trying until it works.

        At start the kept mirror is opened and brought up to date from the journal; after a
        fault the failed batch is applied again first (replaying is idempotent), then the kept
        mirror is reopened and caught up, and from the fourth attempt on it is rebuilt from the
        main store. Batches arriving meanwhile are folded in. Returns False when stopped.
        """
        for attempt in itertools.count():
            if attempt and self._stopping.wait(
                RETRY_SECONDS[min(attempt - 1, len(RETRY_SECONDS) - 1)]
            ):
                return False
            folded = self._fold(pending)
            if folded is None:
                return False
            pending = folded
            try:
                if not starting and attempt == 0:
                    self._apply(pending)  # replaying is idempotent
                elif attempt < 3:
                    # The mirror kept on disk, opened again (a store that hit a full disk
                    # writes again only once reopened) and caught up from the journal.
                    kept = self._mirror.open(pending.public)
                    self.events["kept" if kept else "rebuilt"] += 1
                    self._publish(pending.generation, pending.public)
                else:
                    self._mirror.rebuild(pending.public)
                    self.events["rebuilt"] += 1
                    self._publish(pending.generation, pending.public)
            except (StoreError, OSError, RuntimeError) as exc:
                log_fault(f"the SPARQL view could not be built (attempt {attempt + 1})", exc)
                self._fail(_UNAVAILABLE)
                continue
            with self._lock:
                if self._failure is not None:
                    self.events["healed"] += 1
                    log.info("the SPARQL view is back after %d attempts", attempt + 1)
                self._failure = None
                self._lock.notify_all()
            return True
        return False  # pragma: no cover (the loop only ends by returning)

    def _fold(self, pending: _Batch) -> _Batch | None:
        """Return ``pending`` with every queued batch merged in (None: told to stop)."""
        while True:
            try:
                batch = self._queue.get_nowait()
            except queue.Empty:
                return pending
            if batch is None:
                self._stopping.set()
                return None
            self._sequence = max(self._sequence, batch.sequence)
            pending = _Batch(
                batch.generation, pending.changes + batch.changes, batch.public, batch.sequence
            )

    def _fail(self, message: str) -> None:
        with self._lock:
            self._failure = message
            self._lock.notify_all()

    def _maintain(self) -> None:
        """Idle work: redo an untrusted count, compare public graphs, compact after many changes."""
        mirror = self._mirror
        if not mirror.ready or not self._quiet():
            return
        try:
            if mirror.quads is None:
                mirror.count()
                self._republish()
            if self._verify is None and (
                time.monotonic() - self._verified_at > VERIFY_INTERVAL_SECONDS
            ):
                self._verify = iter(sorted(mirror.public))
            if self._verify is not None:
                chunk = list(itertools.islice(self._verify, VERIFY_SLICE))
                if not chunk:
                    self._verify, self._verified_at = None, time.monotonic()
                else:
                    repaired = mirror.repair(frozenset(chunk), self._quiet)
                    self.events["repaired"] += len(repaired)
                    if repaired:
                        self._republish()
            if self._since_optimize >= OPTIMIZE_AFTER_CHANGES and self._quiet():
                mirror.optimize()
                self._since_optimize = 0
                self._republish()
        except (StoreError, OSError, RuntimeError) as exc:
            log_fault("maintenance of the public mirror failed", exc)

    def _republish(self) -> None:
        """Publish the mirror again under the current generation (after a repair or recount)."""
        current = self._current
        if current is not None:
            self._publish(current.generation, current.graphs, frozenset())

    def _publish(
        self, generation: int, public: frozenset[str], touched: frozenset[str] | None = None
    ) -> None:
        """Checkpoint the mirror as the view of ``generation`` after checking what it holds.

        After a rebuild (``touched`` is None) the whole checkpoint is checked; after a batch,
        the graphs it touched (``PublicMirror.verify``), so the cost follows the change.
        """
        path = self._directory / f"view-{next(self._names)}"
        if touched is not None:
            self._mirror.verify(touched)
        try:
            self._mirror.checkpoint(path)
            if touched is None:
                check_view(path, public)
        except (StoreError, OSError):
            shutil.rmtree(path, ignore_errors=True)
            raise
        self._install(
            View(generation, path, self._mirror.quads, public, time.monotonic(), time.time())
        )

    def _install(self, view: View) -> None:
        with self._lock:
            old = self._current
            if old is not None and old.path != view.path:
                # Kept only to be deleted after the grace period: without its graph set (a
                # frozenset of every public graph per write would grow with the writes).
                self._old.append(dataclasses.replace(old, graphs=frozenset()))
            self._current = view
            self._lock.notify_all()
        self._prune()

    def _prune(self) -> None:
        now = time.monotonic()
        with self._lock:
            stale = [v for v in self._old[:-2] if now - v.made_at > self._grace]
            self._old = [v for v in self._old if v not in stale]
        for view in stale:
            shutil.rmtree(view.path, ignore_errors=True)

    # ------------------------------------------------------------------ reading
    def current(self, at_least: int = 0, timeout: float = 5.0) -> View:
        """Return the newest view, waiting (at most ``timeout``) for one covering ``at_least``.

        Raises:
            ViewNotReadyError: if no view covering ``at_least`` can be had within ``timeout``.
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

    @property
    def failing(self) -> bool:
        """Return whether the views are being healed after a fault."""
        with self._lock:
            return self._failure is not None

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
            link_copy(base.path, path)
            store = TripleStore.open(path, journaled=False)
            added = 0
            try:
                for graph in unlocked:
                    quads = list(self._main.quads(graph=graph))
                    store.add(quads)
                    added += len(quads)
            finally:
                store.close()
            total = None if base.quads is None else base.quads + added
            view = View(
                base.generation, path, total, base.graphs | names, time.monotonic(), time.time()
            )
            check_view(path, view.graphs)
            self._tokens[key] = view
            while len(self._tokens) > TOKEN_VIEWS:
                _, old = self._tokens.popitem(last=False)
                shutil.rmtree(old.path, ignore_errors=True)
            return view

    def scratch(self, prefix: str) -> Path:
        """Return a fresh path inside the views directory (for a private copy of a view)."""
        return self._directory / f"{prefix}-{next(self._names)}"

    def close(self) -> None:
        """Stop the thread and release the mirror (it stays on disk for the next start)."""
        self._stopping.set()
        self._mirror.cancel.set()
        self._queue.put(None)
        self._thread.join(120)
        if self._thread.is_alive():
            log.warning("the view publisher did not stop in time; its mirror is left open")
            return
        self._mirror.close()

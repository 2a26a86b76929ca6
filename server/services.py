"""`Services`: what ``create_app`` builds once and every view reaches through ``services()``.

It holds the configuration, the main store, the visibility index, the views and query-worker pool of
the public SPARQL endpoint, and caches keyed by the store generation. Every write path (experiments,
uploads, dataset loads, SPARQL Update) calls ``notify_write()`` after its transaction: that takes
the store's committed changes from its change log, brings the visibility index up to date at the
cost of those changes, bumps the generation (which empties the caches and changes every ETag) and
hands the changes to the view publisher, which makes them visible to SPARQL in the background.
Nothing here is module-level state. The app's experiment runner lives next to it, on
``app.extensions["experiment_runner"]`` (``experiment_runner()``).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import hashlib
import logging
import os
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from flask import current_app
from pyoxigraph import NamedNode

from evaluators.experiments.runner import ExperimentRunner
from server.config import Config
from server.listings import ExperimentIndex
from server.replica.dumps import PublicDumps
from server.replica.views import View, ViewNotReadyError, ViewPublisher
from server.sparql.workers import QueryPool
from store.changes import Change
from store.protocol import RdfStore
from store.visibility import PrivateExperiment, VisibilityIndex, token_hash, unlocked

log = logging.getLogger(__name__)
T = TypeVar("T")

RUNNER_KEY = "experiment_runner"

# Cached documents per generation (JSON-LD, visibility lists, counts): entries per kind, and
# the bytes of the bodies all kinds hold together.
CACHE_ENTRIES = 512
CACHE_BYTES = 256 * 1024 * 1024
# How long a computation waits for a slot of the gate before it runs anyway (a stuck one must
# not stop every other page).
GATE_WAIT_SECONDS = 10.0


def _size(value: object) -> int:
    """Return the bytes a cached value's body holds (pages, documents; 0 for small objects)."""
    body = getattr(value, "body", value)
    return len(body) if isinstance(body, bytes | str) else 0


@dataclass(frozen=True, slots=True)
class Visibility:
    """The graphs one reader may see at one store generation."""

    names: frozenset[str]
    unlocked: tuple[NamedNode, ...]
    private: tuple[PrivateExperiment, ...]

    def can_see(self, graph: NamedNode) -> bool:
        """Return whether ``graph`` is visible."""
        return graph.value in self.names

    @property
    def graphs(self) -> tuple[NamedNode, ...]:
        """Return the visible graphs, sorted (built on use: thousands at scale)."""
        return tuple(NamedNode(n) for n in sorted(self.names))

    def graphs_under(self, prefix: str) -> list[NamedNode]:
        """Return the visible graphs whose IRI starts with ``prefix``, sorted."""
        return [NamedNode(n) for n in sorted(self.names) if n.startswith(prefix)]

    @property
    def key(self) -> str:
        """Return a cache key part that differs between readers who see different graphs."""
        return ",".join(sorted(g.value for g in self.unlocked))


_MISSING = object()


class ComputeGate:
    """Lets at most ``slots`` threads compute at once; a thread inside may enter again.

    Pages are computed in Python, which runs one thread at a time: eight requests computing
    at once share one interpreter lock and all finish late (each waits for the lock again
    after every store call and socket write). With as many computations as cores, the others
    wait their turn, and each one that runs finishes at its own speed.
    """

    def __init__(self, slots: int, wait: float = GATE_WAIT_SECONDS) -> None:
        self._slots = threading.Semaphore(max(1, slots))
        self._wait = wait
        self._depth = threading.local()

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold one slot for the block (no second slot for a thread already inside).

        A thread that waited ``wait`` seconds runs without a slot (logged): a computation
        stuck in a slot slows the others, it never stops them.
        """
        depth: int = getattr(self._depth, "n", 0)
        if depth == 0:
            self._depth.holds = self._slots.acquire(timeout=self._wait)
            if not self._depth.holds:
                log.warning("no computation slot within %.0f s; computing anyway", self._wait)
        self._depth.n = depth + 1
        try:
            yield
        finally:
            self._depth.n = depth
            if depth == 0 and self._depth.holds:
                self._depth.holds = False
                self._slots.release()

    def step_out(self) -> None:
        """Give this thread's slot to another computation for the rest of its own: it waits
        for another process now (a query worker reading a document part), and what is left
        after that (parsing and writing what the worker sent) is short, like a cache hit."""
        if getattr(self._depth, "holds", False):
            self._depth.holds = False
            self._slots.release()


# One gate for every cache of the process: the interpreter lock is one for all of them.
PAGE_GATE = ComputeGate(os.cpu_count() or 1)


class GenerationCache:
    """Bounded LRU caches whose entries belong to one store generation.

    Only the newest generation's entries are kept: storing the first entry of a newer
    generation drops the older ones (nobody asks for them again), so memory does not grow
    with the number of writes; a value computed for an older generation is returned but not
    kept.

    Each kind of entry (the first word of its key: ``experiment``, ``system-page``, …) is an
    LRU of its own with at most ``entries`` entries, so one kind requested at random (10,000
    experiment pages) never evicts another kind's entries (the forty system pages); the cache
    holds at most ``entries`` times the number of kinds, a fixed set named in the code.
    """

    def __init__(
        self,
        entries: int = CACHE_ENTRIES,
        gate: ComputeGate | None = None,
        max_bytes: int = CACHE_BYTES,
    ) -> None:
        self._entries = entries
        self._max_bytes = max_bytes
        self._bytes: dict[str, int] = {}
        self._gate = gate or PAGE_GATE
        self._newest = -1
        self._kinds: dict[str, OrderedDict[tuple[int, str], object]] = {}
        self._pending: dict[tuple[int, str], threading.Event] = {}
        self._lock = threading.Lock()

    def get_or_make(self, generation: int, key: str, make: Callable[[], T]) -> T:
        """Return the cached value for ``key`` at ``generation``, computing it once.

        Concurrent callers asking for the same missing entry wait for the first one's result
        instead of computing it again (an expensive page hit by many clients at once costs one
        computation); if that computation fails, the next caller tries again. A miss is
        computed inside the cache's gate (``ComputeGate``), entered before the entry is marked
        as being computed: whoever computes an entry holds the gate, so a computation waiting
        for another one always waits for a running one.
        """
        slot = (generation, key)
        kind = key.split(" ", 1)[0]
        while True:
            with self._lock:
                found, pending = self._lookup(kind, slot)
            if found is not _MISSING:
                return found  # type: ignore[return-value]
            if pending is not None:
                pending.wait()
                continue
            with self._gate.held():
                with self._lock:
                    found, pending = self._lookup(kind, slot)
                    event = None
                    if found is _MISSING and pending is None:
                        event = self._pending[slot] = threading.Event()
                if event is None:
                    continue
                try:
                    value = make()
                    with self._lock:
                        self._keep(generation, kind, slot, value)
                    return value
                finally:
                    with self._lock:
                        self._pending.pop(slot, None)
                    event.set()

    def _lookup(self, kind: str, slot: tuple[int, str]) -> tuple[object, threading.Event | None]:
        data = self._kinds.get(kind)
        if data is not None and slot in data:
            data.move_to_end(slot)
            return data[slot], None
        return _MISSING, self._pending.get(slot)

    def _keep(self, generation: int, kind: str, slot: tuple[int, str], value: object) -> None:
        if generation > self._newest:
            self._newest = generation
            self._drop_all()
        if generation != self._newest:
            return
        data = self._kinds.setdefault(kind, OrderedDict())
        data[slot] = value
        self._bytes[kind] = self._bytes.get(kind, 0) + _size(value)
        while len(data) > self._entries:
            self._drop_oldest(kind)
        # Over the byte budget: the oldest entries of the kind holding the most bytes go first
        # (the large documents one client asked for, never the small pages of the others).
        while sum(self._bytes.values()) > self._max_bytes:
            self._drop_oldest(max(self._bytes, key=lambda k: self._bytes[k]))

    def _drop_oldest(self, kind: str) -> None:
        _slot, value = self._kinds[kind].popitem(last=False)
        self._bytes[kind] -= _size(value)
        if not self._kinds[kind]:
            del self._kinds[kind], self._bytes[kind]

    def _drop_all(self) -> None:
        """Drop every entry (the caller holds the lock)."""
        self._kinds.clear()
        self._bytes.clear()

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._drop_all()

    def __len__(self) -> int:
        return sum(len(data) for data in self._kinds.values())


class _Writes:
    """The write generation, the public-content generation, and the lock that orders change
    handling. The public generation (and its time) moves only when a write changed what an
    anonymous reader sees: public validators follow it, so a private run moves none of them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.generation = 0
        self.public = 0
        self.public_time = time.time()

    def public_changed(
        self, changes: list[Change], before: frozenset[str], after: frozenset[str]
    ) -> None:
        """Move the public generation if ``changes`` touched public graphs or publication."""
        if (before is not after and before != after) or any(
            c.everything or not after.isdisjoint(g.value for g in c.touched()) for c in changes
        ):
            self.public += 1
            self.public_time = time.time()


@dataclass(frozen=True, slots=True)
class Services:
    """The application's resources; one instance per app, on ``app.extensions["services"]``."""

    config: Config
    store: RdfStore
    index: VisibilityIndex
    experiments: ExperimentIndex
    views: ViewPublisher
    pool: QueryPool
    dumps: PublicDumps
    cache: GenerationCache = field(default_factory=GenerationCache)
    # Bodies of pages and documents for anonymous readers, per *public* generation: a write
    # that changes nothing an anonymous reader sees (a private experiment running) keeps them.
    public_bodies: GenerationCache = field(default_factory=GenerationCache)
    # Visibility per index version: it changes far less often than the store does.
    visibility_cache: GenerationCache = field(default_factory=GenerationCache)
    writes: _Writes = field(default_factory=_Writes, compare=False, hash=False)
    # Distinguishes ETags of two server runs whose generation counters both start at 0.
    instance: str = field(default_factory=lambda: secrets.token_hex(4))
    # Called by close() before the workers and the store are released (running experiments
    # are stopped there). Not part of equality or hashing.
    closers: list[Callable[[], None]] = field(default_factory=list, compare=False, hash=False)
    # When the store last changed as far as this process knows (seconds since the epoch): the
    # start, then every write. Readers send it as Last-Modified.
    last_write: list[float] = field(
        default_factory=lambda: [time.time()], compare=False, hash=False
    )

    @property
    def base(self) -> str:
        """Return the base IRI (no trailing slash)."""
        return self.config.base_iri

    @property
    def generation(self) -> int:
        """Return the store generation (bumped by every write)."""
        return self.writes.generation

    @property
    def public_generation(self) -> int:
        """Return the generation of what anonymous readers see (moved by public writes only)."""
        return self.writes.public

    def remember(self, key: str, make: Callable[[], T]) -> T:
        """Return ``make()`` for ``key``, computed once per store generation."""
        return self.cache.get_or_make(self.generation, key, make)

    def notify_write(self) -> None:
        """Record that the store changed: index, generation, caches, and the SPARQL views."""
        self.last_write[0] = time.time()
        journal = self.store.changes
        with self.writes.lock:
            changes, sequence = journal.drain() if journal is not None else ([], 0)
            before = self.index.public_names()
            if changes:
                self.index.apply(changes)
                self.experiments.apply(changes)
            self.writes.generation += 1
            generation = self.writes.generation
            public = self.index.public_names()
            known = changes if journal is not None else [Change(everything=True)]
            self.writes.public_changed(known, before, public)
            self.cache.clear()
            self.views.submit(generation, changes, public, sequence)

    def view(self, timeout: float = 5.0) -> View:
        """Return the newest SPARQL view that covers every write made before this call.

        Raises:
            ViewNotReadyError: if no such view could be had within ``timeout``.
        """
        return self.views.current(self.generation, timeout)

    def public_quads(self) -> int | None:
        """Return the number of public quads in the SPARQL view of the current generation.

        Waits for that view like a query does (None if it cannot be had within 5 s, or while
        the count is being redone).
        """
        try:
            return self.view().quads
        except ViewNotReadyError:
            return None

    @property
    def modified(self) -> float:
        """Return when the store last changed (seconds since the epoch; the start at first)."""
        return self.last_write[0]

    def etag(self, *parts: str, public: bool = False) -> str:
        """Return an entity tag for a representation that only changes with the store.

        ``parts`` name the representation (path, form, what the reader may see, query); they
        are hashed, so the tag is short and names nothing private. ``public``: the
        representation shows public content only, so its tag follows the public generation.
        """
        digest = hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:20]
        generation = f"p{self.writes.public}" if public else str(self.generation)
        return f"{self.instance}-{generation}-{digest}"

    def modified_for(self, public: bool) -> float:
        """Return ``Last-Modified`` of public content (``public``) or of everything."""
        return self.writes.public_time if public else self.modified

    def visibility(self, tokens: Iterable[str] = ()) -> Visibility:
        """Return what a reader presenting ``tokens`` may see (cached per index version)."""
        with self.writes.lock:
            state = self.index.version, self.index.public_names(), self.index.private()
        return self._visible(state, tuple(sorted(set(tokens))))

    def anonymous_visibility(self) -> Visibility | None:
        """Return what an anonymous reader may see, or None while a write is being recorded
        (for the SPARQL front, whose event loop must not wait for the write lock)."""
        if not self.writes.lock.acquire(blocking=False):
            return None
        try:
            state = self.index.version, self.index.public_names(), self.index.private()
        finally:
            self.writes.lock.release()
        return self._visible(state, ())

    def _visible(
        self,
        state: tuple[int, frozenset[str], tuple[PrivateExperiment, ...]],
        presented: tuple[str, ...],
    ) -> Visibility:
        version, public, private = state
        return self.visibility_cache.get_or_make(
            version,
            "visibility " + " ".join(token_hash(t) for t in presented),
            lambda: self._visibility(public, private, presented),
        )

    @staticmethod
    def _visibility(
        public: frozenset[str], private: tuple[PrivateExperiment, ...], tokens: tuple[str, ...]
    ) -> Visibility:
        opened = tuple(unlocked(private, tokens))
        return Visibility(public | {g.value for g in opened}, opened, private)

    def close(self) -> None:
        """Run the closers (last registered first), stop the query workers, release the store."""
        # Reverse order, like a context stack: the experiment runner, registered last, stops
        # its runs before the RAG service they may use is closed.
        for closer in reversed(self.closers):
            closer()
        self.pool.close()
        self.views.close()
        self.store.close()


def release_memory() -> None:
    """Give the memory of a large piece of work back to the operating system.

    After a large upload Python frees its objects, but the C allocator keeps the pages (the
    process stayed 1.2 GB larger after a 200,000-question upload); ``malloc_trim`` returns
    them (glibc only; elsewhere this only collects garbage).
    """
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


# Collections of the young generations: after every 10,000 allocations net of frees (700 by
# default), and the next older one every 10 of those. Fewer collections of what the caches hold.
GC_THRESHOLDS = (10_000, 10, 10)


def settle_heap() -> None:
    """Exempt what start-up built (the experiment and visibility indexes, parsed templates,
    imported modules) from Python's cyclic garbage collector, and collect less often.

    A full collection visits every tracked object with every thread stopped: at 10,000
    experiments 140-190 ms, about once in 75 cold pages, which alone made the pages' p99
    (``bench/scale.py --random-on``; docs/server.md, "Random URLs at 10,000 experiments").
    Frozen objects are still freed by reference counting when nothing holds them; only cycles
    among them would wait, and start-up's objects live as long as the process.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


# Seconds between two snapshots of a changed experiment index (and one more at close).
SNAPSHOT_SECONDS = 30.0


class IndexSnapshots:
    """Writes the experiment index to disk in the background when it changed (``save``)."""

    def __init__(self, svc: Services, path: Path, every: float = SNAPSHOT_SECONDS) -> None:
        self._svc, self._path, self._every = svc, path, every
        # An index read back unchanged from ``path`` is not written again.
        self._saved = svc.experiments.on_disk
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="qabench-snapshots", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            self.save()

    def save(self) -> None:
        """Write the index when it changed since the last write (state taken under the lock)."""
        experiments = self._svc.experiments
        with self._svc.writes.lock:
            version = experiments.version
            if version == self._saved:
                return
            state = experiments.state()
        try:
            experiments.save(self._path, state)
            self._saved = version
        except OSError as exc:
            log.warning("the experiment index could not be saved: %s", exc)

    def close(self) -> None:
        """Stop, after a last snapshot."""
        self._stop.set()
        self._thread.join(10)
        self.save()


def services() -> Services:
    """Return the ``Services`` of the current Flask app."""
    found = current_app.extensions["services"]
    assert isinstance(found, Services)
    return found


def experiment_runner() -> ExperimentRunner:
    """Return the experiment runner of the current Flask app (built by ``create_app``)."""
    found = current_app.extensions[RUNNER_KEY]
    assert isinstance(found, ExperimentRunner)
    return found

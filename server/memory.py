"""What the serving process keeps in memory, and how: caches of computed values per store
generation, the gate that lets only as many computations run at once as there are cores, and
the care of the heap (what start-up built kept out of full collections; a large upload's
memory given back to the operating system).

``GenerationCache`` holds pages, documents and other computed values for the newest store
generation only, each kind of entry an LRU of its own within one byte budget; a miss is
computed once, however many callers ask for it at once, inside ``PAGE_GATE`` (a
``ComputeGate``). ``server.services.Services`` owns the caches; pages and documents reach them
through it.

``GraphValues`` holds values computed from one graph alone (its page layout), kept while no
write touches the graph and made by one background thread, one at a time; a reader waits for
one within a bound (``NotReadyError`` past it: 503 with ``Retry-After``).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import logging
import os
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

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


# Values computed from one graph alone kept across generations (page layouts of graphs).
PER_GRAPH_VALUES = 16
# Values from one graph that may wait to be made at once (more: refused at once, 503).
GRAPH_VALUE_QUEUE = 64
# Retry-After (seconds) when a reader's wait for such a value ran out.
GRAPH_VALUE_RETRY_SECONDS = 5
# The nice value of the thread that makes them (serving requests comes first).
GRAPH_VALUE_NICE = 10

_Slot = tuple[str, str, int, int]


class NotReadyError(Exception):
    """A value computed from one graph (its page layout) is still being made in the background;
    ask again after ``retry_after`` seconds."""

    def __init__(self, graph: str, detail: str, retry_after: int) -> None:
        super().__init__(detail)
        self.graph = graph
        self.retry_after = retry_after


class _Job:
    """One value to make from one graph, and its outcome."""

    def __init__(self, graph: str, make: Callable[[], object]) -> None:
        self.graph, self.make = graph, make
        self.done = threading.Event()
        self.value: object = None
        self.error: BaseException | None = None


class GraphValues:
    """Values computed from one graph alone (page layouts), made by one background thread, one
    at a time, and kept (the newest ``PER_GRAPH_VALUES``) while their slot holds: the slot names
    the graph's write epochs, so a write to the graph makes the next reader's slot a new one.

    A reader waits for the value up to a bound (``get``); a value nobody waits for any more is
    still made and kept. Bounded: one thread, at most ``GRAPH_VALUE_QUEUE`` values waiting, and
    each reader waits at most its bound (then ``NotReadyError``: 503 with ``Retry-After``). A
    layout of a 2.6 M-quad graph takes ~6 s; readers of other graphs' pages meanwhile wait
    behind it, within their bound."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done: OrderedDict[_Slot, object] = OrderedDict()
        self._pending: dict[_Slot, _Job] = {}
        self._queue: deque[tuple[_Slot, _Job]] = deque()
        self._wake = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._closed = False

    def get(self, slot: _Slot, make: Callable[[], T], wait: float) -> T:
        """Return the value of ``slot`` (made by ``make`` in the background once), waiting for
        it up to ``wait`` seconds.

        Raises:
            NotReadyError: if it is not made within ``wait`` (or too many values wait).
            Exception: what ``make`` raised (the next reader tries again).
        """
        graph = slot[1]
        with self._lock:
            if slot in self._done:
                self._done.move_to_end(slot)
                return self._done[slot]  # type: ignore[return-value]
            job = self._pending.get(slot)
            if job is None:
                if len(self._pending) >= GRAPH_VALUE_QUEUE or self._closed:
                    raise NotReadyError(
                        graph,
                        "The server is laying out the pages of other graphs; try again shortly.",
                        GRAPH_VALUE_RETRY_SECONDS,
                    )
                job = self._pending[slot] = _Job(graph, make)
                self._queue.append((slot, job))
                self._start()
                self._wake.notify()
        if not job.done.wait(wait):
            raise NotReadyError(
                graph,
                f"The pages of {graph} are being laid out (after a start, or after a write to "
                "it); try again shortly.",
                GRAPH_VALUE_RETRY_SECONDS,
            )
        if job.error is not None:
            raise job.error
        return job.value  # type: ignore[return-value]

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="qabench-layouts", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        with contextlib.suppress(OSError):  # lower this thread's priority only
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), GRAPH_VALUE_NICE)
        while True:
            with self._lock:
                while not self._queue and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return
                slot, job = self._queue.popleft()
            try:
                job.value = job.make()
            except Exception as exc:  # handed to every reader who waits for it
                log.warning("could not make %s of %s: %s", slot[0], job.graph, exc)
                job.error = exc
            with self._lock:
                del self._pending[slot]
                if job.error is None:
                    self._done[slot] = job.value
                    while len(self._done) > PER_GRAPH_VALUES:
                        self._done.popitem(last=False)
            job.done.set()

    def close(self, wait: float = 10.0) -> None:
        """Stop making values (the one being made is waited for up to ``wait`` seconds)."""
        with self._lock:
            self._closed = True
            self._wake.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(wait)

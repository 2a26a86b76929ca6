"""What the serving process keeps in memory, and how: caches of computed values per store
generation, the gate that lets only as many computations run at once as there are cores, and
the care of the heap (what start-up built kept out of full collections; a large upload's
memory given back to the operating system).

``GenerationCache`` holds pages, documents and other computed values for the newest store
generation only, each kind of entry an LRU of its own within one byte budget; a miss is
computed once, however many callers ask for it at once, inside ``PAGE_GATE`` (a
``ComputeGate``). ``server.services.Services`` owns the caches; pages and documents reach them
through it.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import logging
import os
import threading
from collections import OrderedDict
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

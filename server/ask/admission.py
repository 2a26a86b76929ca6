"""Admission to the RAG system: a bounded pool off the request threads, and who may choose what.

A RAG run takes seconds to minutes of CPU and writes to the store, so the web server never runs
one on a request thread and never starts one per request. ``RagPool`` runs at most
``rag.workers`` runs at a time and lets at most ``rag.queue`` more wait; anything beyond is
refused at once (``PoolFullError``, answered 429 with ``Retry-After`` estimated from recent
run times). Synchronous routes (``POST /ask``, ``/api/qa``) wait for their run, which holds a
request thread, so at most half of ``server.threads`` may wait at once: the other half keeps
serving pages and SPARQL whatever the RAG system is doing.

``check_generator`` keeps the heavy generators (``transformers-local``: a local model in
memory; ``openai-http``: a paid endpoint) for holders of the submit or admin token, unless the
operator set ``rag.open_generators`` or made one of them ``rag.generator``. Nothing here reads
requests beyond that check, and nothing here touches the store.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import TypeVar

from rag.models.generators import EXTRACTIVE
from server.config import Config
from server.web.auth import holds_form_token
from server.web.problems import Problem
from vocab.project import QAB

T = TypeVar("T")

# What a run is assumed to take before any has finished (seconds).
FIRST_ESTIMATE_SECONDS = 10.0
# The longest a synchronous request waits for its run, queue included.
SYNC_WAIT_SECONDS = 300.0
MAX_RETRY_AFTER_SECONDS = 600


class PoolFullError(Exception):
    """Every run slot and every place in the queue is taken."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RagPool:
    """Runs RAG work on ``workers`` threads with at most ``queue`` items waiting."""

    def __init__(self, workers: int, queue: int, *, sync_waiters: int) -> None:
        self.workers = max(1, workers)
        self.capacity = self.workers + max(0, queue)
        self._sync_cap = max(1, min(sync_waiters, self.capacity))
        self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="qabench-rag")
        self._lock = threading.Lock()
        self._pending = 0
        self._waiting = 0
        self._estimate = FIRST_ESTIMATE_SECONDS

    @property
    def pending(self) -> int:
        """Return how many runs are running or queued."""
        with self._lock:
            return self._pending

    def retry_after(self) -> int:
        """Return the seconds after which a slot is likely free (from recent run times)."""
        with self._lock:
            rounds = math.ceil(max(1, self._pending) / self.workers)
            seconds = math.ceil(self._estimate * rounds)
        return max(1, min(MAX_RETRY_AFTER_SECONDS, seconds))

    def _full(self) -> PoolFullError:
        waiting = self.capacity - self.workers
        return PoolFullError(
            f"The RAG system is answering {self.workers} question(s) with {waiting} more "
            "waiting, as many as this server takes; try again later.",
            self.retry_after(),
        )

    def submit(self, work: Callable[[], T]) -> Future[T]:
        """Queue ``work``; return its future.

        Raises:
            PoolFullError: when ``rag.workers + rag.queue`` runs are already pending.
        """
        with self._lock:
            full = self._pending >= self.capacity
            if not full:
                self._pending += 1
        if full:
            raise self._full()
        future = self._executor.submit(self._timed, work)
        future.add_done_callback(self._done)
        return future

    def run(self, work: Callable[[], T]) -> T:
        """Run ``work`` in the pool and wait for its result (holding the calling thread).

        Raises:
            PoolFullError: when the pool is full, or half of the request threads already wait.
            TimeoutError: when the run has not finished within ``SYNC_WAIT_SECONDS``.
        """
        with self._lock:
            full = self._waiting >= self._sync_cap
            if not full:
                self._waiting += 1
        if full:
            raise self._full()
        try:
            future = self.submit(work)
            try:
                return future.result(timeout=SYNC_WAIT_SECONDS)
            except FutureTimeout:
                future.cancel()
                raise TimeoutError(
                    f"no answer within {SYNC_WAIT_SECONDS:g} s (queue included)"
                ) from None
        finally:
            with self._lock:
                self._waiting -= 1

    def _timed(self, work: Callable[[], T]) -> T:
        started = time.monotonic()
        try:
            return work()
        finally:
            took = time.monotonic() - started
            with self._lock:
                self._estimate = 0.7 * self._estimate + 0.3 * took

    def _done(self, _future: Future[T]) -> None:
        with self._lock:
            self._pending -= 1

    def close(self) -> None:
        """Stop taking work; queued runs are cancelled, running ones finish on their own."""
        self._executor.shutdown(wait=False, cancel_futures=True)


def busy_problem(exc: PoolFullError) -> Problem:
    """Return the 429 problem for a full pool."""
    return Problem(
        429,
        str(exc),
        QAB.ServerBusy,
        "RAG system busy",
        {"retry_after_seconds": exc.retry_after},
        {"Retry-After": str(exc.retry_after)},
    )


def reserved(name: str, config: Config) -> bool:
    """Return whether generator ``name`` is kept for holders of the submit or admin token.

    ``extractive`` and the configured ``rag.generator`` are open to everybody; the others too
    when ``rag.open_generators`` is set.
    """
    return name not in (EXTRACTIVE, config.rag.generator) and not config.rag.open_generators


@dataclass(frozen=True, slots=True)
class MenuEntry:
    """A generator the ask page's menu leaves out, and why."""

    name: str
    reason: str
    needs_token: bool = False


def generator_menu(
    names: Sequence[str],
    config: Config,
    unavailable: Callable[[str], str | None],
    *,
    holds_token: bool,
) -> tuple[tuple[str, ...], tuple[MenuEntry, ...]]:
    """Split the generators into those this reader may run here and those left out (with why).

    A generator is left out when the server cannot run it (``unavailable`` gives the reason:
    a model not installed, an endpoint not configured) or when it is reserved and the reader
    holds no token.

    >>> from server.config import Config
    >>> offered, hidden = generator_menu(("extractive", "openai-http"), Config(),
    ...     lambda n: None, holds_token=False)
    >>> offered, [(h.name, h.needs_token) for h in hidden]
    (('extractive',), [('openai-http', True)])
    """
    offered: list[str] = []
    hidden: list[MenuEntry] = []
    for name in names:
        why = unavailable(name)
        if why is not None:
            hidden.append(MenuEntry(name, why))
        elif reserved(name, config) and not holds_token:
            hidden.append(MenuEntry(name, "reserved for holders of the submit token", True))
        else:
            offered.append(name)
    return tuple(offered), tuple(hidden)


def check_generator(name: str | None, config: Config) -> None:
    """Refuse a reserved generator (``reserved``) to a request without the submit or admin token.

    Raises:
        Problem: 403 naming the generator and what opens it.
    """
    if name is None or not reserved(name, config):
        return
    if holds_form_token():
        return
    raise Problem(
        403,
        f"The generator {name!r} is reserved for holders of the submit token on this server "
        f"(it costs memory or money); use {config.rag.generator!r} or send the token as "
        "Authorization: Bearer.",
        QAB.Forbidden,
    )

"""A pool of killable worker processes that evaluate public SPARQL queries over a replica.

pyoxigraph cannot cancel a running query from Python, and only one process may open the store
directory. So each worker holds an in-memory replica loaded from a ``replica.Snapshot``; the
parent hands one job at a time to an idle worker and waits at most ``timeout`` seconds for the
answer. A worker that overruns is killed and replaced in the background while the other workers
keep serving. Workers are started with ``spawn`` (no inherited locks or store handles) and
import neither Flask nor the main store. Rows are capped while they are collected.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import queue
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from pyoxigraph import RdfFormat

from server.sparql.jobs import QueryJob, QueryOutcome, evaluate_job
from server.sparql.replica import Snapshot
from store.triplestore import TripleStore

log = logging.getLogger(__name__)

# Loading a replica is not part of a query's time budget, but it must end some time.
LOAD_TIMEOUT_SECONDS = 600.0


class PoolError(Exception):
    """Root of the pool's errors (all answered with 503 and ``Retry-After``)."""


class QueryTimeoutError(PoolError):
    """The query overran the time limit; its worker was killed."""


class PoolBusyError(PoolError):
    """No worker became free within the time limit."""


class WorkerFailedError(PoolError):
    """The worker died (for example out of memory) while evaluating the query."""


class _Replicas:
    """Worker-side state: the public replica, and the private one loaded on demand."""

    def __init__(self) -> None:
        self.generation = -1
        self.public = TripleStore.in_memory()
        self.private: TripleStore | None = None
        self.snapshot: Snapshot | None = None

    def ensure(self, snapshot: Snapshot, need_private: bool) -> None:
        if snapshot.generation != self.generation:
            public = TripleStore.in_memory()
            public.load(snapshot.public.read_bytes(), RdfFormat.N_QUADS)
            self.public, self.private = public, None
            self.generation, self.snapshot = snapshot.generation, snapshot
        if need_private and self.private is None:
            full = TripleStore.in_memory()
            full.load(snapshot.public.read_bytes(), RdfFormat.N_QUADS)
            full.load(snapshot.private.read_bytes(), RdfFormat.N_QUADS)
            self.private = full


def worker_main(conn: Connection, snapshot: Snapshot) -> None:
    """Serve jobs from ``conn`` until told to stop (runs in the worker process)."""
    replicas = _Replicas()
    replicas.ensure(snapshot, need_private=False)
    conn.send(("ready", snapshot.generation))
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message[0] == "stop":
            return
        if message[0] == "load":
            replicas.ensure(message[1], need_private=False)
            conn.send(("loaded", message[1].generation))
            continue
        job: QueryJob = message[1]
        snapshot = message[2]
        if snapshot.generation != replicas.generation or (
            job.use_private and replicas.private is None
        ):
            # Loading is announced so that it does not count against the query's time limit.
            conn.send(("loading", snapshot.generation))
            replicas.ensure(snapshot, need_private=job.use_private)
            conn.send(("loaded", replicas.generation))
        store = replicas.private if job.use_private and replicas.private else replicas.public
        conn.send(("done", evaluate_job(store, job)))


@dataclass(slots=True, eq=False)
class _Worker:
    process: BaseProcess
    conn: Connection
    generation: int


class QueryPool:
    """Runs jobs on ``size`` worker processes with a hard time limit per job."""

    def __init__(self, size: int, timeout: float) -> None:
        self._size = size
        self._timeout = timeout
        self._context = multiprocessing.get_context("spawn")
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()
        self._started = False
        self._closed = False
        self._snapshot: Snapshot | None = None
        # Set once the first worker is ready: until then requests wait for start-up, not 503.
        self._ready = threading.Event()

    @property
    def started(self) -> bool:
        """Return whether workers have been started."""
        return self._started

    def start(self, snapshot: Snapshot) -> None:
        """Start the workers now instead of on the first query."""
        self._ensure_started(snapshot)

    def wait_ready(self, timeout: float) -> bool:
        """Wait until every worker is idle; return whether that happened within ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._idle.qsize() >= self._size:
                return True
            time.sleep(0.05)
        return False

    @property
    def timeout(self) -> float:
        """Return the per-query time limit in seconds."""
        return self._timeout

    def _spawn(self, snapshot: Snapshot) -> None:
        parent, child = self._context.Pipe()
        process = self._context.Process(
            target=worker_main, args=(child, snapshot), name="qabench-query-worker", daemon=True
        )
        process.start()
        child.close()
        worker = _Worker(process, parent, -1)
        with self._lock:
            if self._closed:
                process.kill()
                return
            self._all.add(worker)
        try:
            if not parent.poll(LOAD_TIMEOUT_SECONDS):
                raise EOFError("worker did not become ready")
            _kind, generation = parent.recv()
            worker.generation = generation
        except (EOFError, OSError) as exc:
            log.error("query worker failed to start: %s", exc)
            self._discard(worker)
            return
        self._idle.put(worker)
        self._ready.set()

    def _spawn_later(self, snapshot: Snapshot) -> None:
        threading.Thread(target=self._spawn, args=(snapshot,), daemon=True).start()

    def _discard(self, worker: _Worker) -> None:
        with self._lock:
            self._all.discard(worker)
        if worker.process.is_alive():
            worker.process.kill()
        worker.process.join(5)
        worker.conn.close()

    def _ensure_started(self, snapshot: Snapshot) -> None:
        with self._lock:
            if self._started or self._closed:
                return
            self._started = True
            self._snapshot = snapshot
        for _ in range(self._size):
            self._spawn_later(snapshot)

    def publish(self, snapshot: Snapshot) -> None:
        """Announce a new snapshot; idle workers reload it in the background."""
        with self._lock:
            self._snapshot = snapshot
            if not self._started:
                return
        threading.Thread(target=self._refresh_idle, args=(snapshot,), daemon=True).start()

    def _refresh_idle(self, snapshot: Snapshot) -> None:
        for _ in range(self._size):
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                return
            if worker.generation < snapshot.generation:
                try:
                    worker.conn.send(("load", snapshot))
                    if not worker.conn.poll(LOAD_TIMEOUT_SECONDS):
                        raise EOFError("reload timed out")
                    worker.generation = worker.conn.recv()[1]
                except (EOFError, OSError):
                    self._discard(worker)
                    self._spawn_later(snapshot)
                    continue
            self._idle.put(worker)

    def run(self, job: QueryJob, snapshot: Snapshot) -> QueryOutcome:
        """Evaluate ``job`` on a worker whose replica is ``snapshot``.

        Raises:
            PoolBusyError: no worker became free within the time limit.
            QueryTimeoutError: the query overran the limit (its worker was killed).
            WorkerFailedError: the worker died while evaluating.
        """
        self._ensure_started(snapshot)
        if not self._ready.wait(LOAD_TIMEOUT_SECONDS):
            raise PoolBusyError("No query worker could be started")
        try:
            worker = self._idle.get(timeout=self._timeout)
        except queue.Empty:
            raise PoolBusyError("All query workers are busy") from None
        try:
            worker.conn.send(("query", job, snapshot))
            message = self._wait(worker, snapshot)
            if message[0] == "loading":
                # The time budget starts once the worker's replica is current.
                if not worker.conn.poll(LOAD_TIMEOUT_SECONDS):
                    raise EOFError("replica load timed out")
                worker.generation = worker.conn.recv()[1]
                message = self._wait(worker, snapshot)
            outcome: QueryOutcome = message[1]
        except (EOFError, OSError) as exc:
            self._discard(worker)
            self._spawn_later(snapshot)
            raise WorkerFailedError(f"The query worker stopped: {exc}") from exc
        self._idle.put(worker)
        return outcome

    def _wait(self, worker: _Worker, snapshot: Snapshot) -> tuple[str, QueryOutcome]:
        if not worker.conn.poll(self._timeout):
            self._discard(worker)
            self._spawn_later(snapshot)
            raise QueryTimeoutError(f"The query ran longer than {self._timeout:g} s")
        message: tuple[str, QueryOutcome] = worker.conn.recv()
        return message

    def close(self) -> None:
        """Stop every worker (idempotent)."""
        with self._lock:
            self._closed = True
            workers = list(self._all)
            self._all.clear()
        for worker in workers:
            with contextlib.suppress(OSError):
                worker.conn.send(("stop",))
            worker.process.join(1)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(5)
            worker.conn.close()

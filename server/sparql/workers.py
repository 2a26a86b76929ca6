"""A pool of killable worker processes that evaluate public SPARQL queries over views.

pyoxigraph cannot cancel a running query from Python. So queries run in worker processes: the
parent hands one job at a time to an idle worker and waits at most ``timeout`` seconds for the
answer; a worker that overruns is killed and replaced in the background while the other workers
keep serving. A job names the view it runs over (``server.replica.views``: a read-only checkpoint
holding exactly the graphs its reader may see); a worker opens views read-only and keeps the
last few open, so the operating system's page cache is shared instead of each worker holding a
copy. Workers are forked by a *fork server*: a fresh interpreter started once (so nothing of the
serving process, no lock and no store handle, is inherited) that has imported this module and
the program's main module, and forks a worker in a few milliseconds, so a worker killed at the
time limit is replaced at once. Workers never touch Flask or the main store.

The hand-off carries bytes: a job goes to the worker as a plain tuple; the worker answers with
one frame holding the outcome record and the first ``CHUNK_BYTES`` of the body the engine wrote,
then the rest of the body in frames of that size, which the pool reads as they come (the worker
is free again once the last one is read, whatever the client's speed). The record is JSON: the
serving process never unpickles anything a worker sends.

Before anything else a worker cuts itself off the network and caps its address space
(``server.sparql.isolation``). A query that exhausts that memory ends its worker (an
allocation in Oxigraph aborts the process; a ``MemoryError`` in Python is reported, then the
worker exits): the pool answers ``QueryMemoryError`` and starts a replacement.

**A worker ends with its server, however the server ends, and bounds its own time.** The time
limit is enforced by the serving process; were that process killed (``kill -9``), a worker in
the middle of a heavy query would go on for as long as the query runs (the fork server lives
while any worker does). So each worker watches its end of the pipe from a thread of its own
(``_lifeline``: Oxigraph releases the interpreter lock while it evaluates) and leaves the
moment the serving process's end is closed; and before each job it sets its own CPU limit
(``RLIMIT_CPU``) to the CPU time it used so far plus the job's time limit and a grace
(``CPU_GRACE_SECONDS``), so that the kernel ends a job that outlives every limit even if
nobody is left to watch it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import multiprocessing
import os
import pickle
import resource
import select
import signal
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from server.linked_data.part_jobs import DocumentJob, Memo, write_document
from server.sparql import isolation
from server.sparql.fairness import FairQueue, OverBudget, Refused, Ticket
from server.sparql.jobs import QueryJob, QueryOutcome, evaluate_job
from store.errors import StoreError
from store.triplestore import TripleStore

log = logging.getLogger(__name__)

# Opening a view is not part of a query's time budget, but it must end some time.
LOAD_TIMEOUT_SECONDS = 120.0
# How much longer than the time limit a query may wait for a worker.
WAIT_GRACE_SECONDS = 1.0
# Views a worker keeps open (the current one, and the previous ones while queries drain).
OPEN_VIEWS = 3
# Queries of the SPARQL front that may wait per worker (they hold no thread, only a connection).
WAITING_ON_LOOP_PER_WORKER = 16
# Bytes of a body per frame from a worker, and how long the next frame of a body may take.
CHUNK_BYTES = 1 << 20
CHUNK_TIMEOUT_SECONDS = 30.0
# CPU seconds a job may use beyond the time limit before the kernel ends its worker
# (RLIMIT_CPU counts whole seconds; the serving process normally stops a job first).
CPU_GRACE_SECONDS = 2
# Frame kinds from a worker: opening a view, view opened, outcome (+ first chunk), more body.
_LOADING, _LOADED, _RESULT, _MORE = b"L", b"D", b"R", b"C"
_HEAD = struct.Struct("!cII")  # kind, length of the record (JSON), length of the whole body


class PoolError(Exception):
    """Root of the pool's errors (all answered with 503 and ``Retry-After``)."""


class QueryTimeoutError(PoolError):
    """The query overran the time limit; its worker was killed."""


class PoolBusyError(PoolError):
    """No worker for this query now: all busy for the time limit, or too many waiting."""

    def __init__(self, message: str, retry_after: int = 2) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class OverBudgetError(PoolError):
    """The client used its share of worker time (answered 429, not 503)."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class WorkerFailedError(PoolError):
    """The worker died while evaluating the query."""


class QueryMemoryError(PoolError):
    """The query needed more memory than a worker may use; its worker was replaced."""


# How a worker that ran out of its address space ends: Rust aborts on a failed allocation,
# C code may crash on one, and the kernel's OOM killer sends SIGKILL.
_OUT_OF_MEMORY_EXITS = {-signal.SIGABRT, -signal.SIGSEGV, -signal.SIGBUS, -signal.SIGKILL}


class _Views:
    """Worker-side state: the views opened read-only, the most recently used last."""

    def __init__(self) -> None:
        self._open: OrderedDict[str, TripleStore] = OrderedDict()

    def has(self, path: str) -> bool:
        return path in self._open

    def get(self, path: str) -> TripleStore:
        store = self._open.get(path)
        if store is None:
            store = TripleStore.open_read_only(Path(path))
            self._open[path] = store
            while len(self._open) > OPEN_VIEWS:
                _, old = self._open.popitem(last=False)
                old.close()
        self._open.move_to_end(path)
        return store


def _lifeline(conn: Connection) -> None:
    """End this worker once the serving process's end of ``conn`` is closed (a thread)."""
    watch = select.poll()
    # POLLRDHUP: the peer closed its end; unlike POLLIN it never fires for a job waiting.
    watch.register(conn.fileno(), select.POLLRDHUP)
    while True:
        for _fd, events in watch.poll():
            if events & (select.POLLRDHUP | select.POLLHUP | select.POLLERR | select.POLLNVAL):
                os._exit(0)


def limit_cpu(seconds: float) -> None:
    """Let this process use at most ``seconds`` more CPU time (0: no limit), then SIGXCPU ends
    it (its default action)."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if seconds <= 0:
        soft = hard
    else:
        used = resource.getrusage(resource.RUSAGE_SELF)
        soft = int(used.ru_utime + used.ru_stime) + math.ceil(seconds) + 1
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def worker_main(conn: Connection, memory_bytes: int = 0, cpu_seconds: float = 0.0) -> None:
    """Serve jobs from ``conn`` until told to stop (runs in the worker process).

    ``memory_bytes`` caps the worker's address space (0: no cap); ``cpu_seconds`` the CPU
    time of one job (0: no cap). The worker leaves as soon as the other end of ``conn`` is
    closed, even in the middle of a job. The ready message names the network isolation in
    force (empty: none could be applied) and the allocator, a tab apart.
    """
    cut_off = isolation.cut_off_network()
    isolation.limit_memory(memory_bytes)
    # After the isolation: threads inherit its namespaces and filters.
    threading.Thread(target=_lifeline, args=(conn,), name="lifeline", daemon=True).start()
    views = _Views()
    memo = Memo(OPEN_VIEWS)
    conn.send_bytes(f"{cut_off}\t{isolation.allocator_in_use()}".encode())
    while True:
        try:
            # Only the serving process writes to this pipe (the worker trusts its parent).
            message = pickle.loads(conn.recv_bytes())  # noqa: S301
        except EOFError:
            return
        if message[0] == "stop":
            return
        job = DocumentJob(*message[1]) if message[0] == "document" else QueryJob(*message[1])
        try:
            _serve(conn, views, job, memo, cpu_seconds)
        except MemoryError:
            # The heap may be in any state now: report, then leave room for a fresh worker.
            send_outcome(conn, QueryOutcome("", failure="memory", message="out of memory"))
            return


def send_outcome(conn: Connection, outcome: QueryOutcome) -> None:
    """Send ``outcome`` as frames: the record with the first chunk of the body, then the rest."""
    body = outcome.data
    # JSON, not pickle: the serving process never unpickles what a worker (which evaluates
    # anybody's query) sends.
    record = json.dumps(outcome[:-1], separators=(",", ":")).encode()
    first = body[:CHUNK_BYTES]
    conn.send_bytes(_HEAD.pack(_RESULT, len(record), len(body)) + record + first)
    for offset in range(CHUNK_BYTES, len(body), CHUNK_BYTES):
        conn.send_bytes(_MORE + body[offset : offset + CHUNK_BYTES])


def _serve(
    conn: Connection, views: _Views, job: QueryJob | DocumentJob, memo: Memo, cpu_seconds: float
) -> None:
    if not views.has(job.view):
        # Opening is announced so that it does not count against the query's time limit.
        conn.send_bytes(_LOADING)
        try:
            views.get(job.view)
        except StoreError as exc:
            send_outcome(conn, QueryOutcome("", failure="evaluation", message=str(exc)))
            return
        conn.send_bytes(_LOADED)
    store = views.get(job.view)
    limit_cpu(cpu_seconds + CPU_GRACE_SECONDS if cpu_seconds else 0)
    try:
        if isinstance(job, DocumentJob):
            outcome = write_document(store, job, memo)
        else:
            outcome = evaluate_job(store, job)
    finally:
        limit_cpu(0)
    send_outcome(conn, outcome)


class OutcomeReader:
    """A worker's answer read frame by frame: the pool's blocking exchange and the SPARQL
    front's event loop (which reads one frame per readiness event) share it.

    ``phase`` says what the reader waits for, and so which limit applies to the wait: the
    query's time limit (``query``), opening a view (``loading``), or the next frame of a body
    already begun (``body``).
    """

    def __init__(self) -> None:
        self.phase = "query"
        self._record: list[object] | None = None
        self._chunks: list[bytes] = []
        self._received = 0
        self._total = 0

    def feed(self, frame: bytes) -> QueryOutcome | None:
        """Take one frame; return the outcome once its body is complete.

        Raises:
            EOFError: a frame that does not fit (a worker that broke the protocol).
        """
        if self._record is None:
            if frame in (_LOADING, _LOADED):
                self.phase = "loading" if frame == _LOADING else "query"
                return None
            if len(frame) < _HEAD.size:
                raise EOFError("a short frame from a query worker")
            kind, record_size, total = _HEAD.unpack_from(frame)
            if kind != _RESULT:
                raise EOFError(f"unexpected frame {kind!r} from a query worker")
            start = _HEAD.size + record_size
            self._record = json.loads(frame[_HEAD.size : start])
            self._total = total
            body = frame[start:]
        elif frame[:1] == _MORE:
            body = frame[1:]
        else:
            raise EOFError(f"unexpected frame {frame[:1]!r} in a body from a query worker")
        self._chunks.append(body)
        self._received += len(body)
        if self._received < self._total:
            self.phase = "body"
            return None
        return QueryOutcome(*self._record).with_body(tuple(self._chunks))


@dataclass(slots=True, eq=False)
class _Worker:
    process: BaseProcess
    conn: Connection
    # One poll object per worker (Connection.poll builds a selector on every call).
    poller: select.poll = field(default_factory=select.poll)
    # Whether the job it runs is a page or document (done in milliseconds), not a query.
    document: bool = False

    def __post_init__(self) -> None:
        self.poller.register(self.conn.fileno(), select.POLLIN)

    def readable(self, timeout: float) -> bool:
        """Wait at most ``timeout`` seconds for something to read from the worker."""
        return bool(self.poller.poll(max(0, int(timeout * 1000))))


@contextlib.contextmanager
def _pool_errors() -> Iterator[None]:
    """Raise the fair queue's refusals as the pool's errors (with their ``Retry-After``)."""
    try:
        yield
    except OverBudget as exc:
        raise OverBudgetError(str(exc), exc.retry_after) from exc
    except Refused as exc:
        raise PoolBusyError(str(exc), exc.retry_after) from exc


class QueryPool:
    """Runs jobs on ``size`` worker processes with a hard time limit per job.

    ``memory_mb`` caps each worker's address space (0: no cap). Free workers go to clients by
    ``server.sparql.fairness``: ``budget`` worker-seconds per client (0: none), at most
    ``waiting`` queries waiting (default: four per worker), light clients first. ``allocator``
    names the allocator the workers run with (``isolation.ALLOCATORS``; jemalloc makes
    Oxigraph's evaluation about a fifth faster than glibc's allocator).
    """

    def __init__(
        self,
        size: int,
        timeout: float,
        memory_mb: int = 0,
        *,
        budget: float = 0.0,
        waiting: int | None = None,
        allocator: str = "jemalloc",
    ) -> None:
        self._size = size
        self._timeout = timeout
        self._memory_mb = memory_mb
        # How the workers are cut off the network (None until the first one is ready).
        self.isolation: str | None = None
        # The allocator the workers run with (None until the first one is ready).
        self.allocator: str | None = None
        self._allocator_wanted = allocator
        self._preload = isolation.allocator_library(allocator)
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(["__main__", __name__])
        # Heavy: a client that used half a time limit recently (one query stopped at the
        # limit is enough). Waiting queries wait a little longer than the limit, since every
        # running query ends by then.
        self.fair: FairQueue[_Worker] = FairQueue(
            budget,
            timeout / 2,
            size * 4 if waiting is None else waiting,
            slots=size,
            waiting_on_loop=size * WAITING_ON_LOOP_PER_WORKER,
        )
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()
        self._started = False
        self._closed = False
        # Set once the first worker is ready: until then requests wait for start-up, not 503.
        self._ready = threading.Event()

    @property
    def preload(self) -> str:
        """Return the allocator library the workers are started with (``""``: none)."""
        return self._preload or ""

    @property
    def started(self) -> bool:
        """Return whether workers have been started."""
        return self._started

    def start(self) -> None:
        """Start the workers now instead of on the first query."""
        self._ensure_started()

    def wait_ready(self, timeout: float) -> bool:
        """Wait until every worker is idle; return whether that happened within ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.fair.idle >= self._size:
                return True
            time.sleep(0.05)
        return False

    @property
    def ready(self) -> bool:
        """Return whether a worker has been ready (requests need not wait for start-up)."""
        return self._ready.is_set()

    @property
    def timeout(self) -> float:
        """Return the per-query time limit in seconds."""
        return self._timeout

    def _spawn(self) -> None:
        parent, child = self._context.Pipe()
        process = self._context.Process(
            target=worker_main,
            args=(child, self._memory_mb * 1024 * 1024, self._timeout),
            name="qabench-query-worker",
            daemon=True,
        )
        with isolation.single_threaded_imports(self._preload or ""):
            process.start()
        child.close()
        worker = _Worker(process, parent)
        with self._lock:
            if self._closed:
                process.kill()
                return
            self._all.add(worker)
        try:
            if not parent.poll(LOAD_TIMEOUT_SECONDS):
                raise EOFError("worker did not become ready")
            cut_off, _, allocator = parent.recv_bytes().decode().partition("\t")
        except (EOFError, OSError) as exc:
            log.error("query worker failed to start: %s", exc)
            self._discard(worker)
            return
        self._note_isolation(cut_off)
        self._note_allocator(allocator)
        self.fair.add(worker)
        self._ready.set()

    def _note_allocator(self, allocator: str) -> None:
        with self._lock:
            if self.allocator is not None:
                return
            self.allocator = allocator
        if allocator == self._allocator_wanted:
            log.info("SPARQL query workers allocate memory with %s", allocator)
        elif self._preload is None:
            log.warning(
                "SPARQL query workers use the system allocator: %s is not installed (Debian's "
                "package libjemalloc2), without which Oxigraph evaluates about a fifth slower",
                self._allocator_wanted,
            )
        else:
            log.warning(
                "SPARQL query workers use the %s allocator, not %s: this process started its fork "
                "server before the query pool, or LD_PRELOAD already names an allocator",
                allocator,
                self._allocator_wanted,
            )

    def _note_isolation(self, cut_off: str) -> None:
        # the pool is as isolated as its least isolated worker
        with self._lock:
            if self.isolation is not None and (cut_off or not self.isolation):
                return
            self.isolation = cut_off
        if cut_off:
            log.info("SPARQL query workers have no network (%s)", cut_off)
        else:
            log.warning(
                "SPARQL query workers could not be cut off the network (no network namespace, "
                "no seccomp on this platform, or a worker started with more than one thread): "
                "SERVICE is refused by the query checks only"
            )

    def _spawn_later(self) -> None:
        threading.Thread(target=self._spawn, daemon=True).start()

    def _discard(self, worker: _Worker) -> None:
        with self._lock:
            self._all.discard(worker)
        if worker.process.is_alive():
            worker.process.kill()
        worker.process.join(5)
        worker.conn.close()

    def _ensure_started(self) -> None:
        with self._lock:
            if self._started or self._closed:
                return
            self._started = True
        for _ in range(self._size):
            self._spawn_later()

    def run(
        self, job: QueryJob | DocumentJob, client: str = "", wait: float | None = None
    ) -> QueryOutcome:
        """Evaluate ``job`` for ``client`` on a worker (over the view the job names), waiting
        at most ``wait`` seconds for a free worker (default: a little over the time limit).

        Raises:
            OverBudgetError: the client used its share of worker time.
            PoolBusyError: no worker became free within the time limit, or too many wait.
            QueryTimeoutError: the query overran the limit (its worker was killed).
            WorkerFailedError: the worker died while evaluating.
            QueryMemoryError: the query needed more memory than a worker may use.
        """
        self._ensure_started()
        if not self._ready.wait(LOAD_TIMEOUT_SECONDS):
            raise PoolBusyError("No query worker could be started")
        # The server's own page jobs serve many readers: ordered by usage, never refused.
        budgeted = not isinstance(job, DocumentJob)
        timeout = self._timeout + WAIT_GRACE_SECONDS if wait is None else wait
        with _pool_errors():
            worker, started = self.fair.take(client, timeout, budgeted=budgeted)
        reader = self.begin(worker, job, client, started)
        while True:
            if not worker.readable(self.wait_limit(reader)):
                raise self.overran(worker, client, started, reader)
            try:
                frame = worker.conn.recv_bytes()
                outcome = reader.feed(frame)
            except (EOFError, OSError) as exc:
                raise self.failed(worker, client, started, exc) from exc
            if outcome is not None:
                return self.finish(worker, client, started, outcome)

    # The steps of ``run``, also taken one at a time by the SPARQL front's event loop.
    def request(
        self,
        client: str,
        *,
        budgeted: bool = True,
        notify: Callable[[Ticket[_Worker]], None] | None = None,
    ) -> Ticket[_Worker]:
        """Ask for a worker for ``client`` without waiting (``FairQueue.request``).

        Raises:
            OverBudgetError: the client used its share of worker time.
            PoolBusyError: too many queries wait already.
        """
        with _pool_errors():
            return self.fair.request(client, budgeted=budgeted, notify=notify)

    def claim(self, ticket: Ticket[_Worker]) -> tuple[_Worker, float]:
        """Return the worker of a granted ticket and when it was taken.

        Raises:
            PoolBusyError: the ticket was not granted in time, or lost its place.
        """
        with _pool_errors():
            return self.fair.claim(ticket)

    def begin(
        self, worker: _Worker, job: QueryJob | DocumentJob, client: str, started: float
    ) -> OutcomeReader:
        """Send ``job`` to ``worker`` (taken for ``client`` at ``started``); return the reader
        of its answer.

        Raises:
            WorkerFailedError, QueryMemoryError: the worker could not take the job.
        """
        kind = "document" if isinstance(job, DocumentJob) else "query"
        worker.document = kind == "document"
        try:
            worker.conn.send_bytes(pickle.dumps((kind, tuple(job)), pickle.HIGHEST_PROTOCOL))
        except OSError as exc:
            raise self.failed(worker, client, started, exc) from exc
        return OutcomeReader()

    @property
    def documents_running(self) -> bool:
        """Return whether a worker is writing a page or document (a job of milliseconds; a
        query may hold its worker up to the time limit)."""
        return any(worker.document for worker in list(self._all))

    def wait_limit(self, reader: OutcomeReader) -> float:
        """Return how long the next frame of ``reader`` may take."""
        if reader.phase == "loading":
            return LOAD_TIMEOUT_SECONDS
        if reader.phase == "body":
            return CHUNK_TIMEOUT_SECONDS
        return self._timeout

    def finish(
        self, worker: _Worker, client: str, started: float, outcome: QueryOutcome
    ) -> QueryOutcome:
        """Give ``worker`` back after its answer ``outcome`` (replaced if out of memory).

        Raises:
            QueryMemoryError: the worker ran out of memory (it was replaced).
        """
        if outcome.failure == "memory":
            self._lose(worker, client, started)
            raise self._memory_error()
        worker.document = False
        self.fair.done(client, started)
        self.fair.put(worker)
        return outcome

    def overran(
        self, worker: _Worker, client: str, started: float, reader: OutcomeReader
    ) -> PoolError:
        """Kill and replace ``worker``, whose next frame did not come in time; return the error."""
        self._lose(worker, client, started)
        if reader.phase == "query":
            return QueryTimeoutError(f"The query ran longer than {self._timeout:g} s")
        what = "opening the view" if reader.phase == "loading" else "sending its result"
        return WorkerFailedError(f"The query worker stopped {what}")

    def failed(self, worker: _Worker, client: str, started: float, exc: Exception) -> PoolError:
        """Replace ``worker``, which broke off (``exc``); return the error to report."""
        self._lose(worker, client, started)
        if self._memory_mb and worker.process.exitcode in _OUT_OF_MEMORY_EXITS:
            return self._memory_error()
        return WorkerFailedError(f"The query worker stopped: {exc}")

    def _lose(self, worker: _Worker, client: str, started: float) -> None:
        """Replace a worker that was killed or failed while it served ``client``."""
        self.fair.done(client, started)
        self.fair.remove()
        self._replace(worker)

    def _replace(self, worker: _Worker) -> None:
        self._discard(worker)
        self._spawn_later()

    def _memory_error(self) -> QueryMemoryError:
        return QueryMemoryError(
            f"The query needed more than the {self._memory_mb} MiB a query worker may use"
        )

    def close(self) -> None:
        """Stop every worker (idempotent)."""
        with self._lock:
            self._closed = True
            workers = list(self._all)
            self._all.clear()
        for worker in workers:
            with contextlib.suppress(OSError):
                worker.conn.send_bytes(pickle.dumps(("stop",)))
            worker.process.join(1)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(5)
            worker.conn.close()

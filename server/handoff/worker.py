"""A connection worker: answers the SPARQL queries of the connections handed to it, in-process.

A query through today's query workers crosses three processes (the serving process reads it,
a worker evaluates it, the serving process writes the answer); on the two cores of this machine
kind the crossings cost several times the engine's own work (docs/server.md, "Measured
again"). A connection worker is forked like a query worker (jemalloc, no network, capped
address space: ``server.sparql.isolation``) and is handed whole connections by the SPARQL front:
the first query already planned by the front, then every request that follows, which it reads
itself (each byte once). Whatever it does not answer goes back to the serving process with the
bytes of it the worker read, which waitress reads first, as if they had just arrived: requests
that are not simple HTTP (``server.handoff.wire``), that are not anonymous SPARQL queries of the
public view, that the endpoint's checks refuse, whose evaluation failed, that arrive after a
write it has not seen (a shared generation counter), or of a client the serving process's
admission sends back (heavy, over its rate, its budget or its slots).

A second thread watches the query being evaluated (Oxigraph releases the interpreter lock):
past ``SLOW_SECONDS`` it gives the serving process a duplicate of that connection's socket
with the bytes read from it (so a worker that dies out of memory is still answered 503) and
gives back every other connection (none waits behind a slow query); at the time limit it gives
the query's own connection back, its request unanswered, with the verdict ``timeout``, and the
worker ends. Messages to the
serving process are JSON (it never unpickles what a worker sends), sockets travel with
``SCM_RIGHTS``.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import pickle
import select
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from multiprocessing import reduction
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from werkzeug.datastructures import MultiDict

from server.config import ServerConfig
from server.handoff import wire
from server.services import Visibility, entity_tag
from server.sparql import isolation
from server.sparql.endpoint import prepare
from server.sparql.jobs import QueryJob, QueryOutcome, evaluate_job
from server.sparql.protocol import (
    FORM,
    QUERY_BODY,
    ProtocolQuery,
    ProtocolRequest,
    media_type,
    parse_fields,
)
from server.sparql.protocol import read_query as read_protocol_query
from server.web import caching
from server.web.limits import client_key
from server.web.problems import Problem
from store.errors import QuerySyntaxError, StoreError
from store.triplestore import TripleStore

# A query that used this much CPU (or ran for SLOW_WALL_SECONDS, say waiting for the disk)
# gives the worker's other connections back. CPU time, not the clock: on a loaded machine a
# worker waits for a core for tens of milliseconds now and then, and its query is not slow.
SLOW_SECONDS = 0.03
SLOW_WALL_SECONDS = 0.25
# Bytes read at once, and how many of a request that has not all arrived a worker waits with
# (a larger request goes back to waitress, which reads it in parts).
READ_BYTES = 64 * 1024
WAIT_BYTES = 16 * 1024
# Decay of a client's worker time here (as the fair queue's, ``server.sparql.fairness``).
HALF_LIFE_SECONDS = 60.0
GENERATION = struct.Struct("<q")
# Other clients seen this recently keep a heavy client's queries off this worker.
QUIET_SECONDS = 10.0
# The watch looks at the running query this often, and waits to be woken once no query has
# started for PARK_SECONDS.
WATCH_SECONDS = 0.005
PARK_SECONDS = 0.05
# Idle and slow connections are looked for at most this often (not after every readiness
# event: with many connections that walk cost more than a trivial query's own reading).
EXPIRE_SECONDS = 0.1
# Answers are sent together at the end of a round of ready connections (one wake-up of the
# client for several answers, not one per answer); an answer waits at most about this long
# for the others (before the next query starts, or the watch sends it during a long query).
BATCH_SECONDS = 0.002
_WRITABLE = select.EPOLLOUT | select.EPOLLERR | select.EPOLLHUP
# What ``_Worker._one`` did with the first request of a connection's bytes.
_ANSWERED, _INCOMPLETE, _STOP = object(), object(), object()


@dataclass
class State:
    """What the serving process decided for anonymous readers at one store generation."""

    base: str
    settings: ServerConfig
    vis: Visibility
    instance: str
    generation: int
    public_generation: int
    # when public content last changed (Last-Modified of anonymous results)
    modified: float
    view: str
    rate_limited: bool
    # None: every client is admitted by the serving process per query; else the worker time
    # from which a client is heavy (its queries then go to the serving process's fair queue).
    heavy: float | None
    proxy: tuple[str, int, frozenset[str]] | None

    def etag(self, *parts: str, public: bool = False) -> str:
        """The entity tag ``Services.etag`` gives at this generation."""
        generation = f"p{self.public_generation}" if public else str(self.generation)
        return entity_tag(self.instance, generation, parts)

    @property
    def config(self) -> Any:
        return self

    @property
    def server(self) -> ServerConfig:
        return self.settings


@dataclass(eq=False)
class _Owned:
    sock: socket.socket
    peer: str
    out: bytes = b""
    # bytes read from the socket and not answered yet (they go back with the connection)
    unread: bytes = b""
    # the socket took only part of ``out``: nothing more is read until it is sent
    blocked: bool = False
    close_after: bool = False
    last: float = field(default_factory=time.monotonic)
    head_started: float | None = None
    client: str | None = None  # the peer's client key (when no proxy forwards for it)


class _Worker:
    def __init__(self, conn: Connection, counter: mmap.mmap) -> None:
        self.conn = conn
        self.counter = counter
        # readiness of the control pipe and the connections (epoll itself: the selectors
        # module's bookkeeping cost a few microseconds a round)
        self.events = select.epoll()
        self.control = conn.fileno()
        self.events.register(self.control, select.EPOLLIN)
        self.by_fd: dict[int, _Owned] = {}
        self.owned: dict[int, _Owned] = {}
        self.stores: dict[str, TripleStore] = {}
        self.state: State | None = None
        self.sending = threading.Lock()
        self.usage: dict[str, tuple[float, float]] = {}
        self.seen: dict[str, float] = {}
        self.admitted: dict[int, bool | None] = {}
        self.running: _Owned | None = None
        self.started = 0.0
        self.held = False
        self.watch_lock = threading.Lock()
        self.wake = threading.Event()
        self.parked = False
        self.next_id = 0
        self.expired = 0.0  # when expire last looked
        # bytes read land here (no buffer of READ_BYTES allocated per request)
        self.scratch = memoryview(bytearray(READ_BYTES))
        # answers of this round not sent yet (None: send each at once), and since when
        self.batch: list[_Owned] | None = None
        self.batch_since = 0.0

    # ------------------------------------------------------------------ to the serving process
    def _send(
        self, record: dict[str, Any], sock: socket.socket | None = None, data: bytes = b""
    ) -> None:
        with self.sending:
            self.conn.send_bytes(json.dumps(record).encode() + b"\n" + data)
            if sock is not None:
                reduction.send_handle(self.conn, sock.fileno(), os.getppid())

    def give_back(self, owned: _Owned, verdict: str = "") -> None:
        """Give ``owned`` back to the serving process: the answers not sent yet, the bytes read
        and not answered (its next request, whole or in part), and the socket."""
        with self.sending:
            if owned.sock.fileno() < 0 or self.owned.get(id(owned)) is not owned:
                return
            self.owned.pop(id(owned), None)
        self._unregister(owned)
        record = {"kind": "back", "verdict": verdict, "peer": owned.peer, "out": len(owned.out)}
        self._send(record, owned.sock, owned.out + owned.unread)
        owned.sock.close()

    def _unregister(self, owned: _Owned) -> None:
        fd = owned.sock.fileno()
        if self.by_fd.get(fd) is owned:
            del self.by_fd[fd]
            with contextlib.suppress(OSError):
                self.events.unregister(fd)

    def close(self, owned: _Owned) -> None:
        with self.sending:
            if self.owned.pop(id(owned), None) is None:
                return
        self._unregister(owned)
        owned.sock.close()
        self._send({"kind": "closed", "peer": owned.peer})

    # ------------------------------------------------------------------ the watch
    def watch(self, limit: float, evaluator: int) -> None:
        """Runs in the second thread (see the module docstring); ``evaluator`` is the id of
        the thread that evaluates.

        It looks at the running query every ``WATCH_SECONDS`` and parks (waits to be woken)
        only once no query has started for ``PARK_SECONDS``: a query does not wake it, which
        would cost a hand-off of the interpreter lock between threads per query (system calls
        that cost more than a trivial query's evaluation on this machine kind).
        """
        clock = time.pthread_getcpuclockid(evaluator)
        last: tuple[_Owned | None, float] = (None, 0.0)
        cpu = 0.0
        gave = False
        quiet_since = time.monotonic()
        while True:
            with self.watch_lock:
                owned, started = self.running, self.started
            now = time.monotonic()
            if owned is None:
                quiet_since = max(quiet_since, started)
                if now - quiet_since > PARK_SECONDS:
                    self.parked = True
                    if self.running is None:  # else a query started meanwhile: look at it
                        self.wake.wait(5.0)
                    self.wake.clear()
                    self.parked = False
                    quiet_since = time.monotonic()
                    continue
                time.sleep(WATCH_SECONDS)
                continue
            quiet_since = now
            if (owned, started) != last:
                last, cpu, gave = (owned, started), time.clock_gettime(clock), False
            with self.watch_lock:
                if self.running is not owned or self.started != started:
                    continue
                elapsed = now - started
                if self.batch and elapsed >= BATCH_SECONDS:
                    self.send_batch()  # the evaluating thread waits for the lock meanwhile
                slow = time.clock_gettime(clock) - cpu >= SLOW_SECONDS
                if not gave and (slow or elapsed >= SLOW_WALL_SECONDS):
                    gave = True
                    self.held = True
                    # the request stays in ``unread`` until it is answered
                    self._send({"kind": "hold", "peer": owned.peer}, owned.sock, owned.unread)
                    for other in list(self.owned.values()):
                        if other is not owned:
                            self.give_back(other)
                if elapsed >= limit:
                    self.give_back(owned, "timeout")
                    os._exit(0)
            time.sleep(WATCH_SECONDS)

    def evaluate(self, owned: _Owned, job: QueryJob, client: str, admitted: bool) -> QueryOutcome:
        if self.batch and time.monotonic() - self.batch_since >= BATCH_SECONDS:
            self.send_batch()
        with self.watch_lock:
            self.running, self.started, self.held = owned, time.monotonic(), False
        if self.parked:
            self.wake.set()
        try:
            return evaluate_job(self._store(job.view), job)
        finally:
            with self.watch_lock:
                self.running = None
                seconds = time.monotonic() - self.started
                held = self.held
            self._charge(client, seconds, held, admitted)

    def _charge(self, client: str, seconds: float, held: bool, admitted: bool) -> None:
        now = time.monotonic()
        value, at = self.usage.pop(client, (0.0, now))
        self.usage[client] = (value * 0.5 ** ((now - at) / HALF_LIFE_SECONDS) + seconds, now)
        while len(self.usage) > 10_000:
            self.usage.pop(next(iter(self.usage)))
        while len(self.seen) > 10_000:
            self.seen.pop(next(iter(self.seen)))
        if admitted or held or seconds >= 0.01:
            record = {"kind": "done", "client": client, "seconds": seconds}
            self._send(record | {"admitted": admitted, "held": held})

    def _heavy(self, client: str) -> bool:
        """Return whether ``client`` used half a time limit of this worker lately while
        other clients are about (as the fair queue keeps the last worker from such a client:
        its queries then go to the serving process's fair queue)."""
        assert self.state is not None
        if self.state.heavy is None:
            return False
        now = time.monotonic()
        value, at = self.usage.get(client, (0.0, now))
        if value * 0.5 ** ((now - at) / HALF_LIFE_SECONDS) < self.state.heavy:
            return False
        return any(c != client and now - t < QUIET_SECONDS for c, t in self.seen.items())

    def _store(self, view: str) -> TripleStore:
        found = self.stores.get(view)
        if found is None:
            found = self.stores[view] = TripleStore.open_read_only(Path(view))
            while len(self.stores) > 3:
                old = next(iter(self.stores))
                self.stores.pop(old).close()
        return found

    # ------------------------------------------------------------------ connections
    def take(self, message: tuple[Any, ...]) -> None:
        """Take a connection handed over after the front answered a request on it."""
        _kind, peer, state = message
        self.state = state
        sock = socket.socket(fileno=reduction.recv_handle(self.conn))
        sock.setblocking(False)
        owned = _Owned(sock, peer)
        with self.sending:
            self.owned[id(owned)] = owned
        self.by_fd[sock.fileno()] = owned
        self.events.register(sock.fileno(), select.EPOLLIN)
        self.serve(owned)

    def _answer(self, outcome: QueryOutcome, etag: str, gzip: bool) -> bytes:
        state = self.state
        assert state is not None
        return wire.answer(outcome, etag, state.modified, state.settings, state.rate_limited, gzip)

    def _write(self, owned: _Owned, data: bytes) -> None:
        owned.last = time.monotonic()
        if owned.out:
            owned.out += data
            return
        if self.batch is not None:
            if not self.batch:
                self.batch_since = owned.last
            owned.out = data
            self.batch.append(owned)
            return
        self._transmit(owned, data)

    def _transmit(self, owned: _Owned, data: bytes) -> None:
        try:
            sent = owned.sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:
            self.close(owned)
            return
        if sent < len(data):
            owned.out, owned.blocked = data[sent:], True
            self.events.modify(owned.sock.fileno(), select.EPOLLIN | select.EPOLLOUT)

    def send_batch(self) -> None:
        """Send the answers of this round (to connections still owned)."""
        batch, self.batch = self.batch, []
        for owned in batch or ():
            if self.owned.get(id(owned)) is owned and owned.out:
                data, owned.out = owned.out, b""
                self._transmit(owned, data)
                if not owned.out and owned.close_after:
                    self.close(owned)

    def flush(self, owned: _Owned) -> None:
        data, owned.out, owned.blocked = owned.out, b"", False
        self.events.modify(owned.sock.fileno(), select.EPOLLIN)
        self._write(owned, data)
        if not owned.out and owned.close_after:
            self.close(owned)

    def serve(self, owned: _Owned) -> None:
        """Answer the complete requests of ``owned``, reading its socket when they run out.

        After an answer it reads again only if bytes of another request are there already:
        otherwise the selector says when the next one comes (a read that finds nothing would
        be a system call per query).
        """
        while self.owned.get(id(owned)) is owned and not owned.blocked and not owned.close_after:
            if owned.unread:
                step = self._one(owned)
                if step is _ANSWERED and owned.unread:
                    continue
                if step is not _INCOMPLETE:
                    return
            try:
                count = owned.sock.recv_into(self.scratch, READ_BYTES)
            except BlockingIOError:
                return
            except OSError:
                self.close(owned)
                return
            if not count:
                self.close(owned)
                return
            owned.unread += self.scratch[:count].tobytes()

    def _one(self, owned: _Owned) -> object:
        """Answer the first request of ``owned.unread``: ``_ANSWERED``, ``_INCOMPLETE`` (wait
        for more bytes) or ``_STOP`` (given back, closed, or an answer waits to be sent)."""
        state = self.state
        assert state is not None
        settings = state.settings
        unread = owned.unread
        head = wire.head_of(
            unread, settings.max_request_header_bytes, settings.max_request_body_bytes
        )
        if head == wire.INCOMPLETE and len(unread) >= WAIT_BYTES:
            # a large request: waitress reads it in parts
            self.give_back(owned)
            return _STOP
        if head == wire.INCOMPLETE:
            if owned.head_started is None:
                owned.head_started = time.monotonic()
            return _INCOMPLETE
        if isinstance(head, str) or GENERATION.unpack_from(self.counter)[0] != state.generation:
            self.give_back(owned)
            return _STOP
        owned.head_started = None
        planned = self._plan(owned, head)
        if planned is None:
            self.give_back(owned)
            return _STOP
        job, etag, gzip, client = planned
        admitted = state.heavy is None
        if admitted and not self._admit(client):
            self.give_back(owned)
            return _STOP
        outcome = self.evaluate(owned, job, client, admitted)
        if outcome.failure is not None:
            self.give_back(owned)  # unanswered: the view evaluates it again and renders the error
            return _STOP
        owned.unread = unread[head.size :]  # answered: the request is gone from ``unread`` now
        closes = owned.close_after = head.closes
        self._write(owned, self._answer(outcome, etag, gzip))
        if closes and not owned.out and self.owned.get(id(owned)) is owned:
            self.close(owned)
            return _STOP
        return _ANSWERED

    def _plan(self, owned: _Owned, head: wire.Head) -> tuple[QueryJob, str, bool, str] | None:
        """Return the job of ``head`` as the SPARQL front would plan it, or None (give back)."""
        state = self.state
        assert state is not None
        path, _, query_string = head.target.partition("?")
        if path != "/sparql":
            return None
        client = self._client(owned, head)
        if client is None or (state.heavy is not None and self._heavy(client)):
            return None
        self.seen[client] = time.monotonic()
        try:
            req, found = _protocol(head, query_string)
            if found is None or found.text is None:
                return None
            prepared = prepare(state, req, found, state.vis)  # type: ignore[arg-type]
        except (Problem, QuerySyntaxError, ValueError, UnicodeError):
            return None
        if prepared.html or prepared.private:
            return None
        media = prepared.choice.rep.media_type
        graph = prepared.graph
        job = QueryJob(
            prepared.query,
            f"{state.base}/sparql",
            state.view,
            prepared.default,
            prepared.named,
            None if graph else media,
            media if graph else None,
            state.settings.max_result_rows,
            f"{state.base}/sparql#truncation",
            state.settings.max_result_bytes,
            prepared.facts.form,
        )
        gzip = caching_gzip(head.fields.get(b"accept-encoding"))
        return job, prepared.etag, gzip, client

    def _client(self, owned: _Owned, head: wire.Head) -> str | None:
        state = self.state
        assert state is not None
        peer = owned.peer
        proxy = state.proxy
        if proxy is None or proxy[0] not in ("*", peer):  # the peer's, read once
            if owned.client is None:
                owned.client = client_key(peer)
            return owned.client
        from waitress.proxy_headers import MalformedProxyHeader, parse_proxy_headers

        environ = {"REMOTE_ADDR": peer}
        for name, value in head.fields.items():
            key = "HTTP_" + name.decode("latin-1").upper().replace("-", "_")
            environ[key] = value.decode("latin-1")
        try:
            parse_proxy_headers(environ, proxy[1], set(proxy[2]))
        except MalformedProxyHeader:
            return None
        return client_key(environ["REMOTE_ADDR"])

    def _admit(self, client: str) -> bool:
        """Ask the serving process to admit a query of ``client`` (its rate, slots, budget)."""
        self.next_id += 1
        ask = self.next_id
        self._send({"kind": "admit", "id": ask, "client": client})
        while True:
            message = pickle.loads(self.conn.recv_bytes())  # noqa: S301 (the serving process)
            if message[0] == "admitted" and message[1] == ask:
                return bool(message[2])
            self._control(message)

    def _control(self, message: tuple[Any, ...]) -> None:
        if message[0] == "stop":
            os._exit(0)
        if message[0] == "conn":
            self.take(message)

    def expire(self) -> None:
        """Close connections idle or slow past the server's timeouts (looking at most every
        ``EXPIRE_SECONDS``)."""
        state = self.state
        now = time.monotonic()
        if state is None or now - self.expired < EXPIRE_SECONDS:
            return
        self.expired = now
        settings = state.settings
        for owned in list(self.owned.values()):
            if owned.head_started is not None:
                if now - owned.head_started > settings.header_timeout_seconds:
                    self.close(owned)
            elif not owned.out and now - owned.last > settings.idle_timeout_seconds:
                self.close(owned)

    def run(self) -> None:
        self.batch = []
        while True:
            for fd, mask in self.events.poll(1.0):
                if fd == self.control:
                    try:
                        message = pickle.loads(self.conn.recv_bytes())  # noqa: S301
                    except (EOFError, OSError):
                        os._exit(0)
                    self._control(message)
                    continue
                owned = self.by_fd.get(fd)
                if owned is None:  # given back or closed earlier in this round
                    continue
                if mask & _WRITABLE and owned.out:
                    self.flush(owned)
                    if owned.out:
                        continue
                owned.last = time.monotonic()
                self.serve(owned)
            if self.batch:
                self.send_batch()
            self.expire()


# ``Content-Type`` values of a query body that mean exactly what the protocol's defaults mean
# (``server.sparql.protocol``: the media type, and UTF-8).
_QUERY_BODY_TYPES = frozenset(
    {
        b"application/sparql-query",
        b"application/sparql-query; charset=utf-8",
        b"application/sparql-query;charset=utf-8",
    }
)
_NO_FIELDS: MultiDict[str, str] = MultiDict()


def _protocol(head: wire.Head, query_string: str) -> tuple[ProtocolRequest, ProtocolQuery | None]:
    """Return the protocol's view of ``head`` and its query (None: the request has a token).

    The form SPARQL clients send most (a POST of the query as the body, nothing in the URL,
    ``Content-Type`` the protocol's own) is read directly; every other request through the
    protocol's general reading (``server.sparql.protocol``), which gives the same result for
    that form (``tests/server/handoff/test_wire.py``).

    Raises:
        Problem, ValueError, UnicodeError: what the protocol refuses (given back).
    """
    accept_field = head.fields.get(b"accept")
    accept = accept_field.decode("latin-1") if accept_field is not None else None
    content_type = head.fields.get(b"content-type")
    if (
        head.method == "POST"
        and not query_string
        and content_type is not None
        and content_type.lower() in _QUERY_BODY_TYPES
    ):
        text = head.body.decode("utf-8")
        req = ProtocolRequest("POST", _NO_FIELDS, None, QUERY_BODY, {}, head.body, accept)
        return req, ProtocolQuery(text, [], [])
    mimetype, params = media_type(
        content_type.decode("latin-1") if content_type is not None else ""
    )
    args = parse_fields(query_string.encode("latin-1"))
    req = ProtocolRequest(
        head.method,
        args,
        parse_fields(head.body) if mimetype == FORM and head.method == "POST" else None,
        mimetype,
        params,
        head.body if mimetype == QUERY_BODY else b"",
        accept,
    )
    if "token" in args:
        return req, None
    return req, read_protocol_query(req)


_GZIP: dict[bytes | None, bool] = {}


def caching_gzip(header: bytes | None) -> bool:
    """Return whether an ``Accept-Encoding`` field accepts gzip (as the front decides; the
    answers for the last 64 values are kept: a client sends the same one each time)."""
    found = _GZIP.get(header)
    if found is None:
        found = caching.gzip_accepted(header.decode("latin-1") if header is not None else None)
        if len(_GZIP) >= 64:
            _GZIP.clear()
        _GZIP[header] = found
    return found


def worker_main(conn: Connection, memory_bytes: int, limit: float) -> None:
    """Serve handed connections from ``conn`` (runs in the connection worker process)."""
    cut_off = isolation.cut_off_network()
    isolation.limit_memory(memory_bytes)
    counter_fd = reduction.recv_handle(conn)
    counter = mmap.mmap(counter_fd, GENERATION.size, prot=mmap.PROT_READ)
    worker = _Worker(conn, counter)
    evaluator = threading.get_ident()
    threading.Thread(
        target=worker.watch, args=(limit, evaluator), name="watch", daemon=True
    ).start()
    conn.send_bytes(json.dumps({"kind": "ready", "isolation": cut_off}).encode() + b"\n")
    with contextlib.suppress(StoreError):
        worker.run()

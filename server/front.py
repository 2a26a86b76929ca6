"""The SPARQL front: anonymous queries answered on the server's event loop, without a thread.

A query through the Flask view costs a request thread, a hand-off to it, a wait for a worker
while holding it, and a hand-off back: on two cores that capped trivial queries at about 1,500
requests/s with the serving process at one core and the workers mostly idle. The front takes
the common request on the loop thread of ``server.httpd`` instead: it reads it with the
endpoint's own steps (``server.sparql.protocol.read_query``, ``endpoint.prepare``,
``endpoint.query_job``), counts it against the client's rate and slots, asks the pool's fair
queue for a worker (``QueryPool.request``; a request that must wait holds no thread, the queue
calls back when a worker is free), sends the job, watches the worker's pipe on the same loop,
reads the answer frame by frame (``OutcomeReader``), kills the worker at the time limit, and
writes the response.

What it takes: ``GET``/``POST`` of ``/sparql`` over HTTP/1.1 holding a query, with no
credentials (``Authorization``, cookies, ``?token=``), no conditional headers, asking for a
machine-readable form, while the SPARQL view of the current generation is ready. Everything
else goes to the threads as before. A request the front took and then cannot answer with a 200
(the query failed, the pool refused it, the worker timed out or died, a body too large to
compress on the loop) is handed to the Flask view with what the front found
(``endpoint.Handover``): the view renders every error and the rate is counted once. So there is
one path for every decision and every error, and the front is a faster way through it; a test
compares its responses with the view's, header by header.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from flask import Flask
from waitress import wasyncore
from waitress.proxy_headers import MalformedProxyHeader, parse_proxy_headers
from werkzeug.http import quote_etag

from server.handoff.owners import ConnectionWorkers
from server.replica.views import ViewNotReadyError
from server.services import Services
from server.sparql.endpoint import (
    HANDOVER,
    Handover,
    Prepared,
    prepare,
    query_job,
    result_headers,
)
from server.sparql.fairness import Ticket
from server.sparql.jobs import QueryJob, QueryOutcome
from server.sparql.protocol import FORM, QUERY_BODY, ProtocolRequest, media_type, parse_fields
from server.sparql.protocol import read_query as read_protocol_query
from server.sparql.workers import WAIT_GRACE_SECONDS, OutcomeReader, PoolError, QueryPool
from server.web import caching
from server.web.headers import GRANT, SECURITY_HEADERS, new_request_id
from server.web.limits import Limits, client_key, limits_of, rate_refusal, slot_refusal
from server.web.problems import Problem
from store.errors import QuerySyntaxError

log = logging.getLogger(__name__)

# Request headers that send a request to the view: credentials, conditions, ranges.
_NOT_HERE = (
    "AUTHORIZATION",
    "COOKIE",
    "IF_NONE_MATCH",
    "IF_MODIFIED_SINCE",
    "IF_MATCH",
    "IF_UNMODIFIED_SINCE",
    "IF_RANGE",
    "RANGE",
)
# Bodies gzipped on the loop at most (about a millisecond); larger ones on a thread.
LOOP_GZIP_BYTES = 64 * 1024
# Seconds the loop may sleep when the front has nothing due.
IDLE_SECONDS = 1.0


@dataclass(eq=False)
class _Query:
    """One query the front took: the request, what was decided, and where it stands."""

    channel: Any
    request: Any
    client: str
    prepared: Prepared
    job: QueryJob
    modified: float
    gzip: bool
    deadline: float
    ticket: Ticket[Any] | None = None
    worker: Any = None
    started: float = 0.0
    reader: OutcomeReader = field(default_factory=OutcomeReader)
    pipe: _Pipe | None = None


class _Pipe(wasyncore.dispatcher):  # type: ignore[misc]
    """The loop's watch on one worker's pipe while it runs a query of the front."""

    def __init__(self, front: SparqlFront, query: _Query, events: dict[int, Any]) -> None:
        wasyncore.dispatcher.__init__(self, map=events)
        self.front = front
        self.query = query
        self._fileno = query.worker.conn.fileno()
        self.add_channel(events)

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def handle_read(self) -> None:
        self.front.frame(self.query)

    def handle_close(self) -> None:
        self.front.frame(self.query)

    def handle_expt(self) -> None:
        self.front.frame(self.query)

    def handle_error(self) -> None:
        # A fault of the front itself (never a worker's doing): the loop must go on.
        log.exception("the SPARQL front failed while reading a worker's answer")
        self.front.abandon(self.query)

    def close(self) -> None:
        # The pool owns the pipe: the loop only stops watching it.
        if self._fileno is not None:
            self.del_channel()


class SparqlFront:
    """Answers anonymous SPARQL queries on the event loop of ``server.httpd``.

    Args:
        app: the Flask app (its services and limits).
        events: the loop's map of file descriptors.
        trusted_proxy: ``server.trusted_proxy`` with its header rules as waitress applies
            them (the client of a request from the proxy is the one it forwarded).
    """

    def __init__(
        self,
        app: Flask,
        events: dict[int, Any],
        trusted_proxy: tuple[str, int, set[str]] | None = None,
    ) -> None:
        svc = app.extensions["services"]
        assert isinstance(svc, Services)
        self._svc = svc
        self._pool: QueryPool = svc.pool
        self._limits: Limits = limits_of(app)
        self._events = events
        self._proxy = trusted_proxy
        self._loop = 0
        self._wake: Any = None
        # Tickets granted by the fair queue since the last tick (appended from any thread).
        self._granted: collections.deque[Ticket[Any]] = collections.deque()
        self._waiting: dict[Ticket[Any], _Query] = {}
        self._running: set[_Query] = set()
        # Connection workers take connections over once the front answered one of their
        # queries (server.handoff).
        count = svc.config.server.sparql_connection_workers
        self.owners: ConnectionWorkers | None = None
        if count:
            self.owners = ConnectionWorkers(
                svc, self._pool, self._limits, events, count, trusted_proxy
            )
        # Counters (tests and logs): answered on the loop, handed to the view, had to wait.
        self.answered = 0
        self.handed_over = 0
        self.waited = 0

    def close(self) -> None:
        """Stop the connection workers (the server is stopping)."""
        if self.owners is not None:
            self.owners.close()

    # ------------------------------------------------------------------ taking requests
    def take(self, channel: Any, request: Any) -> bool:
        """Take ``request`` if the front can answer it (loop thread only)."""
        if not self._loop:
            self._loop = threading.get_ident()
            self._wake = channel.server.pull_trigger
        handover = getattr(channel, "qabench_handover", None)
        if handover is not None:  # a connection worker's verdict on this request
            channel.qabench_handover = None
            self.handed_over += 1
            request.qabench_environ = {HANDOVER: handover}
            channel.server.dispatch(channel)
            return True
        try:
            query = self._plan(channel, request)
        except Exception:  # a fault of the front: the threads answer as before
            log.exception("the SPARQL front could not read a request")
            return False
        if query is None:
            return False
        limits = self._limits
        refused = rate_refusal(limits.sparql, query.client, "SPARQL queries")
        if refused is None and not limits.queries.acquire(query.client):
            refused = slot_refusal(limits.queries, "SPARQL queries")
        if refused is not None:
            return self._hand_over(query, Handover(refused=refused))
        try:
            query.ticket = self._pool.request(query.client, notify=self._granted_soon)
        except PoolError as exc:
            limits.queries.release(query.client)
            return self._hand_over(query, Handover(error=exc))
        if query.ticket.worker is not None:
            self._start(query)
        else:
            self.waited += 1
            self._waiting[query.ticket] = query
        return True

    def _plan(self, channel: Any, request: Any) -> _Query | None:
        """Return the query of ``request`` if the front may answer it, else None."""
        if (
            request.error is not None
            or request.path != "/sparql"
            or request.command not in ("GET", "POST")
            or request.version != "1.1"
            or not self._pool.ready
            or any(name in request.headers for name in _NOT_HERE)
        ):
            return None
        client = self._client(channel, request)
        req = _protocol_request(request)
        if client is None or req is None or "token" in req.args:
            return None
        svc = self._svc
        vis = svc.anonymous_visibility()
        if vis is None:
            return None
        try:
            found = read_protocol_query(req)
            if found.text is None:
                return None
            prepared = prepare(svc, req, found, vis)
            if prepared.html or prepared.private:
                return None
            job = query_job(svc, prepared, vis, svc.views.current(svc.generation, 0))
        except (Problem, QuerySyntaxError, ViewNotReadyError):
            return None  # the view answers with the same decision
        waiting = self._pool.timeout + WAIT_GRACE_SECONDS
        accepts = caching.gzip_accepted(request.headers.get("ACCEPT_ENCODING"))
        return _Query(
            channel,
            request,
            client,
            prepared,
            job,
            svc.modified_for(True),
            accepts,
            time.monotonic() + waiting,
        )

    def _client(self, channel: Any, request: Any) -> str | None:
        """Return the client key of ``request`` as the view would see it (None: malformed
        forwarding headers, which the view answers)."""
        peer = str(channel.addr[0]) if isinstance(channel.addr, tuple) else str(channel.addr)
        if self._proxy is not None and self._proxy[0] in ("*", peer):
            environ = {"REMOTE_ADDR": peer}
            environ.update({f"HTTP_{k}": v for k, v in request.headers.items()})
            try:
                parse_proxy_headers(environ, self._proxy[1], self._proxy[2], logger=log)
            except MalformedProxyHeader:
                return None
            peer = environ["REMOTE_ADDR"]
        return client_key(peer)

    # ------------------------------------------------------------------ workers
    def _granted_soon(self, ticket: Ticket[Any]) -> None:
        # Called by the fair queue under its lock, on any thread: only note and wake the loop.
        self._granted.append(ticket)
        if threading.get_ident() != self._loop and self._wake is not None:
            self._wake()

    def _start(self, query: _Query) -> None:
        assert query.ticket is not None
        try:
            query.worker, query.started = self._pool.claim(query.ticket)
            query.reader = self._pool.begin(query.worker, query.job, query.client, query.started)
        except PoolError as exc:
            self._fail(query, exc)
            return
        query.deadline = time.monotonic() + self._pool.wait_limit(query.reader)
        query.pipe = _Pipe(self, query, self._events)
        self._running.add(query)

    def frame(self, query: _Query) -> None:
        """Read one frame of ``query``'s answer (its worker's pipe is readable or closed)."""
        if query not in self._running:
            return
        try:
            outcome = query.reader.feed(query.worker.conn.recv_bytes())
        except (EOFError, OSError) as exc:
            self._stop_watching(query)
            self._fail(query, self._pool.failed(query.worker, query.client, query.started, exc))
            return
        if outcome is None:
            query.deadline = time.monotonic() + self._pool.wait_limit(query.reader)
            return
        self._stop_watching(query)
        try:
            outcome = self._pool.finish(query.worker, query.client, query.started, outcome)
        except PoolError as exc:
            self._fail(query, exc)
            return
        # The worker just freed went to the next waiting query: it starts before this answer
        # is written, so the worker does not idle while the loop writes.
        self._start_granted()
        self._limits.queries.release(query.client)
        self._answer(query, outcome)

    def _start_granted(self) -> None:
        while self._granted:
            query = self._waiting.pop(self._granted.popleft(), None)
            if query is not None:
                self._start(query)

    def abandon(self, query: _Query) -> None:
        """Give up ``query`` after a fault of the front: its worker is replaced, its
        connection closed (the client sees it end rather than wait)."""
        if query in self._running:
            self._stop_watching(query)
            self._pool.failed(query.worker, query.client, query.started, RuntimeError("abandoned"))
            self._limits.queries.release(query.client)
        query.channel.will_close = True

    def _stop_watching(self, query: _Query) -> None:
        self._running.discard(query)
        if query.pipe is not None:
            query.pipe.close()
            query.pipe = None

    def tick(self) -> float:
        """Start queries whose worker came, stop those past their deadline; return the
        seconds until the next deadline (loop thread, before each poll)."""
        self._start_granted()
        if self.owners is not None:
            self.owners.tick()
        if not self._running and not self._waiting:
            return IDLE_SECONDS
        now = time.monotonic()
        for query in [q for q in self._running if q.deadline <= now]:
            self._stop_watching(query)
            self._fail(
                query,
                self._pool.overran(query.worker, query.client, query.started, query.reader),
            )
        for ticket, query in list(self._waiting.items()):
            if query.deadline <= now:
                del self._waiting[ticket]
                try:
                    self._pool.claim(
                        ticket
                    )  # granted just now after all: it starts at the next tick
                except PoolError as exc:
                    self._fail(query, exc)
                    continue
                self._waiting[ticket] = query
                self._granted.append(ticket)
        deadlines = [q.deadline for q in (*self._running, *self._waiting.values())]
        return max(0.0, min(deadlines, default=now + IDLE_SECONDS) - now)

    # ------------------------------------------------------------------ answers
    def _fail(self, query: _Query, exc: PoolError) -> None:
        self._limits.queries.release(query.client)
        self._hand_over(query, Handover(error=exc))

    def _hand_over(self, query: _Query, handover: Handover) -> bool:
        """Let the Flask view answer ``query`` on a thread, with what the front found."""
        self.handed_over += 1
        query.request.qabench_environ = {HANDOVER: handover}
        query.channel.server.dispatch(query.channel)
        return True

    def _answer(self, query: _Query, outcome: QueryOutcome) -> None:
        if outcome.failure is not None:
            self._hand_over(query, Handover(outcome))
            return
        body = outcome.data
        media = outcome.media_type
        textual = caching.is_textual(media)
        compress = textual and query.gzip and len(body) >= caching.MIN_GZIP_BYTES
        if compress and len(body) > LOOP_GZIP_BYTES:
            self._hand_over(query, Handover(outcome))
            return
        etag = query.prepared.etag
        headers = result_headers(outcome, self._svc.config.server)
        if compress:
            body = caching.compress(body)
            etag += caching.GZIP_SUFFIX
            headers.append(("Content-Encoding", "gzip"))
        # The view reads the session to exempt form-token holders from the rate (Flask then
        # adds Cookie to Vary); the same request gets the same header here.
        vary = ["Accept", *(["Accept-Encoding"] if textual else [])]
        if self._limits.sparql.per_minute > 0:
            vary.append("Cookie")
        date, modified = caching.dated(query.modified)
        headers += [
            ("Vary", ", ".join(vary)),
            ("ETag", quote_etag(etag)),
            ("Date", date),
            ("Last-Modified", modified),
            ("Cache-Control", caching.PUBLIC_CACHE),
            *GRANT,
            *SECURITY_HEADERS.items(),
            ("X-Request-Id", new_request_id()),
        ]
        self.answered += 1
        query.channel.server.answer(query.channel, query.request, "200 OK", headers, body)
        if self.owners is not None:
            self._hand_off(query)

    def _hand_off(self, query: _Query) -> None:
        """Give the connection of ``query``, just answered, to a connection worker when
        nothing of it waits here (no request read ahead, every byte of the answer sent)."""
        channel = query.channel
        owners = self.owners
        assert owners is not None
        if (
            not channel.connected
            or channel.requests
            or channel.request is not None
            or channel.total_outbufs_len
            or channel.will_close
            or channel.close_when_flushed
            or not isinstance(channel.addr, tuple)
        ):
            return
        state = owners.state(query.job.view)
        if state is None:
            return
        owners.hand(channel, state)


def _protocol_request(request: Any) -> ProtocolRequest | None:
    """Return the protocol's view of a waitress request (None: bytes Werkzeug would read
    differently, left to the view)."""
    mimetype, params = media_type(request.headers.get("CONTENT_TYPE"))
    try:
        args = parse_fields(request.query.encode("latin-1"))
        body = b""
        if request.command == "POST":
            stream = request.get_body_stream()
            at = stream.tell()
            body = stream.read()
            stream.seek(at)  # the view reads it again if the request is handed over
        form = parse_fields(body) if mimetype == FORM else None
    except (UnicodeError, ValueError):
        return None
    return ProtocolRequest(
        request.command,
        args,
        form,
        mimetype,
        params,
        body if mimetype == QUERY_BODY else b"",
        request.headers.get("ACCEPT"),
    )

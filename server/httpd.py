"""The HTTP server of ``qabench serve``: waitress, with limits decided where connections arrive.

Waitress reads requests in one event loop (``poll``, so thousands of sockets are fine) and hands
complete requests to a pool of threads; idle and slow connections hold no thread. Its defaults
let one address take the server down (100 connections in all, two minutes of idleness allowed,
1 GB bodies read before the application can refuse them), so this module configures and extends
it:

* at most ``connection_limit`` open connections, and at most ``connections_per_client`` from one
  client (IPv6: one /64; the trusted reverse proxy is exempt, it limits per client itself):
  a connection beyond is answered 503 and closed at once;
* a request head must arrive within ``header_timeout_seconds`` of its first byte, a whole request
  within ``request_timeout_seconds``, and a connection idle between requests is closed after
  ``idle_timeout_seconds`` (sooner, oldest first, when the server nears its connection limit);
* a request body larger than its path allows is refused with 413 from the ``Content-Length``
  header, before any of it is read (``body_limit``: uploads and updates may carry
  ``server.max_upload_bytes``, everything else ``server.max_request_body_bytes``; chunked
  bodies are cut at the same limit).

Every limit is a ``[server]`` setting and listed in docs/server.md ("Limits").

A *front* (``Front``: the SPARQL front, ``server.front``) may take a complete request on
the event loop instead of a thread; it answers later with ``QabenchServer.answer``, or hands the
request to the threads with ``QabenchServer.dispatch``. The loop runs the front's ``tick``
before each poll, and polls no longer than the front's next deadline.
"""

from __future__ import annotations

import copy
import logging
import resource
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from waitress import wasyncore
from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser, ParsingError
from waitress.server import TcpWSGIServer
from waitress.task import Task, ThreadedTaskDispatcher, WSGITask
from waitress.utilities import Error

from server.config import ServerConfig
from server.web.limits import client_key

log = logging.getLogger(__name__)
# Waitress warns once per request that finds every thread busy ("Task queue depth is N"): under
# load that is a log line per request, paid by the serving process on every one of them.
logging.getLogger("waitress.queue").setLevel(logging.ERROR)

# A request still arriving after this long holds a place without using it (shed first when
# the server is near its connection limit).
STALLED_SECONDS = 1.0
# Paths whose requests may carry an upload (POST bodies up to server.max_upload_bytes).
UPLOAD_PATHS = ("/upload/dataset", "/experiments/new", "/update")
_REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Retry-After: 5\r\nConnection: close\r\nContent-Length: 58\r\n\r\n"
    b"Too many open connections from this client; retry later.\n"
)


def body_limit(path: str, settings: ServerConfig) -> int:
    """Return how many body bytes a request for ``path`` may carry.

    >>> body_limit("/upload/dataset", ServerConfig()) == ServerConfig().max_upload_bytes
    True
    >>> body_limit("/sparql", ServerConfig()) == ServerConfig().max_request_body_bytes
    True
    """
    if path in UPLOAD_PATHS:
        return settings.max_upload_bytes
    return settings.max_request_body_bytes


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """The limits the server enforces on connections (from ``[server]``)."""

    per_client: int
    header_timeout: float
    request_timeout: float
    idle_timeout: float
    exempt: frozenset[str]
    body_limit: Callable[[str], int]
    # Decides an upload's credentials from its head, before its body is read: 0 (read it),
    # 401 or 403 (``server.web.auth.upload_gate``).
    admit: Callable[[str, Mapping[str, str]], int] = lambda _path, _headers: 0


class _Unauthorized(Error):  # type: ignore[misc]
    code = 401
    reason = "Unauthorized"

    def __init__(self) -> None:
        super().__init__(
            "This upload needs the submit token (or, for /update, the admin token) as "
            "Authorization: Bearer, or a session of this server's form."
        )

    def to_response(self, ident: str | None = None) -> tuple[str, list[tuple[str, str]], bytes]:
        status, headers, body = super().to_response(ident)
        return status, [*headers, ("WWW-Authenticate", 'Bearer realm="qabench"')], body


class _Forbidden(Error):  # type: ignore[misc]
    code = 403
    reason = "Forbidden"

    def __init__(self) -> None:
        super().__init__("This token opens no upload on this server.")


class _Parser(HTTPRequestParser):  # type: ignore[misc]
    """Waitress's request parser, with the body limit of the request's path and one framing.

    A request framed two ways is refused (400, and the connection closed): waitress reads an
    HTTP/1.0 body by its ``Content-Length`` and ignores ``Transfer-Encoding`` there, so what a
    proxy forwarded as one chunked request became two (request smuggling, RFC 9112 §6.1);
    over HTTP/1.1 chunked wins and the length is dropped, which a proxy may read otherwise.
    """

    limits: ConnectionLimits
    adj: Adjustments
    content_length: int

    def parse_header(self, header_plus: bytes) -> None:
        super().parse_header(header_plus)
        if "TRANSFER_ENCODING" in self.headers and self.version != "1.1":
            raise ParsingError("Transfer-Encoding is not allowed in an HTTP/1.0 request")
        if self.chunked and "CONTENT_LENGTH" in self.headers:
            raise ParsingError("A request may not carry both Content-Length and Transfer-Encoding")
        path = self.path or "/"
        if path in UPLOAD_PATHS and (self.chunked or self.content_length > 0):
            refused = self.limits.admit(path, self.headers)
            if refused:
                # answered from the head: waitress then closes without reading the body
                self.error = _Unauthorized() if refused == 401 else _Forbidden()
                self.completed = True
                self.content_length = 0  # no 413 on top: the credentials decided
        allowed = self.limits.body_limit(self.path or "/") + 1  # waitress refuses >= max
        if allowed < self.adj.max_request_body_size:
            self.adj = copy.copy(self.adj)
            self.adj.max_request_body_size = allowed


class _Task(WSGITask):  # type: ignore[misc]
    """A request on a thread; a request the front hands over carries environ entries."""

    def get_environment(self) -> dict[str, Any]:
        environ: dict[str, Any] = super().get_environment()
        environ.update(getattr(self.request, "qabench_environ", None) or {})
        return environ


class _Channel(HTTPChannel):  # type: ignore[misc]
    """A connection: counted per client, its current request timed from its first byte."""

    server: QabenchServer
    task_class = _Task

    def __init__(self, server: Any, sock: Any, addr: Any, adj: Any, map: Any = None) -> None:
        super().__init__(server, sock, addr, adj, map)
        self.client = server.client_of(addr)
        self.request_started: float | None = None
        self.counted = True

    def received(self, data: bytes) -> bool:
        if self.request is None and data:
            self.request_started = time.monotonic()
        done: bool = super().received(data)
        if self.request is None:
            self.request_started = None
        return done

    def del_channel(self, map: Any = None) -> None:
        super().del_channel(map)
        if self.counted:
            self.counted = False
            self.server.forget(self.client)


class Front(Protocol):
    """What answers some requests on the event loop (the SPARQL front)."""

    def take(self, channel: Any, request: Any) -> bool:
        """Return whether the front took ``request`` (the first of ``channel``'s)."""

    def tick(self) -> float:
        """Do the front's due work; return the seconds until it is due again."""


class QabenchServer(TcpWSGIServer):  # type: ignore[misc]
    """A waitress TCP server with per-client connection caps and request timeouts."""

    def __init__(self, application: Any, limits: ConnectionLimits, **kwargs: Any) -> None:
        self.limits = limits
        self.open_per_client: dict[str, int] = {}
        self.refused = 0
        self.front: Front | None = None
        self.loop_thread = 0
        # Guards the trigger pipe: once the loop has closed it, waking it is a no-op.
        self._trigger_lock = threading.Lock()
        self._trigger_closed = False
        # Connections handed to connection workers (server.handoff): open, though not here.
        self.elsewhere = 0
        parser = type("Parser", (_Parser,), {"limits": limits})
        self.channel_class = type("Channel", (_Channel,), {"parser_class": parser})
        super().__init__(application, **kwargs)

    def pull_trigger(self) -> None:
        """Wake the event loop (from any thread); nothing once the loop has ended.

        The loop closes its trigger pipe when it ends, and a thread that wakes it afterwards
        (a teardown's ``stop_soon``, a worker finishing a response) would write to a closed
        descriptor: EBADF, or one byte into whatever file took the number since.
        """
        with self._trigger_lock:
            if not self._trigger_closed:
                super().pull_trigger()

    def close_trigger(self) -> None:
        """Close the trigger pipe (the loop's last step); later wakes do nothing."""
        with self._trigger_lock:
            self._trigger_closed = True
            self.trigger.close()

    def readable(self) -> bool:
        found: bool = super().readable()
        # connections held by connection workers count against the server's limit too
        return found and len(self._map) + self.elsewhere < self.adj.connection_limit

    def adopt(
        self,
        sock: Any,
        peer: str,
        handover: Any = None,
        pending: bytes = b"",
        counted: bool = True,
        unread: bytes = b"",
    ) -> None:
        """Serve a connection a connection worker gave back (loop thread): ``unread``, the bytes
        the worker read and did not answer, is read here first, as if it had just arrived, then
        the socket; ``handover`` goes with the next request to the view
        (``endpoint.Handover``); ``pending`` is output the worker had not sent yet.
        ``counted``: the connection is still counted as its client's (it was handed off)."""
        try:
            sock.setblocking(False)
            addr = self.fix_addr(sock.getpeername())
        except OSError:
            sock.close()
            if counted:
                self.forget(self.client_of((peer, 0)))
            return
        if not counted:
            client = self.client_of(addr)
            self.open_per_client[client] = self.open_per_client.get(client, 0) + 1
        channel = self.channel_class(self, sock, addr, self.adj, map=self._map)
        channel.qabench_handover = handover
        if pending:
            channel.write_soon(pending)
        if unread:
            channel.received(unread)

    def client_of(self, addr: Any) -> str:
        """Return the client key of a peer address."""
        host = addr[0] if isinstance(addr, tuple) and addr else str(addr)
        return client_key(str(host))

    def forget(self, client: str) -> None:
        """Count one connection of ``client`` less."""
        left = self.open_per_client.get(client, 0) - 1
        if left > 0:
            self.open_per_client[client] = left
        else:
            self.open_per_client.pop(client, None)

    def handle_accept(self) -> None:
        try:
            accepted = self.accept()
        except OSError:
            return
        if accepted is None:
            return
        conn, addr = accepted
        addr = self.fix_addr(addr)
        client = self.client_of(addr)
        held = self.open_per_client.get(client, 0)
        if client not in self.limits.exempt and held >= self.limits.per_client:
            self.refused += 1
            try:
                conn.setblocking(False)
                conn.send(_REFUSED)
            except OSError:
                pass
            finally:
                conn.close()
            return
        try:
            self.set_socket_options(conn)
        except OSError:
            conn.close()
            return
        self.open_per_client[client] = held + 1
        self.channel_class(self, conn, addr, self.adj, map=self._map)

    def add_task(self, channel: Any) -> None:
        """Start the first request of ``channel``: on the front if it takes it, else a thread.

        Waitress calls this on the loop thread when a request arrives, and on a request
        thread when a pipelined request follows one a thread answered; the front only ever
        runs on the loop, and never while earlier output of the channel waits to be sent.
        """
        front = self.front
        if (
            front is not None
            and threading.get_ident() == self.loop_thread
            and not channel.total_outbufs_len
            and front.take(channel, channel.requests[0])
        ):
            return
        super().add_task(channel)

    def dispatch(self, channel: Any) -> None:
        """Hand the first request of ``channel`` to the request threads."""
        super().add_task(channel)

    def answer(
        self, channel: Any, request: Any, status: str, headers: list[tuple[str, str]], body: bytes
    ) -> None:
        """Send a response the front made for ``request`` and go on to the channel's next
        request, as waitress does after a thread served one (loop thread only)."""
        task = Task(channel, request)
        task.start()
        task.status = status
        task.response_headers = headers
        task.content_length = len(body)
        head = task.build_response_header()
        if channel.connected:
            with channel.outbuf_lock:
                size = len(head) + len(body)
                channel.outbufs[-1].append(head)
                channel.outbufs[-1].append(body)
                channel.current_outbuf_count += size
                channel.total_outbufs_len += size
                channel._flush_exception(channel._flush_some, do_close=False)
        request.close()
        with channel.requests_lock:
            if task.close_on_finish or not channel.connected:
                channel.close_when_flushed = True
                for waiting in channel.requests:
                    waiting.close()
                channel.requests = []
            else:
                if channel.current_outbuf_count > 0:
                    # the next request gets a buffer of its own, as after a thread's task
                    channel.current_outbuf_count = channel.adj.outbuf_high_watermark
                if channel.requests and channel.requests[0] is request:
                    channel.requests.pop(0)
                if channel.requests:
                    self.add_task(channel)
        channel.last_activity = time.time()

    def maintenance(self, now: float) -> None:
        """Close idle connections and requests that arrive too slowly (runs every second).

        Near the connection limit (80 %) connections that hold a place without using it go
        first until the server is back at 70 %: idle keep-alive connections, oldest first,
        then requests that have been arriving for longer than ``STALLED_SECONDS`` (a head or
        a body still incomplete), the longest-arriving first. A complete request arrives in
        milliseconds; half-sent ones, reopened as soon as closed, held every place until
        their timeouts (issue 41: 40 addresses under the per-address cap, 4 of 12 probes
        timed out).
        """
        clock = time.monotonic()
        limits = self.limits
        open_now = len(self._map)
        crowded = open_now > 0.8 * self.adj.connection_limit
        idle: list[tuple[float, Any]] = []
        stalled: list[tuple[float, Any]] = []
        for channel in list(self.active_channels.values()):
            started = getattr(channel, "request_started", None)
            if started is not None:
                head_done = channel.request is not None and channel.request.headers_finished
                limit = limits.request_timeout if head_done else limits.header_timeout
                if clock - started > limit:
                    channel.will_close = True
                elif clock - started > STALLED_SECONDS and not channel.requests:
                    stalled.append((started, channel))
            elif not channel.requests and not channel.total_outbufs_len:
                if now - channel.last_activity > limits.idle_timeout:
                    channel.will_close = True
                else:
                    idle.append((channel.last_activity, channel))
        if crowded:
            need = max(1, open_now - int(0.7 * self.adj.connection_limit))
            idle.sort(key=lambda item: item[0])
            stalled.sort(key=lambda item: item[0])
            shed = idle[: max(need, len(idle) // 2)]
            shed += stalled[: max(0, need - len(shed))]
            for _, channel in shed:
                channel.will_close = True


def _raise_file_limit(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def connection_limits(
    settings: ServerConfig, admit: Callable[[str, Mapping[str, str]], int] | None = None
) -> ConnectionLimits:
    """Return the connection limits of ``settings`` (``admit``: the upload gate, if any)."""
    proxy = settings.trusted_proxy
    return ConnectionLimits(
        per_client=settings.connections_per_client,
        header_timeout=settings.header_timeout_seconds,
        request_timeout=settings.request_timeout_seconds,
        idle_timeout=settings.idle_timeout_seconds,
        exempt=frozenset() if not proxy or proxy == "*" else frozenset({client_key(proxy)}),
        body_limit=lambda path: body_limit(path, settings),
        **({"admit": admit} if admit is not None else {}),
    )


def create_servers(
    app: Any,
    settings: ServerConfig,
    host: str,
    port: int,
    admit: Callable[[str, Mapping[str, str]], int] | None = None,
    **extra: Any,
) -> tuple[list[QabenchServer], dict[int, Any], Adjustments]:
    """Bind the servers of ``host:port`` (one per address it resolves to) on one event map
    (``admit``: the check of an upload's credentials from its head)."""
    adjustments = Adjustments(
        host=host,
        port=port,
        threads=settings.threads,
        ident="qabench",
        connection_limit=settings.connection_limit,
        channel_timeout=max(1, int(settings.idle_timeout_seconds)),
        cleanup_interval=1,
        asyncore_use_poll=True,
        max_request_body_size=max(settings.max_upload_bytes, settings.max_request_body_bytes) + 1,
        max_request_header_size=settings.max_request_header_bytes,
        **extra,
    )
    # Every connection is a file descriptor; the store, views and workers need some too.
    _raise_file_limit(settings.connection_limit + 1024)
    dispatcher = ThreadedTaskDispatcher()
    dispatcher.set_thread_count(adjustments.threads)
    limits = connection_limits(settings, admit)
    events: dict[int, Any] = {}
    servers = [
        QabenchServer(
            app, limits, map=events, dispatcher=dispatcher, adj=adjustments, sockinfo=info
        )
        for info in adjustments.listen
    ]
    return servers, events, adjustments


def run(
    servers: list[QabenchServer],
    events: dict[int, Any],
    adjustments: Adjustments,
    stop: threading.Event | None = None,
) -> None:
    """Serve until interrupted (KeyboardInterrupt ends the loop and the worker threads) or
    ``stop`` is set (``stop_soon`` sets it and wakes the loop)."""
    front = servers[0].front
    for server in servers:
        server.loop_thread = threading.get_ident()
    timeout = adjustments.asyncore_loop_timeout
    try:
        while events and not (stop is not None and stop.is_set()):
            due = timeout
            if front is not None:
                try:
                    due = front.tick()
                except Exception:  # a fault of the front must not stop the server
                    log.exception("the event-loop front failed")
            wasyncore.poll2(max(0.0, min(timeout, due)), events)
    except (KeyboardInterrupt, SystemExit):
        log.info("stopping the HTTP server")
    finally:
        closing = getattr(front, "close", None)
        if closing is not None:
            closing()  # the front's connection workers
        servers[0].task_dispatcher.shutdown()
        for server in servers:
            server.close_trigger()
        wasyncore.close_all(events)


def stop_soon(servers: list[QabenchServer], stop: threading.Event) -> None:
    """Make ``run`` (called with ``stop``) return soon, from another thread."""
    stop.set()
    servers[0].pull_trigger()


def bound_addresses(servers: list[QabenchServer]) -> list[tuple[str, int]]:
    """Return the (host, port) each server listens on."""
    found = []
    for server in servers:
        name = server.socket.getsockname()
        found.append((str(name[0]), int(name[1])))
    return found

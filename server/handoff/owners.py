"""The serving process's side of the connection workers: start them, hand them connections,
take connections back, admit their queries, and answer for a worker that ended.

Runs on the event loop of ``server.httpd`` (``server.front`` calls it). A connection handed to a
worker still counts as its client's open connection until the worker says it closed it; a
connection given back becomes a waitress channel again (``QabenchServer.adopt``), which first
reads the bytes the worker read and did not answer (its next request, whole or in part), then
the socket as usual, with the worker's verdict on that request when there is one (a query past
the time limit, a worker that ended while it evaluated: answered by the Flask view as the
pool's errors are). Per-client limits stay here: while any is on, a worker
asks before each query (``admit``: the client's fair share, slots and rate, in the order the
front checks them); with none on it checks only whether the client became heavy, which it
measures itself, and reports the worker time of its longer queries.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import mmap
import multiprocessing
import os
import pickle
import signal
import socket
import threading
from multiprocessing import reduction
from typing import Any

from waitress import wasyncore

from server.handoff.worker import GENERATION, State, worker_main
from server.services import Services
from server.sparql import isolation
from server.sparql.endpoint import Handover
from server.sparql.workers import QueryMemoryError, QueryPool, QueryTimeoutError, WorkerFailedError
from server.web.limits import Limits

log = logging.getLogger(__name__)

_OUT_OF_MEMORY = {-signal.SIGABRT, -signal.SIGSEGV, -signal.SIGBUS, -signal.SIGKILL}
READY_SECONDS = 60.0
MAX_HANDOFFS = 8


class _Link(wasyncore.dispatcher):  # type: ignore[misc]
    """The loop's watch on one connection worker's control pipe."""

    def __init__(
        self, owners: ConnectionWorkers, conn: Any, process: Any, events: dict[int, Any]
    ) -> None:
        wasyncore.dispatcher.__init__(self, map=events)
        self.owners = owners
        self.conn = conn
        self.process = process
        self.held: socket.socket | None = None
        self.held_peer = ""
        self.held_unread = b""  # the held query's request (and whatever followed it)
        # Peers of the connections this worker holds (counted as open until it lets them go).
        self.peers: collections.Counter[str] = collections.Counter()
        self.admitted: str | None = None  # the client whose admitted query runs now
        self.gone = False
        self._fileno = conn.fileno()
        self.add_channel(events)

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def handle_read(self) -> None:
        try:
            raw = self.conn.recv_bytes()
        except (EOFError, OSError):
            self.handle_close()
            return
        self.owners.message(self, raw)

    def handle_close(self) -> None:
        self.owners.ended(self)

    def handle_error(self) -> None:
        log.exception("a connection worker's message could not be handled")
        self.owners.ended(self)

    def close(self) -> None:
        if self._fileno is not None:
            self.del_channel()


class ConnectionWorkers:
    """``count`` connection workers of the SPARQL front (``server.sparql_connection_workers``)."""

    def __init__(
        self,
        svc: Services,
        pool: QueryPool,
        limits: Limits,
        events: dict[int, Any],
        count: int,
        proxy: tuple[str, int, set[str]] | None,
    ) -> None:
        self._svc = svc
        self._pool = pool
        self._limits = limits
        self._events = events
        self._count = count
        self._proxy = (proxy[0], proxy[1], frozenset(proxy[2])) if proxy else None
        self._links: list[_Link] = []
        self._next = 0
        self._server: Any = None
        self._lock = threading.Lock()
        self._fd = os.memfd_create("qabench-generation")
        os.ftruncate(self._fd, GENERATION.size)
        self._counter = mmap.mmap(self._fd, GENERATION.size)
        self.published(svc.generation)
        svc.generation_listeners.append(self.published)
        self._handoffs: collections.OrderedDict[tuple[str, int], int] = collections.OrderedDict()
        self._started: collections.deque[tuple[Any, Any]] = collections.deque()
        self._closed = False
        self.handed = 0
        self.given_back = 0
        for _ in range(count):
            self._start()

    # ------------------------------------------------------------------ workers
    def published(self, generation: int) -> None:
        """Tell the workers the store's generation (called by every write, before its answer)."""
        GENERATION.pack_into(self._counter, 0, generation)

    def _start_later(self) -> None:
        """Start a worker off the loop (the loop registers it on its next tick)."""
        threading.Thread(target=self._start, args=(False,), daemon=True).start()

    def tick(self) -> None:
        """Register workers started off the loop (loop thread)."""
        while self._started:
            conn, process = self._started.popleft()
            if self._closed:
                process.kill()
                conn.close()
                continue
            self._links.append(_Link(self, conn, process, self._events))

    def _start(self, register: bool = True) -> None:
        context = multiprocessing.get_context("forkserver")
        parent, child = context.Pipe()
        process = context.Process(
            target=worker_main,
            args=(child, self._svc.config.server.query_memory_mb << 20, self._pool.timeout),
            name="qabench-connection-worker",
            daemon=True,
        )
        with isolation.single_threaded_imports(self._pool.preload):
            process.start()
        child.close()
        reduction.send_handle(parent, self._fd, process.pid)
        if not parent.poll(READY_SECONDS):
            log.error("a connection worker did not start")
            process.kill()
            parent.close()
            return
        parent.recv_bytes()
        if register:
            self._links.append(_Link(self, parent, process, self._events))
        else:
            self._started.append((parent, process))

    def ended(self, link: _Link) -> None:
        """Answer for a worker that ended and start another (loop thread)."""
        if link.gone:
            return
        link.gone = True
        link.close()
        if link in self._links:
            self._links.remove(link)
        link.process.join(2)
        code = link.process.exitcode
        if link.admitted is not None:
            self._limits.queries.release(link.admitted)
        if link.held is not None:
            link.peers[link.held_peer] -= 1
            died = QueryMemoryError if code in _OUT_OF_MEMORY else WorkerFailedError
            message = (
                f"The query needed more than the {self._svc.config.server.query_memory_mb} MiB "
                "a query worker may use"
                if died is QueryMemoryError
                else "The query worker stopped"
            )
            self._adopt(
                link.held, link.held_peer, Handover(error=died(message)), unread=link.held_unread
            )
            link.held, link.held_unread = None, b""
        server = self._server
        for peer, count in link.peers.items():  # lost with the worker: no longer open
            for _ in range(max(0, count)):
                if server is not None:
                    server.elsewhere -= 1
                    server.forget(server.client_of((peer, 0)))
        link.peers.clear()
        link.conn.close()
        if not self._closed:
            self._start_later()

    # ------------------------------------------------------------------ hand-off
    def state(self, view: str) -> State | None:
        """Return what a worker needs to answer anonymous queries over ``view`` now."""
        svc = self._svc
        vis = svc.anonymous_visibility()
        if vis is None:
            return None
        settings = svc.config.server
        limited = (
            settings.sparql_requests_per_minute > 0
            or settings.sparql_client_budget_seconds > 0
            or settings.queries_per_client < self._count
        )
        return State(
            svc.base,
            settings,
            vis,
            svc.instance,
            svc.generation,
            svc.public_generation,
            svc.modified_for(True),
            view,
            self._limits.sparql.per_minute > 0,
            None if limited else self._pool.timeout / 2,
            self._proxy,
        )

    def hand(self, channel: Any, state: State) -> bool:
        """Hand ``channel``'s connection to a worker; return whether it was taken.

        A connection is handed at most ``MAX_HANDOFFS`` times (each hand-back has one request
        answered here first, so a client whose requests keep coming back stays here after it).
        """
        address = (str(channel.addr[0]), int(channel.addr[1]))
        handed = self._handoffs.pop(address, 0)
        self._handoffs[address] = handed + 1
        while len(self._handoffs) > 10_000:
            self._handoffs.popitem(last=False)
        # a worker busy with a slow query gave its other connections back: not to it again
        free = [link for link in self._links if link.held is None and not link.gone]
        if not free or handed >= MAX_HANDOFFS:
            return False
        peer = address[0]
        self._server = channel.server
        link = free[self._next % len(free)]
        self._next += 1
        try:
            link.conn.send_bytes(pickle.dumps(("conn", peer, state), pickle.HIGHEST_PROTOCOL))
            reduction.send_handle(link.conn, channel.socket.fileno(), link.process.pid)
        except OSError:
            return False
        link.peers[peer] += 1
        channel.counted = False  # still open: counted until the worker closes it
        channel.server.elsewhere += 1
        channel.handle_close()
        self.handed += 1
        return True

    def message(self, link: _Link, raw: bytes) -> None:
        """Handle one message of ``link``'s worker (JSON: never unpickled here)."""
        head, _, data = raw.partition(b"\n")
        record = json.loads(head)
        kind = record.get("kind")
        if kind == "back":
            sock = socket.socket(fileno=reduction.recv_handle(link.conn))
            verdict = record.get("verdict", "")
            handover = None
            if verdict == "timeout":
                handover = Handover(
                    error=QueryTimeoutError(f"The query ran longer than {self._pool.timeout:g} s")
                )
                if link.held is not None:
                    link.held.close()
                    link.held = None
            self.given_back += 1
            link.peers[str(record.get("peer", ""))] -= 1
            out = int(record.get("out", 0))
            self._adopt(sock, str(record.get("peer", "")), handover, data[:out], data[out:])
            if verdict == "timeout":  # the worker ends now
                self.ended(link)
        elif kind == "closed":
            link.peers[str(record["peer"])] -= 1
            server = self._server
            if server is not None:
                server.elsewhere -= 1
                server.forget(server.client_of((record["peer"], 0)))
        elif kind == "hold":
            link.held = socket.socket(fileno=reduction.recv_handle(link.conn))
            link.held_peer = str(record.get("peer", ""))
            link.held_unread = data
        elif kind == "done":
            client, seconds = str(record["client"]), float(record["seconds"])
            if record.get("held") and link.held is not None:
                link.held.close()
                link.held = None
                link.held_unread = b""
            if record.get("admitted"):
                link.admitted = None
                self._limits.queries.release(client)
            self._pool.fair.charge(client, seconds)
        elif kind == "admit":
            ok = self._admit(str(record["client"]))
            if ok:
                link.admitted = str(record["client"])
            link.conn.send_bytes(pickle.dumps(("admitted", record["id"], ok)))

    def _admit(self, client: str) -> bool:
        """Admit a query of ``client`` as the front would (no side effect when refused, so
        the request, given back, is refused by the front with its problem)."""
        fair = self._pool.fair
        used = fair.usage(client)
        if used >= fair.heavy or (fair.budget and used >= fair.budget):
            return False
        if not self._limits.queries.acquire(client):
            return False
        if self._limits.sparql.per_minute > 0 and self._limits.sparql.take(client) > 0:
            self._limits.queries.release(client)
            return False
        return True

    def _adopt(
        self,
        sock: socket.socket,
        peer: str,
        handover: Handover | None,
        pending: bytes = b"",
        unread: bytes = b"",
    ) -> None:
        server = self._server
        if server is None:
            sock.close()
            return
        server.elsewhere -= 1
        server.adopt(sock, peer, handover, pending, unread=unread)

    def close(self) -> None:
        """Stop every worker."""
        self._closed = True
        self.tick()
        for link in list(self._links):
            link.gone = True
            with contextlib.suppress(OSError):
                link.conn.send_bytes(pickle.dumps(("stop",)))
            link.process.join(1)
            if link.process.is_alive():
                link.process.kill()
            link.close()
        self._links.clear()

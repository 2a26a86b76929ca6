"""A real loopback HTTP QA service speaking the GERBIL QA protocol, able to misbehave on purpose.

``QaStub`` answers ``POST /gerbil`` (form fields ``query`` and ``lang``). What it does for each
request is decided by a behaviour function ``(question_text, lang) -> Reply``; the replies
cover every fault the experiment runner must survive: timeouts, HTTP errors, closed connections,
invalid JSON, JSON of the wrong shape, oversized bodies and answers that trickle in slowly.
Fixtures: ``qa_stub`` (one service) and ``qa_stubs`` (a factory for several).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from pyoxigraph import Literal, NamedNode

from evaluators.model import Question


@dataclass(frozen=True)
class Reply:
    """What the stub does with one request."""

    kind: str = "ok"  # ok | status | hang | close | stream
    status: int = 200
    body: bytes = b""
    delay: float = 0.0  # seconds to wait before answering (ok, status) or in total (hang)
    headers: tuple[tuple[str, str], ...] = ()
    # stream: send `body` in chunks of `chunk` bytes `repeat` times, `pause` seconds apart
    chunk: int = 65536
    repeat: int = 1
    pause: float = 0.0


@dataclass(frozen=True)
class StubRequest:
    """One request the stub received."""

    query: str
    lang: str
    content_type: str
    accept: str
    raw_body: bytes


# ---------------------------------------------------------------------------- canned replies


def answer_document(question: Question | None) -> bytes:
    """Return a QALD-JSON document with one question answering like ``question`` (None: nothing)."""
    answers: list[dict[str, Any]] = []
    if question is not None:
        for answer_set in question.answers or ():
            if answer_set.boolean is not None:
                answers.append({"head": {}, "boolean": answer_set.boolean})
                continue
            var = answer_set.variables[0] if answer_set.variables else "x"
            bindings = [{var: _binding(value)} for value in answer_set.values]
            answers.append({"head": {"vars": [var]}, "results": {"bindings": bindings}})
    doc = {
        "questions": [
            {
                "id": question.id if question else "0",
                "question": [{"language": "en", "string": "?"}],
                "answers": answers,
            }
        ]
    }
    return json.dumps(doc).encode()


def _binding(value: NamedNode | Literal) -> dict[str, str]:
    if isinstance(value, NamedNode):
        return {"type": "uri", "value": value.value}
    out = {"type": "literal", "value": value.value}
    if value.language:
        out["xml:lang"] = value.language
    elif value.datatype.value != "http://www.w3.org/2001/XMLSchema#string":
        out["datatype"] = value.datatype.value
    return out


def ok(question: Question | None, delay: float = 0.0) -> Reply:
    """Answer like ``question`` (``None``: an empty answer)."""
    return Reply(body=answer_document(question), delay=delay)


FAULTS: dict[str, Callable[[float], Reply]] = {
    # `t` is the client's timeout in seconds; each fault is sized relative to it.
    "timeout": lambda t: Reply(kind="hang", delay=t * 4),
    "http-500": lambda t: Reply(kind="status", status=500, body=b"internal error"),
    "close": lambda t: Reply(kind="close"),
    "invalid-json": lambda t: Reply(body=b'{"questions": [{"id": "1", "answers": [{'),
    "wrong-shape": lambda t: Reply(body=b'{"questions": {"id": "1"}}'),
    "huge-body": lambda t: Reply(kind="stream", body=b" " * 65536, chunk=65536, repeat=800),
    "slow": lambda t: Reply(
        kind="stream", body=answer_document(None), chunk=8, repeat=1, pause=t / 4
    ),
}


# ---------------------------------------------------------------------------- the server


@dataclass
class QaStub:
    """A running loopback QA service."""

    url: str
    behaviour: Callable[[str, str], Reply]
    requests: list[StubRequest] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, request: StubRequest) -> None:
        """Remember one request (thread-safe)."""
        with self.lock:
            self.requests.append(request)

    def asked(self) -> list[str]:
        """Return the question strings received so far, in arrival order."""
        with self.lock:
            return [r.query for r in self.requests]


def _handler(stub: QaStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # headers and body go out in separate writes; without this, Nagle and delayed ACKs
        # add ~40 ms to every answer
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            form = parse_qs(raw.decode("ascii"), keep_blank_values=True, strict_parsing=False)
            request = StubRequest(
                query=form.get("query", [""])[0],
                lang=form.get("lang", [""])[0],
                content_type=self.headers.get("Content-Type", ""),
                accept=self.headers.get("Accept", ""),
                raw_body=raw,
            )
            stub.record(request)
            reply = stub.behaviour(request.query, request.lang)
            # the client may give up (timeouts, size limits): that is the point
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._send(reply)

        def _send(self, reply: Reply) -> None:
            if reply.kind == "close":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if reply.kind == "hang":
                stub.stopping.wait(reply.delay)
                self.close_connection = True
                return
            if reply.delay:
                stub.stopping.wait(reply.delay)
            status = reply.status if reply.kind == "status" else 200
            self.send_response(status)
            for name, value in reply.headers:
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            if reply.kind == "stream":
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self._stream(reply)
                return
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        def _stream(self, reply: Reply) -> None:
            for _ in range(reply.repeat):
                for start in range(0, len(reply.body), reply.chunk):
                    if stub.stopping.is_set():
                        return
                    piece = reply.body[start : start + reply.chunk]
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.flush()
                    if reply.pause:
                        stub.stopping.wait(reply.pause)
            self.wfile.write(b"0\r\n\r\n")

    return Handler


@dataclass
class StubServer:
    """Owns the HTTP server thread behind a ``QaStub``."""

    stub: QaStub
    server: ThreadingHTTPServer
    thread: threading.Thread

    def stop(self) -> None:
        """Stop serving and wake every sleeping handler."""
        self.stub.stopping.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


class _QuietServer(ThreadingHTTPServer):
    """Clients that hang up on purpose (timeouts, size limits) are not errors here."""

    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Say nothing: a reset connection is part of the faults under test."""


def start_stub(behaviour: Callable[[str, str], Reply] | None = None) -> StubServer:
    """Start a stub on a free loopback port (default behaviour: empty answers)."""
    stub = QaStub(url="", behaviour=behaviour or (lambda text, lang: ok(None)))
    server = _QuietServer(("127.0.0.1", 0), _handler(stub))
    stub.url = f"http://127.0.0.1:{server.server_address[1]}/gerbil"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    return StubServer(stub, server, thread)


@pytest.fixture
def qa_stubs() -> Iterator[Callable[..., QaStub]]:
    """Return a factory ``make(behaviour) -> QaStub``; every stub is stopped at teardown."""
    running: list[StubServer] = []

    def make(behaviour: Callable[[str, str], Reply] | None = None) -> QaStub:
        server = start_stub(behaviour)
        running.append(server)
        return server.stub

    yield make
    for server in running:
        server.stop()


@pytest.fixture
def qa_stub(qa_stubs: Callable[..., QaStub]) -> QaStub:
    """Return one running stub that answers every question with an empty answer."""
    return qa_stubs()


def wait_for(predicate: Callable[[], bool], timeout: float = 30.0) -> bool:
    """Poll ``predicate`` until it holds or ``timeout`` seconds pass."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


class ReplayEndpoint:
    """A tiny TEXT2SPARQL API of our own: answers ``GET /?dataset=&question=`` with a recorded
    system's query for that question (a real HTTP server in a thread; 404 for the unknown)."""

    def __init__(self, answers: list[dict[str, str]], gold: Any = None) -> None:
        """Replay ``answers`` (the client's answers file), found by dataset IRI and question
        text; with ``gold`` (a TEXT2SPARQL dataset) by the gold question's text of each qname."""
        queries = {(a["dataset"], a["question"]): a["query"] for a in answers}
        if gold is not None:
            by_qname = {a["qname"]: a["query"] for a in answers}
            queries = {
                (q.text2sparql.dataset, q.texts[0].text): by_qname[q.id]
                for q in gold.questions
                if q.id in by_qname
            }
        self.asked: list[tuple[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                params = parse_qs(urlsplit(self.path).query)
                key = (params.get("dataset", [""])[0], params.get("question", [""])[0])
                outer.asked.append(key)
                if key not in queries:
                    self.send_response(404)
                    self.end_headers()
                    return
                body = json.dumps({"dataset": key[0], "question": key[1], "query": queries[key]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

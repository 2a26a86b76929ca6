"""A real loopback HTTP server speaking the OpenAI ``/v1/chat/completions`` API, able to misbehave.

``LlmStub`` answers ``POST /v1/chat/completions``, as one JSON document or, when the request
asks for ``stream: true``, as server-sent events ending in ``data: [DONE]``. What it does for a
request is decided by a behaviour function ``(LlmRequest) -> LlmReply``. Faults: ``hang``
(never answers: a timeout), ``status`` (e.g. 500), ``raw`` (any body: malformed JSON, the wrong
shape), ``close`` (drops the connection), and streams without ``[DONE]``. ``refused_url`` is an
address where nothing listens. ``pipeline_script`` plays a well-behaved model for every stage of
the RAG pipeline, recognising the stage from the prompt; its parts can be replaced per test.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass(frozen=True)
class LlmReply:
    """What the stub does with one request."""

    kind: str = "ok"  # ok | status | hang | close | raw
    content: str = ""
    status: int = 200
    body: bytes = b""  # raw: the whole body; status: the error body
    delay: float = 0.0
    stream_done: bool = True  # streaming: end with data: [DONE]
    pieces: int = 3  # streaming: how many delta events carry the content


@dataclass(frozen=True)
class LlmRequest:
    """One request the stub received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def stream(self) -> bool:
        """Return whether the client asked for a stream."""
        return bool(self.body.get("stream"))

    @property
    def prompt(self) -> str:
        """Return the last user message."""
        users = [m["content"] for m in self.body.get("messages", []) if m.get("role") == "user"]
        return users[-1] if users else ""


@dataclass
class LlmStub:
    """A running stub: its base URL (``.../v1``) and the requests it received."""

    base_url: str
    behaviour: Callable[[LlmRequest], LlmReply]
    requests: list[LlmRequest] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, request: LlmRequest) -> None:
        """Remember a request (thread-safe)."""
        with self.lock:
            self.requests.append(request)

    def received(self) -> list[LlmRequest]:
        """Return a copy of the requests so far."""
        with self.lock:
            return list(self.requests)


def completion(content: str) -> bytes:
    """Return a non-streaming chat-completion document."""
    return json.dumps(
        {
            "id": "stub",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()


def stream_events(content: str, pieces: int, done: bool) -> list[bytes]:
    """Return the SSE events that stream ``content`` in ``pieces`` parts."""
    size = max(1, -(-len(content) // max(1, pieces)))
    parts = [content[i : i + size] for i in range(0, len(content), size)] or [""]
    events = [
        b"data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": p}}]}).encode()
        for p in parts
    ]
    if done:
        events.append(b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}')
        events.append(b"data: [DONE]")
    return [e + b"\n\n" for e in events]


def _handler(stub: LlmStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                body = {}
            request = LlmRequest(self.path, dict(self.headers.items()), body)
            stub.record(request)
            reply = stub.behaviour(request)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._send(reply, request)

        def _send(self, reply: LlmReply, request: LlmRequest) -> None:
            if reply.delay:
                stub.stopping.wait(reply.delay)
            if reply.kind == "hang":
                stub.stopping.wait(60)
                self.close_connection = True
                return
            if reply.kind == "close":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if reply.kind in ("status", "raw"):
                status = reply.status if reply.kind == "status" else 200
                self._plain(status, reply.body)
                return
            if request.stream:
                self._stream(reply)
                return
            self._plain(200, completion(reply.content))

        def _plain(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _stream(self, reply: LlmReply) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event in stream_events(reply.content, reply.pieces, reply.stream_done):
                self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

    return Handler


@dataclass
class LlmStubServer:
    """Owns the server thread behind an ``LlmStub``."""

    stub: LlmStub
    server: ThreadingHTTPServer
    thread: threading.Thread

    def stop(self) -> None:
        """Stop serving and wake any hanging handler."""
        self.stub.stopping.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def start_llm_stub(behaviour: Callable[[LlmRequest], LlmReply]) -> LlmStubServer:
    """Start a stub on a free loopback port."""
    stub = LlmStub(base_url="", behaviour=behaviour)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stub))
    server.daemon_threads = True
    server.block_on_close = False
    stub.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    return LlmStubServer(stub, server, thread)


# ---------------------------------------------------------------------------- a scripted model

_ARTICLE = re.compile(r"```\n(.*?)\n```", re.DOTALL)
_SNIPPET_LINE = re.compile(r"^- (.*) \[([^\]]+)\]$", re.MULTILINE)


def stage_of(prompt: str) -> str:
    """Return which pipeline stage a prompt belongs to."""
    for stage, start in (
        ("expand", "Write a search query"),
        ("extract", "Copy the sentences"),
        ("rerank", "Order the numbered snippets"),
        ("cited", "Answer in at most 150 words"),
        ("short", "Answer concisely"),
        ("exact", "Answer the question from the snippets"),
    ):
        if prompt.startswith(start):
            return stage
    return "unknown"


def shown_snippets(prompt: str) -> list[tuple[str, str]]:
    """Return the (text, pmid) lines an answer prompt showed."""
    return [(m.group(1), m.group(2)) for m in _SNIPPET_LINE.finditer(prompt)]


def default_extract(prompt: str) -> str:
    """Copy the article's second line (its abstract's first sentence) and invent one more."""
    article = _ARTICLE.search(prompt)
    lines = article.group(1).split("\n") if article else []
    abstract = lines[1] if len(lines) > 1 else ""
    first = abstract.split(". ")[0].rstrip(".") + "." if abstract else ""
    invented = "This sentence is not in the article at all."
    return json.dumps({"snippets": [s for s in (first, invented) if s]})


def default_cited(prompt: str) -> str:
    """Cite the first shown snippet, cite a PMID that was never shown, and cite nothing."""
    shown = shown_snippets(prompt)
    pmid = shown[0][1] if shown else "1"
    return (
        f"The first snippet supports this claim [{pmid}]. "
        "This claim cites an article that was never shown [99999999]. "
        "This claim cites nothing."
    )


@dataclass
class Script:
    """Replies per stage; each is a function of the prompt (replace any in a test)."""

    expand: Callable[[str], LlmReply] = lambda p: LlmReply(
        content='Here it is: ##aspirin AND ("myocardial infarction" OR "heart attack")##'
    )
    extract: Callable[[str], LlmReply] = lambda p: LlmReply(content=default_extract(p))
    rerank: Callable[[str], LlmReply] = lambda p: LlmReply(content='{"ranking": [1, 0]}')
    short: Callable[[str], LlmReply] = lambda p: LlmReply(
        content="Aspirin lowers the risk of another infarction."
    )
    cited: Callable[[str], LlmReply] = lambda p: LlmReply(content=default_cited(p))
    exact: Callable[[str], LlmReply] = lambda p: LlmReply(content='{"answer": "yes"}')

    def __call__(self, request: LlmRequest) -> LlmReply:
        stage = stage_of(request.prompt)
        handler = getattr(self, stage, None)
        if handler is None:
            return LlmReply(kind="status", status=400, body=b'{"error": "unknown prompt"}')
        reply: LlmReply = handler(request.prompt)
        return reply


@pytest.fixture
def llm_stubs() -> Iterator[Callable[[Callable[[LlmRequest], LlmReply]], LlmStub]]:
    """Return a factory ``make(behaviour) -> LlmStub``; every stub stops at teardown."""
    running: list[LlmStubServer] = []

    def make(behaviour: Callable[[LlmRequest], LlmReply]) -> LlmStub:
        server = start_llm_stub(behaviour)
        running.append(server)
        return server.stub

    yield make
    for server in running:
        server.stop()


@pytest.fixture
def llm_stub(llm_stubs: Callable[[Callable[[LlmRequest], LlmReply]], LlmStub]) -> LlmStub:
    """Return a stub playing a well-behaved model for every pipeline stage."""
    return llm_stubs(Script())


@pytest.fixture
def refused_url() -> str:
    """Return a ``.../v1`` base URL on a loopback port where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"

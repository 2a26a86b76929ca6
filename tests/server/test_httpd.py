"""The HTTP server under abuse: one address holding hundreds of idle or slow connections, slow
request heads, idle keep-alive connections and oversized bodies, on a real waitress server
(``server.httpd``) over loopback. The attacker uses the source address 127.0.0.2, the reader
127.0.0.1 (both loopback on Linux)."""

from __future__ import annotations

import contextlib
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest

from server import httpd
from server.config import ServerConfig

SETTINGS = replace(
    ServerConfig(),
    threads=4,
    connections_per_client=20,
    header_timeout_seconds=1.0,
    request_timeout_seconds=2.0,
    idle_timeout_seconds=1.0,
    max_request_body_bytes=10_000,
    max_upload_bytes=100_000,
)


def _app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    body = environ["wsgi.input"].read()
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"read %d" % len(body)]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    servers, events, adjustments = httpd.create_servers(_app, SETTINGS, "127.0.0.1", 0)
    stop = threading.Event()
    thread = threading.Thread(
        target=httpd.run, args=(servers, events, adjustments, stop), daemon=True
    )
    thread.start()
    host, port = httpd.bound_addresses(servers)[0]
    yield f"http://{host}:{port}"
    # The loop closes what it polls itself (closing it from here would race its poll).
    httpd.stop_soon(servers, stop)
    thread.join(30)


def _connect(url: str, source: str = "127.0.0.2") -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.bind((source, 0))
    sock.settimeout(15)  # generous: a read that waits this long means nobody closed it
    sock.connect((host, int(port)))
    return sock


def _read_until(sock: socket.socket, marker: bytes) -> bool:
    """Read until ``marker`` arrived (an answer may come in several segments) or the peer closed."""
    received = b""
    while marker not in received:
        chunk = sock.recv(4096)
        if not chunk:
            return False
        received += chunk
    return True


def _served(url: str) -> bool:
    # Answered at all: without the per-client cap the server stops accepting once the held
    # connections reach its connection limit, and this request waits until its timeout. (The
    # time it takes is not asserted: on a loaded machine any bound is a guess.)
    return httpx.get(url + "/", timeout=30).status_code == 200


def test_one_address_holding_300_connections_leaves_others_served(url: str) -> None:
    held = []
    refused = 0
    for n in range(300):
        sock = _connect(url)
        if n % 2:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # a head that never ends
        held.append(sock)
    try:
        served = [_served(url) for _ in range(20)]
        for sock in held:
            try:
                data = sock.recv(200)
            except TimeoutError:
                continue
            refused += b"503" in data
        assert all(served)
        assert refused >= 300 - SETTINGS.connections_per_client
    finally:
        for sock in held:
            sock.close()


def test_a_request_head_sent_slowly_is_cut_off(url: str) -> None:
    sock = _connect(url)
    try:
        for piece in (b"GET / HTTP/1.1\r\n", b"Host: x\r\n", b"X-A: 1\r\n", b"X-B: 2\r\n"):
            sock.sendall(piece)
            time.sleep(0.6)
    except OSError:
        pass  # closed under us: what should happen
    # Closed by the server (without the header timeout the read below would wait for the
    # socket's own timeout and raise).
    with contextlib.suppress(ConnectionResetError):
        assert sock.recv(100) == b""
    sock.close()


def test_an_idle_keep_alive_connection_is_closed(url: str) -> None:
    sock = _connect(url)
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    received = sock.recv(1000)
    assert b"200 OK" in received
    # The rest of the answer, then the close once idle (without it the read would wait for
    # the socket's own timeout and raise).
    while chunk := sock.recv(1000):
        received += chunk
    assert received.endswith(b"read 0")
    sock.close()


@pytest.mark.parametrize(
    ("path", "length", "refused"),
    [
        ("/sparql", 10_001, True),
        ("/sparql", 10_000, False),
        ("/upload/dataset", 100_001, True),
        ("/upload/dataset", 50_000, False),
    ],
)
def test_a_body_over_the_limit_of_its_path_is_refused_before_it_is_read(
    url: str, path: str, length: int, refused: bool
) -> None:
    sock = _connect(url, "127.0.0.3")
    try:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n".encode()
        )
        if refused:
            # Answered before the body was sent (a server that waits for it never answers).
            assert b"413" in sock.recv(200)
        else:
            # Read and answered (a refusal would answer 413 and close instead).
            sock.sendall(b"x" * length)
            assert _read_until(sock, f"read {length}".encode())
    finally:
        sock.close()


def test_a_chunked_body_over_the_limit_is_cut(url: str) -> None:
    sock = _connect(url, "127.0.0.4")
    try:
        sock.sendall(b"POST /sparql HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"x" * 4000
        for _ in range(4):
            sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        assert b"413" in sock.recv(200)
    finally:
        sock.close()


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_a_request_framed_by_both_length_and_chunks_is_refused(url: str, version: str) -> None:
    # Issue 41: over HTTP/1.0 waitress read the body by its Content-Length and served what
    # followed (here the rest of the chunked body: a second request) as a request of its own.
    smuggled = b"GET /second HTTP/1.1\r\nHost: x\r\n\r\n"
    chunked = b"%x\r\n" % len(smuggled) + smuggled + b"\r\n0\r\n\r\n"
    sock = _connect(url, "127.0.0.5")
    try:
        sock.sendall(
            f"POST /sparql HTTP/{version}\r\nHost: x\r\nConnection: keep-alive\r\n"
            f"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
            + chunked
        )
        received = b""
        while chunk := sock.recv(4096):
            received += chunk
        assert received.startswith(b"HTTP/1.") and b" 400 " in received.split(b"\r\n")[0]
        # one answer, then the connection closed
        assert len(re.findall(rb"(?:^|\r\n)HTTP/1\.[01] \d{3} ", received)) == 1, received
    finally:
        sock.close()


def test_half_sent_requests_reopened_at_once_leave_room_for_others() -> None:
    # Issue 41: half-sent requests from 40 addresses (under the per-address cap), reopened as
    # soon as closed, held every connection: only idle ones were closed when crowded.
    settings = replace(
        SETTINGS,
        connection_limit=60,
        connections_per_client=18,
        header_timeout_seconds=30.0,  # only the pressure of the crowd may cut them here
        request_timeout_seconds=60.0,
    )
    servers, events, adjustments = httpd.create_servers(_app, settings, "127.0.0.1", 0)
    stop = threading.Event()
    thread = threading.Thread(
        target=httpd.run, args=(servers, events, adjustments, stop), daemon=True
    )
    thread.start()
    host, port = httpd.bound_addresses(servers)[0]
    url = f"http://{host}:{port}"
    done = threading.Event()

    def attacker(source: str) -> None:
        held: list[socket.socket] = []
        while not done.is_set():
            for sock in list(held):
                try:
                    sock.settimeout(0.01)
                    if sock.recv(100) == b"":
                        raise OSError("closed")
                except TimeoutError:
                    continue
                except OSError:
                    held.remove(sock)
                    sock.close()
            while len(held) < 17 and not done.is_set():
                try:
                    sock = _connect(url, source)
                    sock.sendall(b"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Le")
                except OSError:
                    break
                held.append(sock)
            time.sleep(0.05)
        for sock in held:
            sock.close()

    attackers = [
        threading.Thread(target=attacker, args=(f"127.0.1.{n}",), daemon=True) for n in range(1, 5)
    ]
    for worker in attackers:
        worker.start()
    try:
        time.sleep(2.0)  # 68 half-sent connections want in; 60 may be open
        answered = 0
        for _ in range(12):
            try:
                if httpx.get(url + "/", timeout=4).status_code == 200:
                    answered += 1
            except httpx.HTTPError:
                pass
        assert answered == 12
    finally:
        done.set()
        for worker in attackers:
            worker.join(10)
        httpd.stop_soon(servers, stop)
        thread.join(10)


def test_waking_a_stopped_loop_is_harmless() -> None:
    # The loop closes its trigger pipe when it ends; a thread that wakes it afterwards (a
    # teardown's stop_soon, a worker thread finishing a response) must not write to the closed
    # descriptor (EBADF, or worse, a file that took its number since).
    servers, events, adjustments = httpd.create_servers(_app, SETTINGS, "127.0.0.1", 0)
    stop = threading.Event()
    thread = threading.Thread(target=httpd.run, args=(servers, events, adjustments, stop))
    thread.start()
    httpd.stop_soon(servers, stop)
    thread.join(30)
    assert not thread.is_alive()
    httpd.stop_soon(servers, stop)
    servers[0].pull_trigger()
    assert not events

"""Connection workers (``server.handoff``) through the real server: a connection the SPARQL
front answered a query on is taken over by a worker, which answers what follows itself and gives
back, unread, whatever it does not answer; every limit still holds on such a connection (time,
memory, rate, connections per client, idle time), private data never reaches it, and a client
reads its own writes. (That its answers equal the view's, header by header, is
``tests/server/test_front.py``'s comparison, run with connection workers too.)"""

from __future__ import annotations

import itertools
import socket
import threading
import time
from typing import Any

import httpx
import pytest
from pyoxigraph import Literal, NamedNode, Quad

from tests.plugins.server import BASE, OWNER_TOKEN, LiveServer

ASK = "ASK { ?s ?p ?o }"
SLOW = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"
HUNGRY = (
    'SELECT (STRLEN(?v24) AS ?n) WHERE { BIND("'
    + "a" * 1024
    + '" AS ?v0) '
    + " ".join(f"BIND(CONCAT(?v{i}, ?v{i}) AS ?v{i + 1})" for i in range(24))
    + " }"
)


def _ready(live: LiveServer) -> LiveServer:
    live.services.pool.start()
    assert live.services.pool.wait_ready(60)
    live.services.view(timeout=60)
    assert live.front is not None and live.front.owners is not None
    return live


def _ask(client: httpx.Client, query: str = ASK, **headers: str) -> httpx.Response:
    return client.post(
        "/sparql",
        content=query.encode(),
        headers={"Content-Type": "application/sparql-query", **headers},
    )


def _taken(live: LiveServer, client: httpx.Client) -> None:
    """Have the front answer one query on ``client``'s connection, so a worker takes it."""
    before = live.front.owners.handed
    assert _ask(client).status_code == 200
    deadline = time.monotonic() + 5
    while live.front.owners.handed == before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert live.front.owners.handed == before + 1


def test_a_taken_connection_gives_back_what_it_does_not_answer(make_live_server: Any) -> None:
    live = _ready(make_live_server(sparql_connection_workers=2, sparql_requests_per_minute=0))
    with httpx.Client(base_url=live.url, timeout=30) as client:
        _taken(live, client)
        answered = live.front.answered
        for _ in range(5):
            response = _ask(client)
            assert response.status_code == 200 and response.json()["boolean"] is True
        assert live.front.answered == answered  # the worker answered those
        # A page, a conditional request, a refused query and a malformed one: each goes back
        # unread and is answered here as before, on the same connection.
        page = client.get("/", headers={"Accept": "text/html"})
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        _taken(live, client)
        etag = client.get("/sparql", params={"query": ASK}).headers["etag"]
        again = client.get("/sparql", params={"query": ASK}, headers={"If-None-Match": etag})
        assert again.status_code == 304
        _taken(live, client)
        refused = _ask(client, "SELECT * WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }")
        assert refused.status_code == 400
        assert refused.json()["type"].endswith("#FederationRefused")
        _taken(live, client)
        broken = _ask(client, "SELECT WHERE {")
        assert broken.status_code == 400 and broken.json()["type"].endswith("#MalformedQuery")
        assert _ask(client).status_code == 200
    assert live.front.owners.given_back >= 4


def test_private_experiments_never_reach_a_taken_connection(make_live_server: Any) -> None:
    live = _ready(make_live_server(sparql_connection_workers=2, sparql_requests_per_minute=0))
    query = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"
    private = [p.graph.value for p in live.services.index.private()]
    assert len(private) == 1
    with httpx.Client(base_url=live.url, timeout=30) as client:
        _taken(live, client)
        answered = live.front.answered
        anonymous = {b["g"]["value"] for b in _ask(client, query).json()["results"]["bindings"]}
        assert live.front.answered == answered  # a worker answered it
        # The owner's token, by bearer or parameter, on the same connection: given back,
        # answered by the view over the reader's token view.
        bearer = _ask(client, query, Authorization=f"Bearer {OWNER_TOKEN}").json()
        by_bearer = {b["g"]["value"] for b in bearer["results"]["bindings"]}
        parameter = client.post(
            "/sparql",
            params={"token": OWNER_TOKEN},
            content=query.encode(),
            headers={"Content-Type": "application/sparql-query"},
        ).json()
        by_parameter = {b["g"]["value"] for b in parameter["results"]["bindings"]}
        again = {b["g"]["value"] for b in _ask(client, query).json()["results"]["bindings"]}
    assert anonymous and private[0] not in anonymous and again == anonymous
    assert by_bearer == by_parameter == anonymous | {private[0]}


def test_a_slow_query_holds_only_its_connection_and_stops_at_the_limit(
    make_live_server: Any,
) -> None:
    live = _ready(
        make_live_server(
            sparql_connection_workers=2,
            query_timeout_seconds=1.5,
            sparql_requests_per_minute=0,
            queries_per_client=4,
        )
    )
    owners = live.front.owners
    with (
        httpx.Client(base_url=live.url, timeout=30) as slow,
        httpx.Client(base_url=live.url, timeout=30) as quick,
    ):
        _taken(live, slow)
        _taken(live, quick)
        found: dict[str, Any] = {}

        def _slow() -> None:
            started = time.monotonic()
            found["answer"] = _ask(slow, SLOW)
            found["seconds"] = time.monotonic() - started

        thread = threading.Thread(target=_slow)
        thread.start()
        time.sleep(0.2)
        times = []
        while thread.is_alive():
            started = time.monotonic()
            assert _ask(quick).status_code == 200
            times.append(time.monotonic() - started)
        thread.join()
        answer = found["answer"]
        assert answer.status_code == 503, answer.text
        assert answer.json()["type"].endswith("#QueryTimeout")
        assert answer.headers["retry-after"] == "2"
        assert 1.4 < found["seconds"] < 10
        # the other connection was answered throughout, none waiting for the slow query
        assert len(times) >= 5 and max(times) < 1.0, times
        # the slow query's connection goes on, and so do new ones (the worker was replaced)
        assert _ask(slow).status_code == 200
    with httpx.Client(base_url=live.url, timeout=30) as fresh:
        for _ in range(3):
            assert _ask(fresh).status_code == 200
    assert len(owners._links) + len(owners._started) >= 1


def test_a_worker_out_of_memory_answers_503_and_is_replaced(make_live_server: Any) -> None:
    live = _ready(
        make_live_server(
            sparql_connection_workers=2,
            query_memory_mb=1024,
            query_timeout_seconds=20.0,
            sparql_requests_per_minute=0,
        )
    )
    with httpx.Client(base_url=live.url, timeout=60) as client:
        _taken(live, client)
        hungry = client.post("/sparql", data={"query": HUNGRY})
        assert hungry.status_code == 503, hungry.text
        assert hungry.json()["type"].endswith("#QueryOutOfMemory")
        assert hungry.json()["memory_limit_mb"] == 1024
        assert _ask(client).status_code == 200
    with httpx.Client(base_url=live.url, timeout=30) as fresh:
        _taken(live, fresh)
        assert _ask(fresh).status_code == 200


def test_a_client_reads_its_own_writes_on_a_taken_connection(make_live_server: Any) -> None:
    live = _ready(make_live_server(sparql_connection_workers=2, sparql_requests_per_minute=0))
    graph = NamedNode(f"{BASE}/graph/vocab")
    marker = NamedNode("http://example.org/written-just-now")
    query = f"ASK {{ <{marker.value}> ?p ?o }}"
    with httpx.Client(base_url=live.url, timeout=30) as client:
        _taken(live, client)
        assert _ask(client, query).json()["boolean"] is False
        assert _ask(client, query).json()["boolean"] is False
        live.services.store.add([Quad(marker, marker, Literal("x"), graph)])
        live.services.notify_write()
        assert _ask(client, query).json()["boolean"] is True


def test_the_rate_of_a_client_holds_on_a_taken_connection(make_live_server: Any) -> None:
    # 8 a minute: bursts of 2. The first query (the front's) and one more pass, then 429.
    live = _ready(make_live_server(sparql_connection_workers=2, sparql_requests_per_minute=8))
    with httpx.Client(base_url=live.url, timeout=30) as client:
        statuses = [_ask(client).status_code for _ in range(5)]
    assert statuses == [200, 200, 429, 429, 429], statuses


def test_the_rate_of_a_forwarded_client_holds_on_a_taken_connection(
    make_live_server: Any,
) -> None:
    live = _ready(
        make_live_server(
            sparql_connection_workers=2, sparql_requests_per_minute=8, trusted_proxy="127.0.0.1"
        )
    )
    with httpx.Client(base_url=live.url, timeout=30) as proxy:
        first = [_ask(proxy, **{"X-Forwarded-For": "10.0.0.7"}).status_code for _ in range(3)]
        other = [_ask(proxy, **{"X-Forwarded-For": "10.0.0.8"}).status_code for _ in range(3)]
    assert first == [200, 200, 429] and other == [200, 200, 429], (first, other)


def test_connections_held_by_workers_count_for_their_client(make_live_server: Any) -> None:
    live = _ready(
        make_live_server(
            sparql_connection_workers=2, connections_per_client=3, sparql_requests_per_minute=0
        )
    )
    clients = [httpx.Client(base_url=live.url, timeout=30) for _ in range(3)]
    try:
        for client in clients:
            _taken(live, client)
        assert live.servers[0].elsewhere == 3
        with socket.create_connection(("127.0.0.1", int(live.url.rsplit(":", 1)[1]))) as extra:
            extra.settimeout(10)
            assert extra.recv(100).startswith(b"HTTP/1.1 503")
    finally:
        for client in clients:
            client.close()
    deadline = time.monotonic() + 10
    while live.servers[0].elsewhere and time.monotonic() < deadline:
        time.sleep(0.05)
    assert live.servers[0].elsewhere == 0
    assert live.servers[0].open_per_client.get("127.0.0.1", 0) == 0


def test_an_idle_taken_connection_is_closed(make_live_server: Any) -> None:
    live = _ready(
        make_live_server(
            sparql_connection_workers=2, idle_timeout_seconds=1, sparql_requests_per_minute=0
        )
    )
    port = int(live.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port)) as sock:
        body = ASK.encode()
        request = (
            b"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-query\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body) + body
        )
        sock.sendall(request)
        sock.settimeout(10)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        time.sleep(0.3)
        sock.sendall(request)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")  # a worker's answer
        started = time.monotonic()
        assert sock.recv(100) == b""  # closed for idleness
        assert time.monotonic() - started < 5


@pytest.mark.parametrize("workers", [0, 2])
def test_the_setting_decides_whether_workers_take_connections(
    make_live_server: Any, workers: int
) -> None:
    live = make_live_server(sparql_connection_workers=workers)
    assert (live.front.owners is None) == (workers == 0)


def test_connection_workers_are_on_by_default(make_live_server: Any) -> None:
    # On since the fairness scenario holds with them (docs/server.md, "Measured again").
    live = make_live_server()
    assert live.front.owners is not None
    live.front.owners.tick()
    assert len(live.front.owners._links) == 2


def _post(query: str, *extra: bytes) -> bytes:
    body = query.encode()
    return (
        b"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-query\r\n"
        + b"".join(extra)
        + b"Content-Length: %d\r\n\r\n" % len(body)
        + body
    )


def _responses(sock: socket.socket, count: int) -> list[tuple[bytes, bytes]]:
    """Read ``count`` responses (status line, body) from ``sock``, framed by Content-Length."""
    data, found = b"", []
    while len(found) < count:
        end = data.find(b"\r\n\r\n")
        if end >= 0:
            head = data[:end].split(b"\r\n")
            length = next(
                int(h.split(b":")[1]) for h in head if h.lower().startswith(b"content-length:")
            )
            if len(data) >= end + 4 + length:
                found.append((head[0], data[end + 4 : end + 4 + length]))
                data = data[end + 4 + length :]
                continue
        chunk = sock.recv(65536)
        assert chunk, (found, data)
        data += chunk
    return found


def test_requests_sent_together_are_answered_in_order(make_live_server: Any) -> None:
    # A worker reads what came, answers the first request, and answers the next one already
    # there; one it does not answer (a page for a browser) goes back with its bytes and
    # everything after it, and the serving process answers those.
    live = _ready(make_live_server(sparql_connection_workers=2, sparql_requests_per_minute=0))
    port = int(live.url.rsplit(":", 1)[1])
    queries = ["ASK { ?s ?p ?o }", "ASK { <http://nothing.test/x> ?p ?o }", "SELECT (7 AS ?n) {}"]
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(20)
        handed = live.front.owners.handed
        sock.sendall(_post(queries[0]))
        assert _responses(sock, 1)[0][0] == b"HTTP/1.1 200 OK"
        deadline = time.monotonic() + 5
        while live.front.owners.handed == handed and time.monotonic() < deadline:
            time.sleep(0.01)
        assert live.front.owners.handed == handed + 1
        given = live.front.owners.given_back
        sock.sendall(b"".join(_post(q) for q in queries * 2))
        answered = _responses(sock, 6)
        assert live.front.owners.given_back == given  # all six answered by the worker
        sock.sendall(_post(queries[2], b"Accept: text/html\r\n") + _post(queries[1]))
        page, after = _responses(sock, 2)
        assert live.front.owners.given_back == given + 1
    bodies = [body for status, body in answered if status == b"HTTP/1.1 200 OK"]
    assert len(bodies) == 6
    assert [b'"boolean":true' in b for b in bodies] == [True, False, False] * 2
    assert [b'"boolean":false' in b for b in bodies] == [False, True, False] * 2
    assert all(b'"value":"7"' in b for b in bodies[2::3])
    assert page[0] == b"HTTP/1.1 200 OK" and b"<html" in page[1].lower()
    assert after[0] == b"HTTP/1.1 200 OK" and b'"boolean":false' in after[1]


def test_answers_of_one_round_reach_their_own_connections(make_live_server: Any) -> None:
    # A worker sends the answers of one round of ready connections together, after it
    # evaluated them all (server.handoff.worker.BATCH_SECONDS): each must still reach the
    # connection that asked, and one that asked to close is closed after its answer.
    live = _ready(make_live_server(sparql_connection_workers=1, sparql_requests_per_minute=0))
    port = int(live.url.rsplit(":", 1)[1])
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(6)]
    try:
        for sock in socks:
            sock.settimeout(20)
            handed = live.front.owners.handed
            sock.sendall(_post(ASK))
            assert _responses(sock, 1)[0][0] == b"HTTP/1.1 200 OK"
            deadline = time.monotonic() + 5
            while live.front.owners.handed == handed and time.monotonic() < deadline:
                time.sleep(0.01)
            assert live.front.owners.handed == handed + 1
        answered, given = live.front.answered, live.front.owners.given_back
        for rounds in range(3):
            for k, sock in enumerate(socks[:-1]):
                sock.sendall(_post(f"SELECT ({100 * rounds + k} AS ?n) {{}}"))
            for k, sock in enumerate(socks[:-1]):
                ((status, body),) = _responses(sock, 1)
                assert status == b"HTTP/1.1 200 OK"
                assert b'"value":"%d"' % (100 * rounds + k) in body, body
        last = socks[-1]
        last.sendall(_post("SELECT (42 AS ?n) {}", b"Connection: close\r\n"))
        ((status, body),) = _responses(last, 1)
        assert status == b"HTTP/1.1 200 OK" and b'"value":"42"' in body
        last.settimeout(5)  # well under the idle timeout (15 s) that would close it too
        assert last.recv(1) == b""  # closed after its answer
        assert live.front.answered == answered  # the worker answered all 16
        assert live.front.owners.given_back == given
    finally:
        for sock in socks:
            sock.close()


def _take(live: LiveServer, sock: socket.socket) -> None:
    """Have the front answer one query on ``sock``, so a worker takes the connection."""
    handed = live.front.owners.handed
    sock.sendall(_post(ASK))
    assert _responses(sock, 1)[0][0] == b"HTTP/1.1 200 OK"
    deadline = time.monotonic() + 5
    while live.front.owners.handed == handed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert live.front.owners.handed == handed + 1


def test_a_request_that_arrives_in_parts_is_answered_by_the_worker(
    make_live_server: Any,
) -> None:
    # The worker reads each part as it comes and keeps it (server.handoff.worker: bytes are
    # read once): the request, whole only after the third part, is answered from them.
    live = _ready(make_live_server(sparql_connection_workers=1, sparql_requests_per_minute=0))
    port = int(live.url.rsplit(":", 1)[1])
    request = _post("SELECT (31 AS ?n) {}")
    cuts = [0, 17, request.index(b"\r\n\r\n") + 6, len(request)]
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(20)
        _take(live, sock)
        answered, given = live.front.answered, live.front.owners.given_back
        for start, end in itertools.pairwise(cuts):
            sock.sendall(request[start:end])
            time.sleep(0.2)
        ((status, body),) = _responses(sock, 1)
        assert status == b"HTTP/1.1 200 OK" and b'"value":"31"' in body, body
        assert live.front.answered == answered and live.front.owners.given_back == given


def test_a_request_in_part_goes_back_with_its_bytes(make_live_server: Any) -> None:
    # One worker holds two connections. One has sent half a request (the worker read it)
    # when the other's query turns slow: the worker gives the first back with the half it
    # read, the rest comes later, and the serving process answers the whole request. The
    # slow query's own request goes back at the time limit (answered 503 there).
    live = _ready(
        make_live_server(
            sparql_connection_workers=1,
            query_timeout_seconds=1.5,
            sparql_requests_per_minute=0,
            queries_per_client=4,
        )
    )
    port = int(live.url.rsplit(":", 1)[1])
    request = _post("SELECT (32 AS ?n) {}")
    half = request.index(b"\r\n\r\n") + 6
    with (
        socket.create_connection(("127.0.0.1", port)) as slow,
        socket.create_connection(("127.0.0.1", port)) as part,
    ):
        for sock in (slow, part):
            sock.settimeout(30)
            _take(live, sock)
        given = live.front.owners.given_back
        part.sendall(request[:half])
        time.sleep(0.3)  # read by the worker, which waits for the rest
        assert live.front.owners.given_back == given
        slow.sendall(_post(SLOW))
        deadline = time.monotonic() + 5
        while live.front.owners.given_back == given and time.monotonic() < deadline:
            time.sleep(0.01)
        assert live.front.owners.given_back == given + 1  # the half request's connection
        part.sendall(request[half:])
        ((status, body),) = _responses(part, 1)
        assert status == b"HTTP/1.1 200 OK" and b'"value":"32"' in body, body
        ((status, body),) = _responses(slow, 1)
        assert status.startswith(b"HTTP/1.1 503") and b"#QueryTimeout" in body, body
        assert live.front.owners.given_back == given + 2

"""The SPARQL front (``server.front``) against the Flask view, through the real server.

Every test runs ``qabench serve``'s server (waitress, the connection limits, the front) in the
test process: the front must answer what it takes exactly as the view would, hand everything
else to the view, and keep every limit (time, rate, slots, fairness) on its event loop.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import httpx
import pytest

from tests.plugins.server import LiveServer

QUERIES = {
    "ask": "ASK { ?s ?p ?o }",
    "select": "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o",
    "construct": "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o LIMIT 40",
    "describe": "DESCRIBE ?s WHERE { ?s a ?type } ORDER BY ?s LIMIT 3",
}
ACCEPTS = (
    None,
    "application/sparql-results+json",
    "application/sparql-results+xml",
    "text/csv",
    "text/tab-separated-values",
    "text/turtle",
    "application/n-triples",
    "application/ld+json",
    "*/*",
)
METHODS = ("get", "form", "body")
# Headers whose values differ between two servers or two requests by design (the start of
# each server is its Last-Modified until a write).
VARYING = {"date", "x-request-id", "etag", "last-modified"}
SLOW = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"


def _send(
    client: httpx.Client, method: str, query: str, accept: str | None, gzip: bool, **extra: Any
) -> httpx.Response:
    headers = {"Accept-Encoding": "gzip" if gzip else "identity"}
    if accept is not None:
        headers["Accept"] = accept
    headers.update(extra.pop("headers", {}))
    if method == "get":
        return client.get("/sparql", params={"query": query, **extra}, headers=headers)
    if method == "form":
        return client.post("/sparql", data={"query": query, **extra}, headers=headers)
    headers["Content-Type"] = "application/sparql-query"
    return client.post("/sparql", content=query.encode(), headers=headers, params=extra)


def _shape(response: httpx.Response) -> tuple[int, dict[str, str], bytes, str]:
    assert response.headers.get("last-modified", "").endswith(" GMT"), response.text[:300]
    headers = {k.lower(): v for k, v in response.headers.items() if k.lower() not in VARYING}
    etag = response.headers.get("etag", "")
    # "<instance>-<generation>-<digest>[-gzip]": the instance differs between two servers.
    return response.status_code, headers, response.content, etag.partition("-")[2]


def _ready(live: LiveServer) -> LiveServer:
    # Until the workers and the SPARQL view of the current generation are ready, every query
    # goes to the view (which waits for them on a thread).
    live.services.pool.start()
    assert live.services.pool.wait_ready(60)
    live.services.view(timeout=60)
    return live


@pytest.fixture(params=[0, 2], ids=["front", "front+connection-workers"])
def pair(make_live_server: Any, request: pytest.FixtureRequest) -> tuple[LiveServer, LiveServer]:
    """Two servers over the same data: one with the front (with or without connection
    workers, ``server.handoff``), one without."""
    settings = {
        "max_result_rows": 5,
        "query_timeout_seconds": 10.0,
        "queries_per_client": 4,
        "sparql_requests_per_minute": 100_000,
    }
    with_front = _ready(make_live_server(sparql_connection_workers=request.param, **settings))
    without = _ready(make_live_server(sparql_front=False, **settings))
    assert with_front.front is not None and without.front is None
    return with_front, without


def test_the_front_answers_as_the_view_does(pair: tuple[LiveServer, LiveServer]) -> None:
    with_front, without = pair
    cases = 0
    with (
        httpx.Client(base_url=with_front.url, timeout=30) as fast,
        httpx.Client(base_url=without.url, timeout=30) as slow,
    ):
        for name, query in QUERIES.items():
            for method in METHODS:
                for accept in ACCEPTS:
                    for gzip in (False, True):
                        got = _shape(_send(fast, method, query, accept, gzip))
                        want = _shape(_send(slow, method, query, accept, gzip))
                        assert got[1] == want[1], (name, method, accept, gzip)
                        assert got == want, (name, method, accept, gzip)
                        assert got[0] == 200
                        cases += 1
        # format= parameters, as SPARQLWrapper sends them
        for method in METHODS:
            got = _shape(_send(fast, method, QUERIES["select"], None, True, format="xml"))
            want = _shape(_send(slow, method, QUERIES["select"], None, True, format="xml"))
            assert got == want and got[0] == 200
            cases += 1
        truncated = _send(fast, "get", QUERIES["select"], None, False)
        assert truncated.headers["x-result-truncated"] == "true"
        assert truncated.headers["x-result-row-limit"] == "5"
    assert cases == len(QUERIES) * len(METHODS) * len(ACCEPTS) * 2 + len(METHODS) == 219
    front = with_front.front
    # Every one of them was answered on the loop or by a connection worker: none needed a
    # thread. With connection workers, the front answered the first query of the connection
    # (and one after each hand-back: none here) and the workers the rest.
    if front.owners is None:
        assert front.answered == cases + 1 and front.handed_over == 0
    else:
        assert front.handed_over == 0 and front.owners.given_back == 0
        assert front.answered == front.owners.handed == 1


def fast_client(live: LiveServer) -> httpx.Client:
    return httpx.Client(base_url=live.url, timeout=30)


def test_errors_and_refusals_are_the_views(pair: tuple[LiveServer, LiveServer]) -> None:
    with_front, without = pair
    cases = [
        # Oxigraph refuses it in the worker: the front hands the outcome to the view.
        ("get", "SELECT * WHERE { ?s ?p }", None, True),
        ("body", "ASK { ?s ?p ?o . FILTER(?o = ) }", "application/sparql-results+json", True),
        # Refused before a worker: the front does not take these at all.
        ("get", "SELECT * WHERE { ?s ?p ?o } LIMIT", "image/png", False),
        ("get", "ASK { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }", None, False),
        ("form", "ASK { ?s ?p ?o }", "image/png", False),
        ("get", "DELETE WHERE { ?s ?p ?o }", None, False),
    ]
    with fast_client(with_front) as fast, fast_client(without) as slow:
        for method, query, accept, handed in cases:
            before = with_front.front.handed_over
            got, want = (
                _send(fast, method, query, accept, False),
                _send(slow, method, query, accept, False),
            )
            assert got.status_code == want.status_code >= 400, query
            assert got.headers["content-type"] == want.headers["content-type"]
            assert got.json()["type"] == want.json()["type"]
            assert got.json()["status"] == got.status_code
            assert with_front.front.handed_over == before + handed, query
    assert with_front.front.answered == 0


def _in_background(live: LiveServer, query: str) -> tuple[threading.Thread, dict[str, Any]]:
    """Send ``query`` from a thread of its own; the dict gets its response."""
    answers: dict[str, Any] = {}

    def _send_it() -> None:
        with fast_client(live) as client:
            answers["response"] = client.get("/sparql", params={"query": query})

    thread = threading.Thread(target=_send_it)
    thread.start()
    return thread, answers


def test_the_time_limit_holds_on_the_loop_and_other_requests_go_on(make_live_server: Any) -> None:
    # The order of events is asserted, never their time: the other requests are answered while
    # the slow query still runs, and the slow query is then stopped by the time limit.
    live = _ready(make_live_server(query_timeout_seconds=3.0, queries_per_client=4))
    thread, answers = _in_background(live, SLOW)
    fair = live.services.pool.fair
    while fair.idle >= live.services.config.server.query_workers and thread.is_alive():
        time.sleep(0.01)  # until the slow query holds a worker
    with fast_client(live) as client:
        # the loop is not held by the running query: pages and other queries are answered
        assert client.get("/robots.txt").status_code == 200
        assert client.get("/sparql", params={"query": "ASK {}"}).json()["boolean"] is True
        assert "response" not in answers
    thread.join(120)
    slow = answers["response"]
    assert slow.status_code == 503 and slow.json()["type"].endswith("#QueryTimeout")
    assert slow.headers["retry-after"] == "3"
    # the killed worker is replaced; the endpoint answers again
    assert live.services.pool.wait_ready(30)
    with fast_client(live) as client:
        assert client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}).status_code == 200
    assert live.front.answered >= 2 and live.front.handed_over == 1


def test_queries_wait_for_a_worker_without_a_thread(make_live_server: Any) -> None:
    # 2 workers, 1 request thread: 8 queries at once all wait on the loop and are answered
    # (through the threads, at most one could wait: sparql_queue defaults to 2 for 1 thread).
    live = _ready(make_live_server(threads=1, queries_per_client=8, query_timeout_seconds=10.0))
    # a join of every quad with every quad, 20 times over: a few hundred milliseconds each
    values = " ".join(str(n) for n in range(20))
    query = f"SELECT (COUNT(*) AS ?n) WHERE {{ ?a ?b ?c . ?d ?e ?f . VALUES ?x {{ {values} }} }}"
    results: list[int] = []

    def _one() -> None:
        with fast_client(live) as client:
            results.append(client.get("/sparql", params={"query": query}).status_code)

    threads = [threading.Thread(target=_one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert results == [200] * 8
    assert live.front.answered == 8
    assert live.front.waited >= 4  # at most two ran at once, so most of them waited


def test_one_client_gets_its_slots_and_its_rate_on_the_loop(make_live_server: Any) -> None:
    live = _ready(
        make_live_server(
            queries_per_client=1, sparql_requests_per_minute=8, query_timeout_seconds=1.0
        )
    )
    thread, _ = _in_background(live, SLOW)
    time.sleep(0.3)
    with fast_client(live) as client:
        second = client.get("/sparql", params={"query": "ASK {}"})
    thread.join(30)
    assert second.status_code == 429 and second.headers["retry-after"] == "1"
    assert "already has 1 SPARQL queries running" in second.json()["detail"]
    # 8 a minute, bursts of 2: both used above; the next is refused, counted once
    with fast_client(live) as client:
        third = client.get("/sparql", params={"query": "ASK {}"})
    assert third.status_code == 429 and "a minute it may" in third.json()["detail"]
    assert live.front.answered == 0 and live.front.handed_over == 3


def test_credentials_and_conditions_go_to_the_view(make_live_server: Any) -> None:
    live = _ready(make_live_server())
    ask = {"query": "ASK { ?s ?p ?o }"}
    with fast_client(live) as client:
        first = client.get("/sparql", params=ask)
        assert first.status_code == 200 and live.front.answered == 1
        etag = first.headers["etag"]
        again = client.get("/sparql", params=ask, headers={"If-None-Match": etag})
        assert again.status_code == 304
        assert client.get("/sparql", params=ask, headers={"Authorization": "Bearer x"}).is_success
        assert client.get("/sparql", params={**ask, "token": "x"}).is_success
        assert client.get("/sparql", params=ask, headers={"Accept": "text/html"}).is_success
    assert live.front.answered == 1 and live.front.handed_over == 0


def _raw(live: LiveServer, data: bytes) -> bytes:
    port = int(live.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def _post(query: str, close: bool = False) -> bytes:
    body = query.encode()
    head = (
        "POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-query\r\n"
        f"Accept: text/csv\r\nContent-Length: {len(body)}\r\n"
    )
    return (head + ("Connection: close\r\n" if close else "") + "\r\n").encode() + body


def test_pipelined_requests_are_answered_in_order(make_live_server: Any) -> None:
    live = _ready(make_live_server(queries_per_client=4))
    first = "SELECT ?n WHERE { VALUES ?n { 1 } }"
    second = "SELECT ?n WHERE { VALUES ?n { 2 } }"
    reply = _raw(live, _post(first) + _post(second) + _post("ASK {}", close=True))
    assert reply.count(b"HTTP/1.1 200 OK") == 3
    assert reply.index(b"\r\n1\r\n") < reply.index(b"\r\n2\r\n") < reply.index(b"true")
    assert b"Connection: close" in reply
    assert live.front.answered == 3


def test_a_worker_killed_mid_query_is_a_503_and_replaced(make_live_server: Any) -> None:
    live = _ready(make_live_server(query_timeout_seconds=20.0, queries_per_client=4))
    pool = live.services.pool
    thread, seen = _in_background(live, SLOW)
    deadline = time.monotonic() + 10
    while pool.fair.idle == 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    busy = [w for w in list(pool._all) if w not in pool.fair._idle]
    assert len(busy) == 1
    busy[0].process.kill()
    thread.join(30)
    # A worker killed by a signal is reported as the kernel's OOM killer would have done it.
    assert seen["response"].status_code == 503
    assert seen["response"].json()["title"] == "Query out of memory"
    assert live.front.handed_over == 1
    assert pool.wait_ready(30)
    with fast_client(live) as client:
        assert client.get("/sparql", params={"query": "ASK {}"}).status_code == 200


def test_a_fault_of_the_front_closes_one_connection_and_the_server_goes_on(
    make_live_server: Any,
) -> None:
    live = _ready(make_live_server(queries_per_client=4))
    front = live.front

    def _broken(*_args: Any) -> None:
        raise RuntimeError("a bug in the front")

    front._answer = _broken
    with fast_client(live) as client, pytest.raises(httpx.TransportError):
        client.get("/sparql", params={"query": "ASK {}"})
    del front._answer
    with fast_client(live) as client:
        assert client.get("/sparql", params={"query": "ASK {}"}).json()["boolean"] is True
        assert client.get("/robots.txt").status_code == 200
    assert front.answered == 1
    assert live.services.pool.wait_ready(10)  # the worker was given back, not lost

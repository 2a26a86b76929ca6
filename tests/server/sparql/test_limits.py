"""Abuse of the public endpoint, as an outside client sees it (live server, httpx): SERVICE in
every spelling we know against a listener that records connections, deep nesting, the byte cap,
one client's concurrent queries and its request rate; other clients keep being served."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from server.sparql.isolation import allocator_library
from tests.plugins.server import LiveServer

PREFIX = "PREFIX ex: <http://example.org/> "
# Each query calls {url} with SERVICE; the left-hand side matches data, so an engine that
# reached the SERVICE would call it.
EVASIONS = [
    "SELECT * {{ ?s ?p ?o SERVICE <{url}> {{ ?a ?b ?c }} }}",
    "select * {{ ?s ?p ?o service silent <{url}> {{ ?a ?b ?c }} }}",
    "SELECT * {{ ?s ?p ?o SeRvIcE <{url}> {{ ?a ?b ?c }} }}",
    PREFIX + "SELECT * {{ ?s ?p ?o OPTIONAL {{ ?s ex:a\\# ?x }} SERVICE <{url}> {{ ?a ?b ?c }} }}",
    PREFIX + "SELECT * {{ ?s ?p ?o OPTIONAL {{ ?s ex:a\\' ?x }} SERVICE <{url}> {{ ?a ?b ?c }} }}",
    PREFIX
    + "SELECT * {{ ?s ?p ?o OPTIONAL {{ ?s ex:a\\%41 ?x }} SERVICE <{url}> {{ ?a ?b ?c }} }}",
    "SELECT * {{ ?s ?p ?o #\nSERVICE <{url}> {{ ?a ?b ?c }} }}",
    "SELECT * {{ ?s ?p ?o . # SERVICE <x> }}\n SERVICE <{url}> {{ ?a ?b ?c }} }}",
    'SELECT * {{ ?s ?p ?o FILTER(?o != "x\\"#") SERVICE <{url}> {{ ?a ?b ?c }} }}',
    "SELECT * {{ ?s ?p ?o FILTER(?o != '''a''') SERVICE <{url}> {{ ?a ?b ?c }} }}",
    "SELECT * {{ ?s ?p ?o \\u0053ERVICE <{url}> {{ ?a ?b ?c }} }}",
    "SELECT * {{ ?s ?p ?o SERVIC\\u0045 <{url}> {{ ?a ?b ?c }} }}",
    "SELECT * {{ {{ {{ ?s ?p ?o OPTIONAL {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }} }} }}",
    "SELECT * {{ ?s ?p ?o FILTER EXISTS {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }}",
    "SELECT * {{ ?s ?p ?o MINUS {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }}",
    "SELECT * {{ {{ ?s ?p ?o }} UNION {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }}",
    "SELECT * {{ GRAPH ?g {{ ?s ?p ?o }} SERVICE <{url}> {{ ?a ?b ?c }} }}",
    "ASK {{ {{ SELECT * {{ ?s ?p ?o SERVICE <{url}> {{}} }} }} }}",
    "CONSTRUCT {{ ?a ?b ?c }} WHERE {{ ?s ?p ?o SERVICE <{url}> {{ ?a ?b ?c }} }}",
    "DESCRIBE ?a WHERE {{ ?s ?p ?o SERVICE <{url}> {{ ?a ?b ?c }} }}",
    "BASE <{url}> SELECT * {{ ?s ?p ?o SERVICE <> {{ ?a ?b ?c }} }}",
    "PREFIX e: <{url}> SELECT * {{ ?s ?p ?o SERVICE e: {{ ?a ?b ?c }} }}",
    "SELECT * {{ ?s ?p ?o SERVICE\t<{url}>{{?a ?b ?c}} }}",
    "SELECT * {{ VALUES ?e {{ <{url}> }} ?s ?p ?o SERVICE ?e {{ ?a ?b ?c }} }}",
]


class Listener:
    """A loopback TCP listener that records every connection made to it."""

    def __init__(self) -> None:
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(64)
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}/"
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._socket.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._socket.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.close()


@pytest.fixture(scope="module")
def http(shared_live_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=shared_live_server.url, timeout=30) as client:
        yield client


def test_service_evasions_are_refused_and_nothing_connects(
    http: httpx.Client, listener: Listener
) -> None:
    answers = []
    for template in EVASIONS:
        query = template.format(url=listener.url)
        response = http.post("/sparql", data={"query": query})
        answers.append((response.status_code, response.json()["type"].rsplit("#")[-1], query))
    time.sleep(0.3)
    assert listener.connections == 0
    # Refused as federation, or as malformed when the parser reads the name differently.
    assert all(status == 400 for status, _, _ in answers), answers
    assert {kind for _, kind, _ in answers} <= {"FederationRefused", "MalformedQuery"}, answers
    assert sum(kind == "FederationRefused" for _, kind, _ in answers) >= len(EVASIONS) - 3


def test_evasion_count() -> None:
    assert len(EVASIONS) == 24


@pytest.mark.parametrize(
    ("query", "depth"),
    [
        ("SELECT * WHERE " + "{" * 40 + " ?s ?p ?o " + "}" * 40, 40),
        ("SELECT * WHERE { BIND(" + "CONCAT(" * 40 + "'a'" + ",'b')" * 40 + " AS ?x) }", 42),
        ("SELECT * WHERE { ?s ?p ?o FILTER(" + "(" * 60 + "1" + ")" * 60 + ") }", 62),
        ("ASK " + "{" * 32_000 + "}" * 32_000, 32_000),
        ("SELECT * WHERE { \\u007B" + "\\u007B" * 40 + "}" * 41 + " }", 42),
        ("PREFIX ex: <http://e/> ASK { ?s ex:a\\# " + "{" * 40 + "}" * 40 + " }", 41),
    ],
    ids=["braces", "concat", "parentheses", "64k-braces", "escaped-braces", "escaped-hash"],
)
def test_deep_nesting_is_refused_before_a_worker(
    http: httpx.Client, query: str, depth: int
) -> None:
    response = http.post("/sparql", data={"query": query})
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["type"].endswith("#QueryTooComplex")
    assert (problem["depth"], problem["limit"]) == (depth, 32)
    # The workers are unharmed: the next query is answered.
    assert http.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}).json()["boolean"] is True


BIG = "SELECT ?x WHERE {{ VALUES ?n {{ 1 2 3 4 5 6 7 8 9 10 }} BIND({value} AS ?x) }}"


def test_byte_cap_truncates_and_says_so(make_live_server: Any) -> None:
    live = make_live_server(max_result_bytes=2_000)
    with httpx.Client(base_url=live.url, timeout=30) as client:
        rows = client.get(
            "/sparql", params={"query": BIG.format(value='CONCAT(STR(?n), "' + "x" * 300 + '")')}
        )
        assert rows.status_code == 200
        assert len(rows.content) <= 2_000
        assert rows.headers["x-result-truncated"] == "true"
        assert rows.headers["x-result-byte-limit"] == "2000"
        assert 0 < int(rows.headers["x-result-rows"]) < 10
        assert len(rows.json()["results"]["bindings"]) == int(rows.headers["x-result-rows"])
        assert rows.json()["head"]["link"] == ["http://qabench.test/sparql#truncation"]
        # One row larger than the cap: no rows, announced the same way.
        one = client.get(
            "/sparql",
            params={"query": 'SELECT ?x WHERE { BIND(CONCAT("' + "y" * 5_000 + '") AS ?x) }'},
            headers={"Accept": "text/csv"},
        )
        assert one.headers["x-result-rows"] == "0" and one.headers["x-result-byte-limit"]
        assert len(one.content) <= 2_000
        graph = client.get(
            "/sparql",
            params={"query": "CONSTRUCT WHERE { ?s ?p ?o }"},
            headers={"Accept": "application/n-triples"},
        )
        assert len(graph.content) <= 2_000 and graph.headers["x-result-byte-limit"] == "2000"
        small = client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"})
        assert "x-result-truncated" not in small.headers


RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"


def _as(client: str) -> dict[str, str]:
    return {"X-Forwarded-For": client}


def test_one_client_cannot_hold_every_worker(make_live_server: Any) -> None:
    # The order of events, never their time (issue 37): while the runaway holds its worker
    # (waited for through the pool), its client's second query is refused and another client's
    # is answered.
    live = make_live_server(query_timeout_seconds=10.0, trusted_proxy="127.0.0.1")
    live.services.pool.start()
    assert live.services.pool.wait_ready(60)
    outcome: dict[str, httpx.Response] = {}

    def _runaway() -> None:
        with httpx.Client(base_url=live.url, timeout=120) as client:
            outcome["runaway"] = client.get(
                "/sparql", params={"query": RUNAWAY}, headers=_as("10.0.0.1")
            )

    thread = threading.Thread(target=_runaway)
    thread.start()
    fair = live.services.pool.fair
    while fair.idle >= live.services.config.server.query_workers and thread.is_alive():
        time.sleep(0.01)  # until the runaway holds a worker
    with httpx.Client(base_url=live.url, timeout=60) as client:
        second = client.get("/sparql", params={"query": RUNAWAY}, headers=_as("10.0.0.1"))
        other = client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}, headers=_as("10.0.0.2"))
        assert thread.is_alive()  # both answered while the runaway still ran
    thread.join(120)
    assert second.status_code == 429 and second.headers["retry-after"] == "1"
    assert second.json()["type"].endswith("#TooManyRequests")
    assert other.status_code == 200 and other.json()["boolean"] is True
    assert outcome["runaway"].status_code == 503


def test_request_rate_is_limited_per_client(make_live_server: Any) -> None:
    # 8 a minute: bursts of 2, then one every 7.5 s.
    live = make_live_server(sparql_requests_per_minute=8, trusted_proxy="127.0.0.1")
    ask = {"query": "ASK { ?s ?p ?o }"}
    with httpx.Client(base_url=live.url, timeout=30) as client:
        statuses = [client.get("/sparql", params=ask, headers=_as("10.0.0.1")) for _ in range(3)]
        assert [r.status_code for r in statuses] == [200, 200, 429]
        refused = statuses[-1]
        assert 1 <= int(refused.headers["retry-after"]) <= 8
        assert refused.json()["type"].endswith("#TooManyRequests")
        assert refused.headers["access-control-allow-origin"] == "*"
        # Another client is not affected; neither is the service description.
        assert client.get("/sparql", params=ask, headers=_as("10.0.0.2")).status_code == 200
        assert client.get("/sparql", headers=_as("10.0.0.1")).status_code == 200
        # IPv6 clients count per /64.
        v6 = [
            client.get("/sparql", params=ask, headers=_as(f"2001:db8::{n}")).status_code
            for n in (1, 2, 3)
        ]
        assert v6 == [200, 200, 429]


# Each BIND doubles the string: 1 KiB * 2**24 = 16 GiB, far past any worker's limit.
HUNGRY = (
    'SELECT (STRLEN(?v24) AS ?n) WHERE { BIND("'
    + "a" * 1024
    + '" AS ?v0) '
    + " ".join(f"BIND(CONCAT(?v{i}, ?v{i}) AS ?v{i + 1})" for i in range(24))
    + " }"
)


def test_a_query_over_the_memory_limit_is_a_503_and_its_worker_is_replaced(
    make_live_server: Any,
) -> None:
    live = make_live_server(
        query_memory_mb=1024, query_timeout_seconds=20.0, trusted_proxy="127.0.0.1"
    )
    pool = live.services.pool
    pool.start()
    assert pool.wait_ready(60)
    # Workers are cut off the network here (root on Linux: their own network namespace).
    assert pool.isolation, "query workers run with network access"
    # ... and allocate with jemalloc (the default), whose failed allocation ends the worker too.
    assert pool.allocator == ("jemalloc" if allocator_library("jemalloc") else "system")
    answers: dict[str, httpx.Response] = {}

    def _hungry() -> None:
        with httpx.Client(base_url=live.url, timeout=60) as client:
            answers["hungry"] = client.post(
                "/sparql", data={"query": HUNGRY}, headers=_as("10.0.0.1")
            )

    thread = threading.Thread(target=_hungry)
    thread.start()
    with httpx.Client(base_url=live.url, timeout=30) as client:
        others = [
            client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}, headers=_as("10.0.0.2"))
            for _ in range(3)
        ]
        thread.join(60)
        hungry = answers["hungry"]
        assert hungry.status_code == 503, hungry.text
        problem = hungry.json()
        assert problem["type"].endswith("#QueryOutOfMemory")
        assert problem["memory_limit_mb"] == 1024 and hungry.headers["retry-after"]
        assert all(r.status_code == 200 for r in others)
        # The worker was replaced: both workers answer again.
        assert pool.wait_ready(60)
        again = client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}, headers=_as("10.0.0.1"))
        assert again.status_code == 200 and again.json()["boolean"] is True, again.text

"""System queries run on a knowledge base: the store's KB graphs and a real ``oxigraph serve``."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from evaluators.errors import KnowledgeBaseError
from evaluators.formats import parse_file
from evaluators.knowledge.bases import load_kb
from evaluators.knowledge.execution import (
    EndpointExecutor,
    ExecutionLimits,
    StoreExecutor,
    open_executor,
)
from store import graphs
from store.triplestore import TripleStore
from tests import EXAMPLES

BASE = "http://qabench.test"


@pytest.fixture
def example_store(store: TripleStore) -> TripleStore:
    load_kb(store, BASE, EXAMPLES / "example-kb.ttl", "example")
    return store


def _gold_queries_reproduce_the_gold_answers(run: object) -> int:
    dataset = parse_file(EXAMPLES / "example-questions.json")
    checked = 0
    for question in dataset.questions:
        assert question.sparql and question.answers
        outcome = run(question.sparql)  # type: ignore[operator]
        assert outcome.problem is None and outcome.answers is not None, question.id
        (gold,) = question.answers
        # the same values (the gold file types one count xsd:nonNegativeInteger, the KB xsd:integer)
        assert {v.value for v in outcome.answers.values} == {v.value for v in gold.values}
        assert outcome.answers.boolean == gold.boolean, question.id
        checked += 1
    return checked


def test_store_executor_runs_the_gold_queries_on_the_kb_graph(example_store: TripleStore) -> None:
    executor = open_executor(example_store, BASE, "example")
    assert executor.description == f"{BASE}/kb/example"
    assert _gold_queries_reproduce_the_gold_answers(executor.run) == 8


def test_endpoint_executor_runs_the_gold_queries(example_endpoint: str) -> None:
    executor = open_executor(None, BASE, example_endpoint)
    assert isinstance(executor, EndpointExecutor) and executor.description == example_endpoint
    assert _gold_queries_reproduce_the_gold_answers(executor.run) == 8
    assert "SERVICE" in (
        executor.run("SELECT * { SERVICE <http://x.org/> { ?s ?p ?o } }").problem or ""
    )


def test_a_store_query_sees_the_kb_graph_only(example_store: TripleStore) -> None:
    secret = Quad(NamedNode("http://x.org/s"), NamedNode("http://x.org/p"), Literal("hidden"),
                  graphs.admin_graph(BASE))  # fmt: skip
    example_store.add([secret])
    executor = open_executor(example_store, BASE, "example")
    for query in ('ASK { ?s ?p "hidden" }', 'ASK { GRAPH ?g { ?s ?p "hidden" } }'):
        outcome = executor.run(query)
        assert outcome.answers is not None and outcome.answers.boolean is False, query


def test_refused_queries_never_run_and_service_opens_no_connection(
    example_store: TripleStore,
) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    executor = open_executor(example_store, BASE, "example")
    cases = {
        f"SELECT * WHERE {{ OPTIONAL {{ SERVICE <http://127.0.0.1:{port}/> {{ ?s ?p ?o }} }} }}":
            "SERVICE",
        "CONSTRUCT WHERE { ?s ?p ?o }": "only SELECT and ASK",
        "DESCRIBE <http://x.org/a>": "only SELECT and ASK",
        "SELEC ?x WHERE {}": "does not parse",
        "INSERT DATA { <http://x.org/a> <http://x.org/b> <http://x.org/c> }": "does not parse",
    }  # fmt: skip
    for query, why in cases.items():
        outcome = executor.run(query)
        assert outcome.answers is None and why in (outcome.problem or ""), query
    with pytest.raises(TimeoutError):
        listener.accept()
    listener.close()
    assert len(cases) == 5


def test_rows_are_cut_and_time_is_bounded(store: TripleStore) -> None:
    graph = NamedNode(f"{BASE}/graph/kb/big")
    store.add(
        Quad(NamedNode(f"http://x.org/e{i}"), NamedNode("http://x.org/p"), Literal(str(i)), graph)
        for i in range(1500)
    )
    few = StoreExecutor(store, [graph], "big", ExecutionLimits(max_rows=10))
    outcome = few.run("SELECT ?s WHERE { ?s ?p ?o }")
    assert outcome.answers is not None and len(outcome.answers.values) == 10
    assert outcome.problem == "results cut at 10 rows"
    # 2.25 million rows, read one at a time: the deadline stops the reading
    slow = StoreExecutor(
        store, [graph], "big", ExecutionLimits(timeout_seconds=0.2, max_rows=10**7)
    )
    outcome = slow.run("SELECT ?a ?b WHERE { ?a ?p ?x . ?b ?q ?y }")
    assert outcome.answers is None and outcome.problem == "the query ran longer than 0.2 s"
    assert threading.active_count() < 20


def test_an_unknown_kb_name_says_how_to_load_one(store: TripleStore, tmp_path: Path) -> None:
    with pytest.raises(KnowledgeBaseError, match="qabench kb load"):
        open_executor(store, BASE, "nope")


class _Endpoint:
    """A loopback SPARQL endpoint that refuses GET, POST or both, on purpose."""

    def __init__(self, refuse: frozenset[str]) -> None:
        self.methods: list[str] = []
        outer = self
        body = json.dumps(
            {"head": {"vars": ["x"]},
             "results": {"bindings": [{"x": {"type": "uri", "value": "http://ex.org/a"}}]}}
        ).encode()  # fmt: skip

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, method: str) -> None:
                outer.methods.append(method)
                if method == "POST":
                    self.rfile.read(int(self.headers.get("Content-Length", "0")))
                status = 405 if method in refuse else 200
                self.send_response(status)
                self.send_header("Content-Type", "application/sparql-results+json")
                self.send_header("Content-Length", str(len(body) if status == 200 else 0))
                self.end_headers()
                if status == 200:
                    self.wfile.write(body)

            def do_GET(self) -> None:
                self._answer("GET")

            def do_POST(self) -> None:
                self._answer("POST")

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/sparql"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize(
    ("refuse", "methods", "answered"),
    [
        (frozenset(), ["GET"], True),
        (frozenset({"GET"}), ["GET", "POST"], True),  # the 2026 client's POST fallback
        (frozenset({"GET", "POST"}), ["GET", "POST"], False),  # then an empty result
    ],
)
def test_queries_go_by_get_and_fall_back_to_post(
    refuse: frozenset[str], methods: list[str], answered: bool
) -> None:
    endpoint = _Endpoint(refuse)
    try:
        outcome = EndpointExecutor(endpoint.url).run("SELECT ?x WHERE { ?x ?p ?o }")
    finally:
        endpoint.close()
    assert endpoint.methods == methods
    if answered:
        assert outcome.answers is not None and [v.value for v in outcome.answers.values] == [
            "http://ex.org/a"
        ]
    else:
        assert outcome.answers is None and outcome.problem == "the endpoint answered HTTP 405"


def test_knowledge_base_lookups_take_the_same_bounded_exchange() -> None:
    # Issue 41: one SPARQL-over-HTTP client for KB lookups and system queries. KB lookups went
    # through SPARQLWrapper, which read any answer whole (and parsed XML if it came).
    from evaluators.errors import KnowledgeBaseError
    from evaluators.knowledge.endpoint import EndpointKnowledgeBase

    endpoint = _Endpoint(frozenset())
    try:
        kb = EndpointKnowledgeBase(endpoint.url, timeout=5, max_bytes=20)
        with pytest.raises(KnowledgeBaseError, match="larger than 20 bytes"):
            kb.same_as("http://ex.org/a")
        roomy = EndpointKnowledgeBase(endpoint.url, timeout=5)
        assert "http://ex.org/a" in roomy.same_as("http://ex.org/b")
    finally:
        endpoint.close()
    assert endpoint.methods == ["POST", "POST"]

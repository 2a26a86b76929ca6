"""The parsed-query check of the workers (``server/sparql/guard.py``), run through the real
``evaluate_job`` over a real store, bypassing the endpoint's lexical pre-check: every SERVICE
evasion is refused and a loopback listener records no connection; SERVICE in strings, IRIs and
comments is fine; long flat queries are checked without hitting recursion limits."""

from __future__ import annotations

import time

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from server.sparql.guard import refusal
from server.sparql.jobs import QueryJob, evaluate_job
from store.triplestore import TripleStore
from tests.server.sparql.test_limits import EVASIONS, Listener

GRAPH = NamedNode("http://qabench.test/graph/data")


def _store() -> TripleStore:
    store = TripleStore.in_memory()
    store.add([Quad(NamedNode("http://e/s"), NamedNode("http://e/p"), Literal("o"), GRAPH)])
    return store


def _job(query: str) -> QueryJob:
    return QueryJob(
        query=query,
        base_iri="http://qabench.test/sparql",
        view="",
        default_graphs=None,
        named_graphs=None,
        results_media="application/sparql-results+json",
        rdf_media="application/n-triples",
        max_rows=100,
        truncation_note="http://qabench.test/sparql#truncation",
    )


def test_every_evasion_is_refused_by_the_worker_and_nothing_connects() -> None:
    listener = Listener()
    store = _store()
    try:
        kinds = [evaluate_job(store, _job(t.format(url=listener.url))).failure for t in EVASIONS]
        time.sleep(0.3)
        assert listener.connections == 0
        assert set(kinds) <= {"federation", "syntax"}, kinds
        assert kinds.count("federation") >= len(EVASIONS) - 3
    finally:
        listener.close()


@pytest.mark.parametrize(
    "query",
    [
        'SELECT * { ?s <http://x/SERVICE> "SERVICE <http://x/> {}" } # SERVICE <http://x/> {}',
        "PREFIX e: <http://e/> SELECT ?SERVICE { ?SERVICE e:SERVICE ?o }",
        "SELECT * { ?s ?p '''\nSERVICE <http://x/> { }\n''' }",
    ],
)
def test_service_as_a_word_elsewhere_is_evaluated(query: str) -> None:
    assert refusal(query) is None
    assert evaluate_job(_store(), _job(query)).failure is None


def test_long_flat_queries_are_checked() -> None:
    patterns = " ".join(f"?s <http://e/p> ?o{i} ." for i in range(1500))
    query = f"SELECT * WHERE {{ {patterns} }} LIMIT 1"
    # Checked only: evaluating a 1500-way join is what the workers' time limit is for.
    assert refusal(query) is None


def test_a_query_the_checker_cannot_read_is_not_evaluated() -> None:
    outcome = evaluate_job(_store(), _job("SELECT * WHERE {\n ?s ?p }"))
    assert outcome.failure == "syntax" and outcome.line == 2

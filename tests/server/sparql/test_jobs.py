"""One query as a worker evaluates it (server.sparql.jobs), over a real read-only view: the row
cap is the engine's LIMIT when the query allows one, and holds when it does not."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from pyoxigraph import Literal, NamedNode, Quad, RdfFormat, parse

from server.sparql import jobs
from server.sparql.jobs import QueryJob, QueryOutcome, evaluate_job
from store.triplestore import TripleStore

JSON = "application/sparql-results+json"
ROWS = 40
CAP = 10


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TripleStore]:
    path = tmp_path_factory.mktemp("view") / "store"
    store = TripleStore.open(path)
    graph = NamedNode("http://x.test/g")
    store.add(
        [
            Quad(
                NamedNode(f"http://x.test/s{n:02d}"),
                NamedNode("http://x.test/p"),
                Literal(n),
                graph,
            )
            for n in range(ROWS)
        ]
    )
    store.close()
    opened = TripleStore.open_read_only(path)
    yield opened
    opened.close()


def run(
    store: TripleStore, query: str, form: str = "SELECT", rdf: str | None = None
) -> QueryOutcome:
    job = QueryJob(
        query, "http://x.test/", "", None, None, JSON, rdf, CAP, "http://x.test/#cut", 0, form
    )
    return evaluate_job(store, job)


def values(outcome: QueryOutcome) -> list[int]:
    assert outcome.failure is None, outcome
    document = json.loads(outcome.data)
    return [int(b["o"]["value"]) for b in document["results"]["bindings"]]


ALL = "SELECT ?o WHERE { ?s ?p ?o } ORDER BY ?o"


@pytest.mark.parametrize(
    ("query", "expected", "truncated"),
    [
        (ALL, list(range(CAP)), True),
        (ALL + " # a comment without a line end", list(range(CAP)), True),
        (ALL + " OFFSET 35", list(range(35, ROWS)), False),
        (ALL + " LIMIT 3", [0, 1, 2], False),
        (ALL + " LIMIT 30", list(range(CAP)), True),
        (ALL + " VALUES ?o { 1 2 3 }", [1, 2, 3], False),
        (
            "SELECT ?o { { SELECT ?o { ?s ?p ?o } ORDER BY ?o LIMIT 20 } } ORDER BY ?o",
            list(range(CAP)),
            True,
        ),
    ],
    ids=[
        "no-limit",
        "comment",
        "offset",
        "own-small-limit",
        "own-large-limit",
        "values",
        "subquery",
    ],
)
def test_select_row_cap(
    view: TripleStore, query: str, expected: list[int], truncated: bool
) -> None:
    outcome = run(view, query)
    assert values(outcome) == expected
    assert (outcome.rows, outcome.truncated) == (len(expected), truncated)
    assert ("link" in json.loads(outcome.data)["head"]) is truncated


def test_the_engine_limits_a_select_and_refusals_are_remembered(view: TripleStore) -> None:
    query = ALL + " LIMIT 25"
    assert run(view, query).truncated
    assert query in jobs._REFUSED  # its own LIMIT: the added one did not parse
    plain = ALL + "  "
    run(view, plain)
    assert plain not in jobs._REFUSED


class _SameHash(str):
    """A text whose Python hash is that of another text (as colliding texts have)."""

    def __hash__(self) -> int:
        return hash("ASK {}")


def test_remembered_refusals_are_bounded_and_exact() -> None:
    refused = jobs._Refused()
    refused.add("ASK {}")
    # a text with the same hash but other characters was not refused: digests decide
    assert "ASK {}" in refused and _SameHash("ASK { }") not in refused
    refused.add(_SameHash("ASK { }"))
    assert _SameHash("ASK { }") in refused
    texts = [f"SELECT * {{}} LIMIT {n}" for n in range(jobs.REMEMBERED_TEXTS + 5)]
    for text in texts:
        refused.add(text)
    assert sum(text in refused for text in texts) == jobs.REMEMBERED_TEXTS
    assert texts[0] not in refused and texts[-1] in refused
    assert "ASK {}" not in refused and _SameHash("ASK { }") not in refused
    assert len(refused._hashes) == jobs.REMEMBERED_TEXTS  # no hash outlives its text


def test_a_graph_query_is_never_limited_by_solutions(view: TripleStore) -> None:
    # Three triples per solution: a LIMIT on solutions would cut triples silently. Even when
    # the endpoint read the form wrongly, the triples are capped by count, not by a LIMIT.
    construct = "CONSTRUCT { ?s <http://x.test/a> ?o . ?s <http://x.test/b> ?o . ?s <http://x.test/c> ?o } WHERE { ?s ?p ?o }"
    for form in ("CONSTRUCT", "SELECT"):
        outcome = run(view, construct, form, rdf="application/n-triples")
        assert (outcome.rows, outcome.truncated) == (CAP, True)
        assert len(list(parse(outcome.data, RdfFormat.N_TRIPLES))) == CAP


def test_errors_keep_the_position_of_the_text_sent(view: TripleStore) -> None:
    outcome = run(view, "SELECT ?o WHERE {\n ?s ?p }")
    assert outcome.failure == "syntax" and outcome.line == 2

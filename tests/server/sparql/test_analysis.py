"""Lexical query facts (SERVICE guard, FROM datasets, USING insertion) and the bounded results
writer, checked against pyoxigraph's own parser and serialisers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, NamedNode, QueryResultsFormat, Store, parse_query_results

from server.sparql.analysis import add_using, analyse, query_dataset, uses_service
from server.sparql.results import write_solutions

SERVICE_CASES = [
    ("SELECT * { SERVICE <http://x/> { ?s ?p ?o } }", True),
    ("select * { service silent <http://x/> {} }", True),
    ("SELECT * { SERVICE?e {} }", True),
    ("SELECT * { # SERVICE\n ?s ?p ?o }", False),
    ('SELECT * { ?s ?p "SERVICE <http://x/>" }', False),
    ("SELECT * { ?s ?p '''multi\nSERVICE'''}", False),
    ("SELECT * { ?s <http://x/SERVICE> ?o }", False),
    ("PREFIX e: <http://x/> SELECT * { ?s e:SERVICE ?o }", False),
    ("SELECT ?SERVICE { ?SERVICE ?p ?o }", False),
    (r"SELECT * { \u0053ERVICE <http://x/> {} }", True),
]


@pytest.mark.parametrize(("query", "expected"), SERVICE_CASES)
def test_service_guard(query: str, expected: bool) -> None:
    assert uses_service(query) is expected
    assert analyse(query).uses_service is expected


def test_service_case_count() -> None:
    assert len(SERVICE_CASES) == 10


def test_query_dataset_resolves_prefixes_and_base() -> None:
    dataset = query_dataset(
        "BASE <http://b/> PREFIX e: <http://e/> SELECT * FROM <g1> FROM e:g2 FROM NAMED <n> {}"
    )
    assert dataset.default == ("http://b/g1", "http://e/g2") and dataset.named == ("http://b/n",)
    assert query_dataset('SELECT * { ?s ?p "FROM <http://x>" }').is_empty


def test_add_using_only_touches_top_level_where() -> None:
    update = (
        "DELETE { ?s ?p ?o } WHERE { { SELECT * WHERE { ?s ?p ?o } } } ; DELETE WHERE { ?a ?b ?c }"
    )
    out = add_using(update, [NamedNode("http://g")], [NamedNode("http://n")])
    assert out.count("USING <http://g> USING NAMED <http://n> WHERE") == 1
    Store().update(out)  # still valid SPARQL


terms = st.one_of(
    st.builds(lambda s: NamedNode(f"http://x.test/{s}"), st.text("abc/", max_size=5)),
    st.builds(Literal, st.text(max_size=8)),
    st.builds(lambda s: Literal(s, language="en"), st.text(max_size=4)),
    st.builds(
        lambda n: Literal(str(n), datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
        st.integers(),
    ),
    st.builds(lambda s: BlankNode(f"b{s}"), st.integers(0, 9)),
    st.none(),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(terms, min_size=2, max_size=2), max_size=5))
def test_results_writer_round_trips_through_pyoxigraph(rows: list[list[object]]) -> None:
    for fmt in (QueryResultsFormat.JSON, QueryResultsFormat.XML, QueryResultsFormat.TSV):
        body = write_solutions(["a", "b"], rows, fmt)  # type: ignore[arg-type]
        parsed = list(parse_query_results(body, fmt))  # type: ignore[arg-type]
        assert len(parsed) == len(rows)
        for solution, row in zip(parsed, rows, strict=True):
            for name, value in zip(("a", "b"), row, strict=True):
                found = solution[name]
                if isinstance(value, BlankNode):
                    assert isinstance(found, BlankNode)
                else:
                    assert found == value


def test_csv_writer_quotes_and_uses_crlf() -> None:
    body = write_solutions(["x"], [[Literal('a,"b"\nc')], [None]], QueryResultsFormat.CSV)
    # An unbound value in a one-column row is written as "" (csv keeps the row visible).
    assert body == b'x\r\n"a,""b""\nc"\r\n""\r\n'

"""Lexical query facts: the SERVICE guard, FROM datasets, USING insertion."""

from __future__ import annotations

import pytest
from pyoxigraph import NamedNode, Store

from server.sparql.analysis import add_using, analyse, query_dataset, uses_service

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

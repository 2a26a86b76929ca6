"""`store.wire`: engine answers (bodies and headers as Virtuoso 7.2 sends them) into values."""

from __future__ import annotations

import pytest
from pyoxigraph import BlankNode, Literal, NamedNode, Quad, QueryBoolean, QuerySolutions

from store import wire
from store.errors import RemoteStoreError
from vocab.standard import XSD

# Answers recorded from Virtuoso 07.20.3229 (Debian 12), shortened.
VIRTUOSO_ASK_TRUE = b"""
{ "head": { "link": [], "vars": ["__ASK_RETVAL"] },
  "results": { "distinct": false, "ordered": true, "bindings": [
    { "__ASK_RETVAL": { "type": "typed-literal",
      "datatype": "http://www.w3.org/2001/XMLSchema#integer", "value": "1" }} ] } }"""
VIRTUOSO_ASK_FALSE = b"""
{ "head": { "link": [], "vars": ["__ASK_RETVAL"] },
  "results": { "distinct": false, "ordered": true, "bindings": [ ] } }"""
VIRTUOSO_ROW = b"""
{ "head": { "link": [], "vars": ["b", "t", "d"] },
  "results": { "distinct": false, "ordered": true, "bindings": [
    { "b": { "type": "bnode", "value": "nodeID://b10000" },
      "t": { "type": "typed-literal", "datatype": "http://www.w3.org/2001/XMLSchema#boolean",
             "value": "1" },
      "d": { "type": "typed-literal", "datatype": "http://www.w3.org/2001/XMLSchema#double",
             "value": "0.333333" }} ] } }"""


def test_virtuoso_ask_results_are_booleans() -> None:
    for body, truth in ((VIRTUOSO_ASK_TRUE, True), (VIRTUOSO_ASK_FALSE, False)):
        result = wire.parse_json_results(body)
        assert isinstance(result, QueryBoolean) and bool(result) is truth


def test_virtuoso_blank_nodes_and_booleans_read_as_values() -> None:
    result = wire.parse_json_results(VIRTUOSO_ROW)
    assert isinstance(result, QuerySolutions)
    row = next(iter(result))
    assert row["b"] == BlankNode("nodeID_b10000") and row["t"] == Literal(True)
    assert wire.term_text(row["b"]) == "<nodeID://b10000>"
    assert wire.term_text(BlankNode("f00")) is None  # another store's node cannot be named


def test_rounded_floats_get_their_exact_value_back() -> None:
    query, names = wire.with_lexical_forms("PREFIX x: <http://x#>\nSELECT DISTINCT ?d ?n WHERE {}")
    assert names == ["d", "n"]
    assert "SELECT DISTINCT ?d ?n (IF(datatype(?d) IN (" in query
    assert 'bif:sprintf("%.17g", ?n), "") AS ?qabench_lexical_n) WHERE {}' in query
    for unchanged in ("SELECT * WHERE {}", "SELECT (COUNT(*) AS ?n) WHERE {}", "ASK {}"):
        assert wire.with_lexical_forms(unchanged) == (unchanged, [])
    body = b"""{ "head": { "vars": ["d", "n", "qabench_lexical_d", "qabench_lexical_n"] },
      "results": { "bindings": [ {
        "d": { "type": "typed-literal", "datatype": "http://www.w3.org/2001/XMLSchema#double",
               "value": "0.181818" },
        "n": { "type": "literal", "value": "x" },
        "qabench_lexical_d": { "type": "literal", "value": "0.18181818181818182" },
        "qabench_lexical_n": { "type": "literal", "value": "" } } ] } }"""
    result = wire.parse_json_results(body, names)
    assert isinstance(result, QuerySolutions)
    assert [v.value for v in result.variables] == ["d", "n"]
    row = next(iter(result))
    assert row["d"] == Literal(2 / 11) and row["n"] == Literal("x")


def test_results_flagged_as_cut_short_are_named() -> None:
    timed_out = {"X-SQL-State": "S1TAT", "X-SQL-Message": "RC...: Returning incomplete results"}
    assert "MaxQueryExecutionTime" in (wire.incomplete(timed_out) or "")
    assert "ResultSetMaxRows" in (wire.incomplete({"X-SPARQL-MaxRows": "10000"}) or "")
    assert wire.incomplete({"Content-Type": "application/sparql-results+json"}) is None


def test_engine_and_query_form() -> None:
    assert wire.engine_of({"Server": "Virtuoso/07.20.3229 (Linux) x86_64-pc-linux-gnu"}) == (
        "virtuoso"
    )
    assert wire.engine_of({"Server": "Oxigraph/0.5.13"}) == "oxigraph"
    assert wire.engine_of({}) == ""
    cases = {
        "SELECT * {}": "SELECT",
        "PREFIX x: <http://a#> # CONSTRUCT\n base <b>\nconstruct { } WHERE {}": "CONSTRUCT",
        "# ask\nASK {}": "ASK",
        "PREFIX : <a>\nDESCRIBE <x>": "DESCRIBE",
        "INSERT DATA {}": "",
    }
    assert {text: wire.query_form(text) for text in cases} == cases


def test_update_blocks_group_quads_by_graph() -> None:
    s, p, g = (
        NamedNode("http://x.test/s"),
        NamedNode("http://x.test/p"),
        NamedNode("http://x.test/g"),
    )
    quads = [Quad(s, p, Literal(i), g) for i in range(2500)]
    text = wire.block(quads)
    assert text.count("GRAPH <http://x.test/g>") == 3  # at most 1,000 triples per block
    fresh = wire.block([Quad(s, p, BlankNode("n"), g)], fresh_blank_nodes=True)
    assert "_:n" in fresh
    with pytest.raises(RemoteStoreError, match="cannot be named"):
        wire.block([Quad(s, p, BlankNode("from-elsewhere"), g)])
    assert wire.block([Quad(s, p, Literal("1", datatype=XSD.integer), g)]).startswith("GRAPH")

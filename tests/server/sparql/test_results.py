"""Results written by the engine and cut to the caps (server.sparql.results), checked against
pyoxigraph's own serialisers and parsers: what passes through the TSV stage is byte for byte
what the engine writes directly, caps cut at row boundaries, and the truncation link lands in
the head."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import (
    BlankNode,
    Literal,
    NamedNode,
    QueryResultsFormat,
    QuerySolutions,
    RdfFormat,
    Triple,
    parse,
    parse_query_results,
)

from server.sparql.results import capped_solutions, capped_triples, with_link, write_solutions

FORMATS = (
    QueryResultsFormat.JSON,
    QueryResultsFormat.XML,
    QueryResultsFormat.CSV,
    QueryResultsFormat.TSV,
)
LINK = "http://qabench.test/sparql#truncation"
XSD = "http://www.w3.org/2001/XMLSchema#"

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
terms = st.one_of(
    st.builds(lambda s: NamedNode(f"http://x.test/{s}"), st.text("abc/é", max_size=5)),
    st.builds(Literal, text),
    st.builds(lambda s: Literal(s, language="en"), text),
    st.builds(lambda n: Literal(str(n), datatype=NamedNode(XSD + "integer")), st.integers()),
    st.builds(
        lambda s: Literal(s, datatype=NamedNode(XSD + "decimal")),
        st.sampled_from(["1.0", " 1.5", "01", "-0.0", "x"]),
    ),
    st.builds(lambda n: BlankNode(f"b{n}"), st.integers(0, 9)),
    st.none(),
)


def solutions(rows: list[list[object]], variables: tuple[str, ...] = ("a", "b")) -> QuerySolutions:
    """Return ``rows`` as a pyoxigraph solution sequence (read back from JSON)."""
    parsed = parse_query_results(
        write_solutions(variables, rows, QueryResultsFormat.JSON),  # type: ignore[arg-type]
        QueryResultsFormat.JSON,
    )
    assert isinstance(parsed, QuerySolutions)
    return parsed


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(terms, min_size=2, max_size=2), max_size=6))
def test_uncut_results_are_what_the_engine_writes(rows: list[list[object]]) -> None:
    for fmt in FORMATS:
        written = capped_solutions(solutions(rows), fmt, max_rows=100)
        assert written.body == solutions(rows).serialize(format=fmt)
        assert (written.rows, written.cut) == (len(rows), "")


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_row_cap_keeps_the_first_rows_and_says_so(fmt: QueryResultsFormat) -> None:
    rows = [[NamedNode(f"http://x.test/{n}"), Literal(f"line\n{n}\t")] for n in range(7)]
    written = capped_solutions(solutions(rows), fmt, max_rows=3, link=LINK)
    assert (written.rows, written.cut) == (3, "rows")
    if fmt in (QueryResultsFormat.JSON, QueryResultsFormat.XML, QueryResultsFormat.TSV):
        parsed = list(parse_query_results(written.body, fmt))  # type: ignore[arg-type]
        assert [s["b"] for s in parsed] == [row[1] for row in rows[:3]]
    if fmt == QueryResultsFormat.JSON:
        document = json.loads(written.body)
        assert document["head"] == {"vars": ["a", "b"], "link": [LINK]}
    if fmt == QueryResultsFormat.XML:
        assert f'<link href="{LINK}"/></head>'.encode() in written.body
    # Exactly at the cap: nothing is cut.
    exact = capped_solutions(solutions(rows[:3]), fmt, max_rows=3, link=LINK)
    assert (exact.rows, exact.cut) == (3, "") and LINK.encode() not in exact.body


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_byte_cap_keeps_whole_rows_within_it(fmt: QueryResultsFormat) -> None:
    rows = [[Literal("x" * 100 + str(n)), None] for n in range(50)]
    full = solutions(rows).serialize(format=fmt) or b""
    limit = len(full) // 3
    written = capped_solutions(solutions(rows), fmt, max_rows=1000, max_bytes=limit, link=LINK)
    assert written.cut == "bytes" and len(written.body) <= limit
    assert 0 < written.rows < 50
    # As many rows as fit: one more would not.
    more = capped_solutions(solutions(rows[: written.rows + 1]), fmt, max_rows=1000, link=LINK)
    assert len(with_link(more.body, fmt, ["a", "b"], LINK)) > limit
    if fmt == QueryResultsFormat.JSON:
        assert len(json.loads(written.body)["results"]["bindings"]) == written.rows


def test_a_row_larger_than_the_cap_leaves_an_empty_result() -> None:
    written = capped_solutions(
        solutions([[Literal("y" * 5000), None]]), QueryResultsFormat.JSON, 10, 2000, LINK
    )
    assert (written.rows, written.cut) == (0, "bytes") and len(written.body) <= 2000
    assert json.loads(written.body)["head"]["link"] == [LINK]


def test_an_unknown_head_is_written_again_with_the_link() -> None:
    # Another engine release might write its head differently: the link still gets in.
    body = b'{ "head": { "vars": ["a"] }, "results": { "bindings": [ {"a": {"type": "uri", "value": "http://x/"}} ] } }'
    out = json.loads(with_link(body, QueryResultsFormat.JSON, ["a"], LINK))
    assert out["head"]["link"] == [LINK]
    assert out["results"]["bindings"] == [{"a": {"type": "uri", "value": "http://x/"}}]


def test_zero_variables_and_empty_rows_survive() -> None:
    parsed = parse_query_results(b"\n\n\n", QueryResultsFormat.TSV)
    assert isinstance(parsed, QuerySolutions)
    written = capped_solutions(parsed, QueryResultsFormat.JSON, 5)
    assert json.loads(written.body) == {"head": {"vars": []}, "results": {"bindings": [{}, {}]}}


def _read(body: bytes, fmt: RdfFormat) -> list[Triple]:
    return [q.triple for q in parse(body, fmt)]


def _triples(n: int) -> list[Triple]:
    return [
        Triple(NamedNode(f"http://x.test/s{i}"), NamedNode("http://x.test/p"), Literal("v" * 50))
        for i in range(n)
    ]


def test_triples_are_capped_by_count_and_bytes() -> None:
    nt = RdfFormat.N_TRIPLES
    written = capped_triples(iter(_triples(20)), nt, max_rows=5)
    assert (written.rows, written.cut) == (5, "rows")
    assert _read(written.body, nt) == _triples(5)
    whole = capped_triples(iter(_triples(5)), nt, max_rows=5)
    assert (whole.rows, whole.cut) == (5, "")
    capped = capped_triples(iter(_triples(200)), nt, max_rows=1000, max_bytes=3000)
    assert capped.cut == "bytes" and len(capped.body) <= 3000
    assert _read(capped.body, nt) == _triples(capped.rows) and capped.rows > 10
    turtle = capped_triples(
        iter(_triples(200)), RdfFormat.TURTLE, 1000, 3000, {"x": "http://x.test/"}
    )
    assert len(turtle.body) <= 3000 and b"@prefix x:" in turtle.body
    assert len(list(parse(turtle.body, RdfFormat.TURTLE))) == turtle.rows

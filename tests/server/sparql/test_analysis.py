"""Lexical query facts: the SERVICE guard, FROM datasets, USING insertion."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyoxigraph import NamedNode, Store

from server.sparql.analysis import (
    _analyse_escaped,
    add_using,
    analyse,
    query_dataset,
    uses_service,
)

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


def _query_texts(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        for value in node.values():
            yield from _query_texts(value)
    elif isinstance(node, list):
        for value in node:
            yield from _query_texts(value)
    elif isinstance(node, str) and any(f in node.upper() for f in ("SELECT", "ASK")):
        yield node


# Pieces inserted into real queries: brackets, comments, strings, IRIs, escapes, keywords.
PIECES = [
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "#",
    '"',
    "'",
    "<",
    ">",
    "'''",
    "SERVICE",
    "service",
    "FROM",
    "FROM NAMED",
    "ASK",
    "\n",
    ":",
    "?",
    "\\",
    r"\u0053",
    r"\U0000007B",
]


def test_one_pass_reads_what_the_token_list_reads(shared_data: Path) -> None:
    # analyse reads a text without escapes in one pass (the endpoint's cost per query); the
    # token-list reading (_analyse_escaped, which every text with escapes takes) is the
    # reference: QALD-9's queries and each with a piece inserted at random places.
    path = shared_data / "qald/ag-sc_QALD/9/data/qald-9-train-multilingual.json"
    texts = sorted(set(_query_texts(json.loads(path.read_text()))))
    rnd = random.Random(40)
    mutated = []
    for text in texts:
        for _ in range(3):
            at = rnd.randrange(len(text) + 1)
            mutated.append(text[:at] + rnd.choice(PIECES) + text[at:])
    compared = 0
    for text in texts + mutated:
        for base in (None, "http://qabench.test/sparql"):
            assert analyse(text, base) == _analyse_escaped(text, base), text
            compared += 1
    assert len(texts) >= 400 and compared == 2 * 4 * len(texts)


# Pieces of texts made at random for the run scanner of analyse: keywords in other cases, words
# that only begin or end like one, prefixed names and variables that spell one, brackets inside
# IRIs, strings and comments, characters outside ASCII, escapes a local name may hold.
MADE = [
    "SELECT", "select", "SeLeCt", "ASK", "ask", "CONSTRUCT", "describe", "DESCRIBE",
    "SERVICE", "sErViCe", "FROM", "from", "NAMED", "FROMAGE", "XFROM", "ASK_", "_ASK", "ASK1",
    "SERVICE:", ":SERVICE", "ex:FROM", "FROM:x", "?FROM", "$ASK", "?", "$", ":", "ex:a\\#",
    "ex:b\\{", "<http://g/{>", "<http://g>", "<", ">", '"', "'", '"{"', "'}'", '"""{\n"""',
    "'''}'''", "# {", "#", "\n", " ", "\t", "{", "}", "(", ")", "[", "]", ".", ";", ",", "*",
    "\u00e9", "\u00c0x:", "\u017f", "\u212a", "\u2028", "1", "a", "\\",
]  # fmt: skip


def test_the_run_scanner_reads_what_the_token_list_reads() -> None:
    rnd = random.Random(4040)
    texts = ["".join(rnd.choices(MADE, k=rnd.randrange(1, 24))) for _ in range(6000)]
    texts = [t for t in texts if "\\u" not in t and "\\U" not in t]  # else the list is read
    for text in texts:
        assert analyse(text, "http://qabench.test/sparql") == _analyse_escaped(
            text, "http://qabench.test/sparql"
        ), text
    facts = [analyse(t) for t in texts]
    # the texts reach every kind of verdict
    assert len(texts) > 5000
    assert {f.form for f in facts} >= {None, "SELECT", "ASK", "CONSTRUCT", "DESCRIBE"}
    assert {f.uses_service for f in facts} == {True, False}
    assert any(f.dataset.default for f in facts) and max(f.depth for f in facts) >= 4

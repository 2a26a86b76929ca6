"""SPARQL over HTTP as real engines speak it: results in, terms and update text out.

``RemoteStore`` reads and writes through this module, which smooths over what Virtuoso (7.2)
does differently from the SPARQL 1.1 recommendations, so that callers get the values the
embedded store would give them:

* ASK results come back as a one-column SELECT (``__ASK_RETVAL``, ``1`` or no row);
* blank nodes are named ``nodeID://b123`` (not a valid label; the engine accepts the name back
  as ``<nodeID://b123>`` in a query, which ``term_text`` writes);
* ``xsd:boolean`` values are written ``1`` and ``0``;
* a result cut short is still a 200 answer, flagged only by a header: ``X-SQL-State: S1TAT``
  (the query ran out of time and the engine returned what it had) or ``X-SPARQL-MaxRows``
  (``ResultSetMaxRows`` was reached); ``incomplete`` names both.

Other engines never trigger these rules. Nothing here performs I/O.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping

from pyoxigraph import (
    BlankNode,
    DefaultGraph,
    Literal,
    NamedNode,
    Quad,
    QueryBoolean,
    QueryResultsFormat,
    QuerySolutions,
    Triple,
    parse_query_results,
)

from store.errors import RemoteStoreError

Term = NamedNode | BlankNode | Literal

_XSD = "http://www.w3.org/2001/XMLSchema#"
_BOOLEAN = _XSD + "boolean"
# Virtuoso writes doubles and floats with six significant digits in every result format;
# ``RemoteStore.quads`` asks for their full lexical form with STR() and puts it back.
_DOUBLE = _XSD + "double"
FLOATING = frozenset({_DOUBLE, _XSD + "float"})
_ASK_COLUMN = "__ASK_RETVAL"
_VIRTUOSO_BNODE = "nodeID://"
# Our label for a Virtuoso blank node: this prefix, then its nodeID (b123 -> nodeID_b123).
_BNODE_LABEL = "nodeID_"


# The prologue of a query (SPARQL 1.1 grammar, [4]-[6]) and comments, then the form keyword.
_PROLOGUE_ITEM = re.compile(
    r"""\s+ | \#[^\n\r]*
      | BASE\s*<[^<>\s]*>
      | PREFIX\s*[^\s:]*:\s*<[^<>\s]*>""",
    re.I | re.X,
)
_FORM = re.compile(r"(SELECT|ASK|CONSTRUCT|DESCRIBE)\b", re.I)


def query_form(sparql: str) -> str:
    """Return the form of a query (``SELECT``, ``ASK``, ``CONSTRUCT``, ``DESCRIBE``; ``""``).

    Virtuoso answers every form in the first media type a request accepts (graphs too, as a
    SELECT-like JSON), so the client must ask for results or triples knowing which it expects.
    """
    position = 0
    while match := _PROLOGUE_ITEM.match(sparql, position):
        position = match.end()
    form = _FORM.match(sparql, position)
    return form.group(1).upper() if form else ""


def _binding(value: dict[str, str]) -> dict[str, str]:
    kind = value.get("type")
    if kind == "bnode" and value.get("value", "").startswith(_VIRTUOSO_BNODE):
        return {**value, "value": _BNODE_LABEL + value["value"][len(_VIRTUOSO_BNODE) :]}
    if kind in ("literal", "typed-literal") and value.get("datatype") == _BOOLEAN:
        lexical = {"1": "true", "0": "false"}.get(value.get("value", ""), value.get("value", ""))
        return {**value, "value": lexical}
    return value


def parse_json_results(body: bytes) -> QuerySolutions | QueryBoolean:
    """Parse SPARQL JSON results, undoing the engine deviations listed in the module docstring.

    Raises:
        RemoteStoreError: if the body is not SPARQL JSON results.
    """
    try:
        document = json.loads(body)
        head = document["head"]
        if "boolean" not in document and head.get("vars") == [_ASK_COLUMN]:
            rows = document["results"]["bindings"]
            truth = bool(rows) and rows[0].get(_ASK_COLUMN, {}).get("value") not in ("0", None)
            document = {"head": {}, "boolean": truth}
        elif "results" in document:
            document["results"]["bindings"] = [
                {name: _binding(value) for name, value in row.items()}
                for row in document["results"]["bindings"]
            ]
        return parse_query_results(json.dumps(document).encode(), QueryResultsFormat.JSON)
    except (ValueError, KeyError, TypeError, AttributeError, SyntaxError) as exc:
        raise RemoteStoreError(f"Unreadable SPARQL JSON results: {exc}") from exc


def engine_of(headers: Mapping[str, str]) -> str:
    """Return the engine named by the first product of a ``Server`` header, in lower case.

    ``Virtuoso/07.20.3229 (Linux) x86_64-pc-linux-gnu`` gives ``virtuoso``; no header, ``""``.
    """
    products = headers.get("Server", "").split()
    return products[0].split("/", 1)[0].lower() if products else ""


def incomplete(headers: Mapping[str, str]) -> str | None:
    """Return why a 200 answer holds only part of the results, or ``None`` if it is whole."""
    if headers.get("X-SQL-State", "").strip() == "S1TAT":
        return (
            "the engine stopped the query at its time limit and returned partial results "
            "(Virtuoso: MaxQueryExecutionTime in virtuoso.ini)"
        )
    if "X-SPARQL-MaxRows" in headers:
        return (
            f"the engine cut the result at {headers['X-SPARQL-MaxRows']} rows "
            "(Virtuoso: raise ResultSetMaxRows in virtuoso.ini)"
        )
    return None


def full_precision(term: Term, lexical: Term | None, *, canonical: bool = False) -> Term:
    """Return ``term`` with the full lexical form ``lexical`` (STR of it) if it is a float.

    Args:
        term: a value as the results carried it.
        lexical: its STR(), which Virtuoso writes in full.
        canonical: write doubles as pyoxigraph does (for an engine that keeps values, not
            lexical forms, so that they come back as qabench wrote them).
    """
    if (
        isinstance(term, Literal)
        and term.datatype.value in FLOATING
        and isinstance(lexical, Literal)
        and (canonical or lexical.value != term.value)
    ):
        try:
            value = float(lexical.value)
        except ValueError:
            return term
        if math.isfinite(value) and term.datatype.value == _DOUBLE:
            # The shortest form that reads back as the same double, as pyoxigraph writes it.
            return Literal(value)
        if math.isfinite(value):
            return Literal(lexical.value, datatype=term.datatype)
    return term


def term_text(term: Term | NamedNode) -> str | None:
    """Return ``term`` as SPARQL text, or ``None`` for a blank node no query can name.

    A blank node read from Virtuoso is named by its ``<nodeID://…>`` IRI, which that engine
    resolves to the node; any other blank node in a query pattern would be a fresh variable.
    """
    if isinstance(term, BlankNode):
        if term.value.startswith(_BNODE_LABEL):
            return f"<{_VIRTUOSO_BNODE}{term.value[len(_BNODE_LABEL) :]}>"
        return None
    return str(term)


# Triples per GRAPH block of a data block: Virtuoso's parser runs out of stack near 5,000.
_BLOCK_TRIPLES = 1000


def _term_texts(quad: Quad, fresh_blank_nodes: bool) -> str:
    if isinstance(quad.subject, Triple) or isinstance(quad.object, Triple):
        raise RemoteStoreError(f"A quoted triple cannot be sent to a SPARQL 1.1 server: {quad}")
    if fresh_blank_nodes:
        return f"{quad.subject} {quad.predicate} {quad.object} ."
    subject, obj = term_text(quad.subject), term_text(quad.object)
    if subject is None or obj is None:
        raise RemoteStoreError(f"A blank node read from another store cannot be named: {quad}")
    return f"{subject} {quad.predicate} {obj} ."


def block(quads: Iterable[Quad], *, fresh_blank_nodes: bool = False) -> str:
    """Return quads as the body of an update block, one GRAPH block per graph.

    Args:
        quads: the quads (blank nodes read from Virtuoso are written as its ``nodeID`` IRIs).
        fresh_blank_nodes: write blank nodes as ``_:label`` (new nodes of an INSERT template;
            Virtuoso accepts them only when the template holds one GRAPH block).

    Raises:
        RemoteStoreError: if a quad has a quoted triple, or a blank node from another store.
    """
    by_graph: dict[NamedNode | DefaultGraph, list[str]] = {}
    for quad in quads:
        graph = quad.graph_name if isinstance(quad.graph_name, NamedNode) else DefaultGraph()
        by_graph.setdefault(graph, []).append(_term_texts(quad, fresh_blank_nodes))
    parts: list[str] = []
    for graph, triples in by_graph.items():
        step = len(triples) if fresh_blank_nodes else _BLOCK_TRIPLES
        for start in range(0, len(triples), step or 1):
            body = "\n".join(triples[start : start + step])
            parts.append(
                body if isinstance(graph, DefaultGraph) else f"GRAPH {graph} {{\n{body}\n}}"
            )
    return "\n".join(parts)

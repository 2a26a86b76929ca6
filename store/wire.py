"""SPARQL over HTTP as real engines speak it: results in, terms and update text out.

``RemoteStore`` reads and writes through this module, which smooths over what Virtuoso (7.2)
does differently from the SPARQL 1.1 recommendations, so that callers get the values the
embedded store would give them:

* ASK results come back as a one-column SELECT (``__ASK_RETVAL``, ``1`` or no row);
* blank nodes are named ``nodeID://b123`` (not a valid label; the engine accepts the name back
  as ``<nodeID://b123>`` in a query, which ``term_text`` writes);
* ``xsd:boolean`` values are written ``1`` and ``0``;
* ``xsd:double`` and ``xsd:float`` values are rounded to six significant digits in every
  result format (and to sixteen by ``STR()``), while ``bif:sprintf("%.17g", …)`` writes them
  exactly: ``with_lexical_forms`` asks for that text of each projected variable of a SELECT
  (Virtuoso's syntax: only for Virtuoso) and ``parse_json_results`` puts the exact values back;
* a result cut short is still a 200 answer, flagged only by a header: ``X-SQL-State: S1TAT``
  (the query ran out of time and the engine returned what it had) or ``X-SPARQL-MaxRows``
  (``ResultSetMaxRows`` was reached); ``incomplete`` names both.

Other engines never trigger these rules. Nothing here performs I/O.
"""

from __future__ import annotations

import json
import math
import re
import struct
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


_VARIABLES = re.compile(
    r"SELECT(?:\s+(?:DISTINCT|REDUCED))?((?:\s+[?$][\w\u00B7\u0300-\u036F\u203F-\u2040]+)+)"
    r"\s*(?=WHERE\b|FROM\b|\{)",
    re.I,
)
# Prefix of the extra columns ``with_lexical_forms`` asks for.
_LEXICAL = "qabench_lexical_"


def _after_prologue(sparql: str) -> int:
    position = 0
    while match := _PROLOGUE_ITEM.match(sparql, position):
        position = match.end()
    return position


def with_lexical_forms(sparql: str) -> tuple[str, list[str]]:
    """Return a SELECT asking also for the exact text of each projected float, and the variables.

    Only a projection that is a plain list of variables is extended (``SELECT ?a ?b WHERE``);
    any other query comes back unchanged, with no variables. The extra columns use Virtuoso's
    ``bif:sprintf``: send the result to Virtuoso only.
    """
    match = _VARIABLES.match(sparql, _after_prologue(sparql))
    if match is None:
        return sparql, []
    names = [token[1:] for token in match.group(1).split()]
    floating = ", ".join(f"<{datatype}>" for datatype in sorted(FLOATING))
    extra = "".join(
        f' (IF(datatype(?{name}) IN ({floating}), bif:sprintf("%.17g", ?{name}), "")'
        f" AS ?{_LEXICAL}{name})"
        for name in names
    )
    return sparql[: match.end(1)] + extra + sparql[match.end(1) :], names


def query_form(sparql: str) -> str:
    """Return the form of a query (``SELECT``, ``ASK``, ``CONSTRUCT``, ``DESCRIBE``; ``""``).

    Virtuoso answers every form in the first media type a request accepts (graphs too, as a
    SELECT-like JSON), so the client must ask for results or triples knowing which it expects.
    """
    form = _FORM.match(sparql, _after_prologue(sparql))
    return form.group(1).upper() if form else ""


def _exact(value: dict[str, str], lexical: dict[str, str] | None) -> dict[str, str]:
    if lexical is None or value.get("datatype") not in FLOATING:
        return value
    try:
        number = float(lexical.get("value", ""))
    except ValueError:
        return value
    if not math.isfinite(number):
        return value
    if value["datatype"] == _DOUBLE:
        # Virtuoso keeps values, not lexical forms: write the double as pyoxigraph would.
        return {**value, "value": Literal(number).value}
    return {**value, "value": _shortest_float32(number)}


def _shortest_float32(number: float) -> str:
    """Return the shortest decimal text that reads back as the same 32-bit float."""
    target = struct.unpack("f", struct.pack("f", number))[0]
    for digits in range(1, 10):
        text = f"{number:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == target:
            return text
    return repr(target)


def _binding(value: dict[str, str], lexical: dict[str, str] | None) -> dict[str, str]:
    kind = value.get("type")
    if kind == "bnode" and value.get("value", "").startswith(_VIRTUOSO_BNODE):
        return {**value, "value": _BNODE_LABEL + value["value"][len(_VIRTUOSO_BNODE) :]}
    if kind in ("literal", "typed-literal") and value.get("datatype") == _BOOLEAN:
        lexical_form = {"1": "true", "0": "false"}.get(value.get("value", ""))
        return {**value, "value": lexical_form or value.get("value", "")}
    if kind in ("literal", "typed-literal"):
        return _exact(value, lexical)
    return value


def parse_json_results(
    body: bytes, lexical: list[str] | None = None
) -> QuerySolutions | QueryBoolean:
    """Parse SPARQL JSON results, undoing the engine deviations listed in the module docstring.

    Args:
        body: the JSON document.
        lexical: the variables whose STR() ``with_lexical_forms`` asked for (those columns are
            dropped once their values are put back).

    Raises:
        RemoteStoreError: if the body is not SPARQL JSON results.
    """
    extra = {f"{_LEXICAL}{name}": name for name in lexical or []}
    try:
        document = json.loads(body)
        head = document["head"]
        if "boolean" not in document and head.get("vars") == [_ASK_COLUMN]:
            rows = document["results"]["bindings"]
            truth = bool(rows) and rows[0].get(_ASK_COLUMN, {}).get("value") not in ("0", None)
            document = {"head": {}, "boolean": truth}
        elif "results" in document:
            head["vars"] = [v for v in head.get("vars", []) if v not in extra]
            document["results"]["bindings"] = [
                {
                    name: _binding(value, row.get(_LEXICAL + name))
                    for name, value in row.items()
                    if name not in extra
                }
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

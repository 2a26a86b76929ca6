"""The parsed-query check every public query passes in its worker: ``SERVICE`` never runs.

The endpoint refuses ``SERVICE`` early from the query's tokens (``server.sparql.analysis``), but
a lexer can be fooled (an escaped ``#`` in a local name once made it read the rest of a line as a
comment). So before a worker evaluates anything it parses the query with rdflib's SPARQL parser
and walks the parse tree: a ``ServiceGraphPattern`` anywhere (nested groups, ``OPTIONAL``,
``MINUS``, ``EXISTS``, sub-queries) refuses the query, and so does a query this parser cannot
read (it is not evaluated: what cannot be checked does not run). Parsing costs up to about a
second for the longest accepted queries, which is why it runs in the killable worker, inside the
query's time limit, never on a request thread. The third layer, for a disagreement between this
parser and Oxigraph's, is that workers have no network at all (``server.sparql.isolation``).

Runs in the worker processes only (it raises the recursion limit of the process it runs in).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass

from pyparsing import ParseBaseException, ParseResults
from rdflib.plugins.sparql.parser import parseQuery
from rdflib.plugins.sparql.parserutils import CompValue

# The parser recurses per triple pattern and per nesting level; long flat queries (thousands of
# patterns) need this much, and Python 3.11 keeps such frames off the C stack.
RECURSION_LIMIT = 50_000


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a query is not evaluated: ``federation`` (it uses SERVICE) or ``syntax``."""

    kind: str
    message: str
    line: int | None = None
    column: int | None = None


def _nodes(node: object) -> Iterable[CompValue]:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, CompValue):
            yield current
            stack.extend(current.values())
        elif isinstance(current, ParseResults | list | tuple):
            stack.extend(current)
        elif isinstance(current, dict):
            stack.extend(current.values())


def uses_service(parsed: object) -> bool:
    """Return whether a parse tree holds a ``SERVICE`` pattern anywhere.

    >>> uses_service(parseQuery("SELECT * { ?s ?p ?o OPTIONAL { SERVICE <http://x/> {} } }"))
    True
    >>> uses_service(parseQuery('SELECT * { ?s <http://x/SERVICE> "SERVICE" } # SERVICE'))
    False
    """
    return any(node.name == "ServiceGraphPattern" for node in _nodes(parsed))


def refusal(query: str) -> Refusal | None:
    """Return why ``query`` must not be evaluated, or ``None`` when it may be.

    >>> refusal("ASK { SERVICE <http://127.0.0.1/> { ?s ?p ?o } }").kind
    'federation'
    >>> refusal("ASK { ?s ?p ?o }") is None
    True
    """
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    try:
        parsed = parseQuery(query)
    except ParseBaseException as exc:
        return Refusal("syntax", f"Malformed SPARQL: {exc.msg}", exc.lineno, exc.col)
    except (ValueError, RecursionError) as exc:
        # ValueError: a \\u escape that names no code point.
        return Refusal("syntax", f"Malformed SPARQL: {exc}")
    if uses_service(parsed):
        return Refusal(
            "federation",
            "SERVICE is disabled on this endpoint: it would make the server fetch other sites. "
            "Query the remote endpoint directly instead.",
        )
    return None

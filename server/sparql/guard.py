"""The parsed-query check every public query passes in its worker: ``SERVICE`` never runs.

The endpoint refuses ``SERVICE`` early from the query's tokens (``server.sparql.analysis``), but
a lexer can be fooled (an escaped ``#`` in a local name once made it read the rest of a line as a
comment). So before a worker evaluates anything it parses the query with rdflib's SPARQL parser
and walks the parse tree: a ``ServiceGraphPattern`` anywhere (nested groups, ``OPTIONAL``,
``MINUS``, ``EXISTS``, sub-queries) refuses the query, and so does a query this parser cannot
read (it is not evaluated: what cannot be checked does not run). Parsing costs about 4-8 ms for
a short query and up to about a second for the longest accepted ones, which is why it runs in
the killable worker, inside the query's time limit, never on a request thread. The third layer,
for a disagreement between this parser and Oxigraph's, is that workers have no network at all
(``server.sparql.isolation``).

Two things keep that cost off most queries. A parser reads the keyword ``SERVICE`` from the
query's characters once ``\\u``/``\\U`` escapes are replaced (SPARQL 1.1 Query, section 19.2),
ignoring case: a text in which no case-folded spelling of the seven letters occurs, however often
its escapes are decoded, holds no SERVICE for any parser, and is not parsed here (this decides
nothing else: Oxigraph still parses it and reports its own syntax errors). And the verdict on a
text is cached per worker (``CACHED_VERDICTS``), for clients that repeat queries.

Runs in the worker processes only (it raises the recursion limit of the process it runs in).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache

from pyparsing import ParseBaseException
from rdflib.plugins.sparql.parser import parseQuery

from evaluators.knowledge.execution import uses_service
from server.sparql.analysis import decode_codepoints

# The parser recurses per triple pattern and per nesting level; long flat queries (thousands of
# patterns) need this much, and Python 3.11 keeps such frames off the C stack.
RECURSION_LIMIT = 50_000
# Verdicts kept per worker, by exact query text (clients repeat queries: page links, polling).
# At most this many texts of server.max_query_length characters each are held.
CACHED_VERDICTS = 256


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a query is not evaluated: ``federation`` (it uses SERVICE) or ``syntax``."""

    kind: str
    message: str
    line: int | None = None
    column: int | None = None


def may_spell_service(query: str) -> bool:
    r"""Return whether some reading of ``query`` could hold the keyword ``SERVICE``.

    Conservative: it looks at the text after every round of escape decoding and under both
    Python's case folding and upper-casing (pyparsing compares keywords upper-cased, so a
    dotless i, U+0131, reads as ``I`` there).

    >>> may_spell_service("SELECT * { ?s ?p ?o }")
    False
    >>> may_spell_service(r"ASK { \u0053ERV\u005Cu0049CE <x> {} }")
    True
    >>> may_spell_service("ASK { serv" + chr(0x131) + "ce <x> {} }")
    True
    """
    text = query
    while True:
        if "SERVICE" in text.upper() or "service" in text.casefold():
            return True
        decoded = decode_codepoints(text)
        if decoded == text:  # each round that changes the text makes it shorter
            return False
        text = decoded


@lru_cache(maxsize=CACHED_VERDICTS)
def refusal(query: str) -> Refusal | None:
    """Return why ``query`` must not be evaluated, or ``None`` when it may be.

    >>> refusal("ASK { SERVICE <http://127.0.0.1/> { ?s ?p ?o } }").kind
    'federation'
    >>> refusal("ASK { ?s ?p ?o }") is None
    True

    The verdict depends on the text alone, so it is cached per text (``CACHED_VERDICTS``).
    """
    if not may_spell_service(query):
        return None
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

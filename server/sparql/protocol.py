"""What the SPARQL 1.1 Protocol refuses before anything reads the query (as Oxigraph does).

A request names its query once: ``query=`` twice, or a query in the URL beside one in the body
(form field or ``application/sparql-query``), is ambiguous and answered 400. The protocol's
``default-graph-uri`` and ``named-graph-uri`` values are IRIs: anything that is not an absolute
IRI is a 400 that names it, never a graph name looked up as text.
"""

from __future__ import annotations

from collections.abc import Sequence

from flask import request
from pyoxigraph import NamedNode

from server.web.problems import Problem


def check_protocol(default: Sequence[str], named: Sequence[str]) -> None:
    """Refuse a query given twice and graph parameters that are not absolute IRIs.

    Raises:
        Problem: 400 naming the parameter.
    """
    if request.method == "POST" and request.args.getlist("query"):
        raise Problem(
            400,
            "The query is given twice (in the URL and in the body); send it once "
            "(SPARQL 1.1 Protocol, section 2.1).",
        )
    for name, values in (("default-graph-uri", default), ("named-graph-uri", named)):
        for value in values:
            try:
                NamedNode(value)
            except ValueError as exc:
                raise Problem(
                    400, f"{name} must be an absolute IRI; got {value[:80]!r} ({exc})."
                ) from exc

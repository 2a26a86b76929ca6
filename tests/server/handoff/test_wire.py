"""The connection worker's reading of a request: its lean reading of the common form gives
what the protocol's general reading gives."""

from __future__ import annotations

import itertools

import pytest

from server.handoff import wire
from server.handoff.worker import _protocol
from server.sparql.protocol import (
    FORM,
    QUERY_BODY,
    ProtocolRequest,
    media_type,
    parse_fields,
    read_query,
)
from server.web.problems import Problem

CONTENT_TYPES = [
    b"application/sparql-query",
    b"Application/SPARQL-Query",
    b"application/sparql-query; charset=utf-8",
    b"application/sparql-query;charset=UTF-8",
    b"application/sparql-query; charset=utf8",
    b"application/sparql-query; charset=latin-1",
    b"application/sparql-query ; charset=utf-8",
    b"application/x-www-form-urlencoded",
    b"text/plain",
    None,
]
BODIES = [
    b"ASK { ?s ?p ?o }",
    'ASK { ?s ?p "\u00e9" }'.encode(),
    b"ASK { \xff }",
    b"query=ASK%20%7B%7D",
    b"",
]
TARGETS = [
    "/sparql",
    "/sparql?",
    "/sparql?default-graph-uri=http%3A%2F%2Fg",
    "/sparql?query=ASK%7B%7D",
]
ACCEPTS = [None, b"application/sparql-results+json", b"text/html;q=0.5, */*"]


def _general(head: wire.Head, query_string: str) -> object:
    """The protocol's general reading (as the SPARQL front reads a request)."""
    content_type = head.fields.get(b"content-type")
    accept = head.fields.get(b"accept")
    try:
        mimetype, params = media_type(content_type.decode("latin-1") if content_type else "")
        args = parse_fields(query_string.encode("latin-1"))
        req = ProtocolRequest(
            head.method,
            args,
            parse_fields(head.body) if mimetype == FORM else None,
            mimetype,
            params,
            head.body if mimetype == QUERY_BODY else b"",
            accept.decode("latin-1") if accept is not None else None,
        )
        return (req.accept, req.args.to_dict(flat=False), read_query(req))
    except (Problem, ValueError, UnicodeError) as exc:
        return type(exc).__name__ if not isinstance(exc, Problem) else exc.status


def _lean(head: wire.Head, query_string: str) -> object:
    try:
        req, found = _protocol(head, query_string)
        return (req.accept, req.args.to_dict(flat=False), found)
    except (Problem, ValueError, UnicodeError) as exc:
        return type(exc).__name__ if not isinstance(exc, Problem) else exc.status


CASES = list(itertools.product(CONTENT_TYPES, BODIES, TARGETS, ACCEPTS))


@pytest.mark.parametrize(("content_type", "body", "target", "accept"), CASES)
def test_the_lean_reading_equals_the_protocols(
    content_type: bytes | None, body: bytes, target: str, accept: bytes | None
) -> None:
    fields = {b"host": b"x"}
    if content_type is not None:
        fields[b"content-type"] = content_type
    if accept is not None:
        fields[b"accept"] = accept
    head = wire.Head(0, "POST", target, fields, body)
    query_string = target.partition("?")[2]
    general, lean = _general(head, query_string), _lean(head, query_string)
    # a refusal (a problem or an unreadable body) is given back, whatever its kind: the view
    # answers it
    assert isinstance(lean, tuple) == isinstance(general, tuple), (general, lean)
    if isinstance(general, tuple):
        assert lean == general


def test_case_count() -> None:
    assert len(CASES) == 600

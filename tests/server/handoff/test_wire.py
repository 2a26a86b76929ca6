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


def _request(body: bytes, extra: bytes = b"") -> bytes:
    return (
        b"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-query\r\n"
        + extra
        + b"Content-Length: %d\r\n\r\n" % len(body)
        + body
    )


def test_a_head_read_again_reads_as_the_first_time() -> None:
    # heads are kept by their bytes: a second request with the same head gets its own body,
    # and the limits of the call, not those of the call that read the head first
    first = wire.head_of(_request(b"ASK {}") + b"GET", 1000, 1000)
    second = wire.head_of(_request(b"ASK {}"[::-1]), 1000, 1000)
    assert isinstance(first, wire.Head) and isinstance(second, wire.Head)
    assert (first.body, second.body) == (b"ASK {}", b"ASK {}"[::-1])
    assert first.size == second.size == len(_request(b"ASK {}"))
    assert first.fields[b"content-length"] == b"6" and not first.closes
    assert wire.head_of(_request(b"ASK {}"), 1000, 5) == wire.NOT_SIMPLE  # body over the limit
    assert wire.head_of(_request(b"ASK {}"), 50, 1000) == wire.NOT_SIMPLE  # head over the limit
    assert wire.head_of(_request(b"ASK {}")[:-1], 1000, 1000) == wire.INCOMPLETE
    closing = wire.head_of(_request(b"ASK {}", b"Connection: Close\r\n"), 1000, 1000)
    assert isinstance(closing, wire.Head) and closing.closes
    for _ in range(2):  # a head that is not simple is not simple the second time either
        assert wire.head_of(_request(b"ASK {}", b"Cookie: a=b\r\n"), 1000, 1000) == wire.NOT_SIMPLE
        assert wire.head_of(_request(b"ASK {}", b"Host: y\r\n"), 1000, 1000) == wire.NOT_SIMPLE


def test_heads_kept_are_bounded() -> None:
    for n in range(wire.CACHED_HEADS + 50):
        head = wire.head_of(_request(b"ASK {}", b"X-N: %d\r\n" % n), 10_000, 1000)
        assert isinstance(head, wire.Head) and head.fields[b"x-n"] == b"%d" % n
    assert len(wire._HEADS) == wire.CACHED_HEADS
    # a head longer than those kept is read each time
    long = _request(b"ASK {}", b"X-Long: " + b"a" * wire.CACHED_HEAD_BYTES + b"\r\n")
    for _ in range(2):
        head = wire.head_of(long, 10_000, 1000)
        assert isinstance(head, wire.Head) and head.body == b"ASK {}"
    assert long[: long.find(b"\r\n\r\n")] not in wire._HEADS

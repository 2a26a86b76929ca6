"""What a SPARQL 1.1 Protocol request says: its query, its dataset, the forms it asks for.

``ProtocolRequest`` holds the parts of an HTTP request the protocol reads (method, URL
parameters, a form body or a query body, ``Content-Type``, ``Accept``), parsed the way
Werkzeug parses them, so the Flask view and the event-loop front (``server.front``) read
a request through the same code. Nothing here touches Flask or the network.

What the protocol refuses before anything reads the query (as Oxigraph does): a request names
its query once (``query=`` twice, or a query in the URL beside one in the body, is ambiguous and
answered 400); the protocol's ``default-graph-uri`` and ``named-graph-uri`` values are IRIs, and
anything that is not an absolute IRI is a 400 that names it, never a graph name looked up as
text. Updates are refused (403, they belong on ``/update``; with GET, 400).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple
from urllib.parse import parse_qsl

from pyoxigraph import NamedNode
from werkzeug.datastructures import MultiDict
from werkzeug.http import parse_options_header

from server.web.problems import Problem
from vocab.project import QAB

FORM = "application/x-www-form-urlencoded"
QUERY_BODY = "application/sparql-query"


class ProtocolRequest(NamedTuple):
    """The parts of one request the protocol reads.

    ``form`` holds the fields of a form body (``None`` for other bodies), ``body`` the bytes of
    an ``application/sparql-query`` body (empty otherwise).
    """

    method: str
    args: MultiDict[str, str]
    form: MultiDict[str, str] | None
    mimetype: str
    params: Mapping[str, str]
    body: bytes
    accept: str | None


class ProtocolQuery(NamedTuple):
    """The query of a request (``None``: none given) and the dataset the protocol names."""

    text: str | None
    default: list[str]
    named: list[str]


def parse_fields(raw: bytes) -> MultiDict[str, str]:
    """Parse URL-encoded fields as Werkzeug does (invalid escapes stay percent-encoded).

    >>> parse_fields(b"query=ASK%20%7B%7D&format=json&x=").to_dict(flat=False)
    {'query': ['ASK {}'], 'format': ['json'], 'x': ['']}

    Raises:
        UnicodeDecodeError: the bytes are not UTF-8.
    """
    return MultiDict(parse_qsl(raw.decode(), keep_blank_values=True, errors="werkzeug.url_quote"))


def media_type(content_type: str | None) -> tuple[str, dict[str, str]]:
    """Return the lower-cased media type of a ``Content-Type`` header and its parameters.

    >>> media_type("Application/SPARQL-Query; charset=UTF-8")
    ('application/sparql-query', {'charset': 'UTF-8'})
    """
    value, params = parse_options_header(content_type or "")
    return value.lower(), params


def read_query(req: ProtocolRequest) -> ProtocolQuery:
    """Return the query and dataset of ``req``, refusing what the protocol does not allow.

    Raises:
        Problem: 400 (malformed, given twice, not an IRI), 403 (an update), 415 (a body that
            is neither a form nor a query, or not UTF-8).
    """
    found = _read(req)
    if req.method == "POST" and req.args.getlist("query"):
        raise Problem(
            400,
            "The query is given twice (in the URL and in the body); send it once "
            "(SPARQL 1.1 Protocol, section 2.1).",
        )
    for name, values in (("default-graph-uri", found.default), ("named-graph-uri", found.named)):
        for value in values:
            try:
                NamedNode(value)
            except ValueError as exc:
                raise Problem(
                    400, f"{name} must be an absolute IRI; got {value[:80]!r} ({exc})."
                ) from exc
    return found


def _only(values: Sequence[str], name: str) -> str | None:
    if len(values) > 1:
        raise Problem(400, f"Send exactly one {name!r} parameter; this request has {len(values)}.")
    return values[0] if values else None


def _read(req: ProtocolRequest) -> ProtocolQuery:
    default = req.args.getlist("default-graph-uri")
    named = req.args.getlist("named-graph-uri")
    if req.method in ("GET", "HEAD"):
        if "update" in req.args:
            raise Problem(
                400,
                "SPARQL Update is never accepted with GET (SPARQL 1.1 Protocol, "
                "section 2.2); this endpoint is read-only anyway.",
            )
        return ProtocolQuery(_only(req.args.getlist("query"), "query"), default, named)
    if req.mimetype == FORM and req.form is not None:
        if "update" in req.form:
            raise read_only()
        default += req.form.getlist("default-graph-uri")
        named += req.form.getlist("named-graph-uri")
        query = _only(req.form.getlist("query"), "query")
        if query is None:
            raise Problem(400, "The form has no 'query' field.")
        return ProtocolQuery(query, default, named)
    if req.mimetype == "application/sparql-update":
        raise read_only()
    if req.mimetype != QUERY_BODY:
        raise Problem(
            415,
            f"POST a query as {FORM} (field 'query') or as "
            f"{QUERY_BODY}; got {req.mimetype or 'no Content-Type'!r}.",
            extensions={"accepted": [FORM, QUERY_BODY]},
        )
    charset = req.params.get("charset", "utf-8").lower()
    if charset not in ("utf-8", "utf8"):
        raise Problem(415, f"Queries must be UTF-8 (SPARQL 1.1 Protocol); got charset={charset}.")
    try:
        return ProtocolQuery(req.body.decode("utf-8"), default, named)
    except UnicodeDecodeError as exc:
        raise Problem(400, f"The query is not valid UTF-8 at byte {exc.start}.") from exc


def read_only() -> Problem:
    """Return the 403 for an update sent to the read-only endpoint."""
    return Problem(
        403,
        "This endpoint is read-only. SPARQL Update is served at /update to "
        "holders of the admin token.",
        QAB.Forbidden,
    )


def format_parameters(req: ProtocolRequest) -> tuple[str, ...]:
    """Return the ``format`` parameters of the URL, a separator, then those of a form body."""
    posted = req.method == "POST" and req.form is not None and req.mimetype == FORM
    if not req.args and not posted:  # the common case: no fields at all
        return ("|",)
    form = req.form.getlist("format") if posted and req.form is not None else []
    return (*req.args.getlist("format"), "|", *form)

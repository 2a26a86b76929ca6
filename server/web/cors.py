"""Cross-origin reads: ``Access-Control-Allow-Origin: *`` on every public read, and preflights.

Everything a ``GET`` or ``HEAD`` answers is public data (or data the reader's own bearer token
opened), and so are query results from ``POST /sparql``: browser tools on other origins may
read them all. The grant is never made with credentials (no ``Access-Control-Allow-Credentials``,
so browsers send no cookies with these requests), and never to the write paths: a cross-origin
``POST`` to a form, ``/update`` or an upload gets no CORS headers, and its preflight is refused,
so a browser never sends it. The response headers scripts need (validators, ``Link``, result
counts) are exposed.
"""

from __future__ import annotations

from flask import Flask, Response, request

ALLOWED_HEADERS = frozenset(
    {
        "accept",
        "accept-language",
        "content-language",
        "content-type",
        "if-none-match",
        "if-modified-since",
        "if-range",
        "range",
        "authorization",
    }
)
EXPOSED_HEADERS = (
    "ETag, Last-Modified, Link, Content-Location, Content-Range, Accept-Ranges, "
    "Content-Disposition, Retry-After, X-Request-Id, X-Result-Truncated, X-Result-Row-Limit, "
    "X-Result-Byte-Limit, X-Result-Rows"
)
# Paths whose POST is a read (a SPARQL query), so other origins may send it.
READ_POSTS = frozenset({"/sparql"})
# The headers of the grant.
GRANT = (("Access-Control-Allow-Origin", "*"), ("Access-Control-Expose-Headers", EXPOSED_HEADERS))
MAX_AGE_SECONDS = 86400


def _is_public_read() -> bool:
    return request.method in ("GET", "HEAD") or (
        request.method == "POST" and request.path in READ_POSTS
    )


def grant(response: Response) -> Response:
    """Add the cross-origin read grant to ``response`` (no credentials)."""
    for name, value in GRANT:
        response.headers[name] = value
    return response


def preflight() -> Response:
    """Answer a CORS preflight (``OPTIONS`` with ``Access-Control-Request-Method``).

    Public reads are allowed with the headers scripts send for them; anything else gets a 204
    without a grant, which the browser treats as a refusal.
    """
    response = Response(status=204)
    method = request.headers.get("Access-Control-Request-Method", "").upper()
    asked = {
        h.strip().lower()
        for h in request.headers.get("Access-Control-Request-Headers", "").split(",")
        if h.strip()
    }
    methods = ["GET", "HEAD", *(["POST"] if request.path in READ_POSTS else [])]
    if method in methods and asked <= ALLOWED_HEADERS:
        grant(response)
        response.headers["Access-Control-Allow-Methods"] = ", ".join(methods)
        if asked:
            response.headers["Access-Control-Allow-Headers"] = ", ".join(sorted(asked))
        response.headers["Access-Control-Max-Age"] = str(MAX_AGE_SECONDS)
    response.headers["Vary"] = (
        "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
    )
    return response


def _intercept() -> Response | None:
    if request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers:
        return preflight()
    return None


def _after(response: Response) -> Response:
    if _is_public_read() and "Access-Control-Allow-Origin" not in response.headers:
        grant(response)
    return response


def install(app: Flask) -> None:
    """Grant cross-origin reads on every public response of ``app`` and answer preflights."""
    app.before_request(_intercept)
    app.after_request(_after)

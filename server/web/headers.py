"""Headers every response carries, the trusted reverse proxy, and cookies that follow TLS.

* Every response carries a Content Security Policy that lets pages run only the scripts and
  styles served from ``/static`` (no inline script, no ``eval``, no plugins), refuses framing
  (``frame-ancestors 'none'`` and ``X-Frame-Options: DENY``), plus ``X-Content-Type-Options:
  nosniff`` and ``Referrer-Policy: same-origin`` (URLs may carry ``?token=``; they never leave
  the site in a ``Referer``).
* Every response carries ``X-Request-Id``, the id a problem document and the log quote.
* Cross-origin reads: ``Access-Control-Allow-Origin: *`` on every public read, and preflights.
  Everything a ``GET`` or ``HEAD`` answers is public data (or data the reader's own bearer
  token opened), and so are query results from ``POST /sparql``: browser tools on other
  origins may read them all. The grant is never made with credentials (no
  ``Access-Control-Allow-Credentials``, so browsers send no cookies with these requests), and
  never to the write paths: a cross-origin ``POST`` to a form, ``/update`` or an upload gets no
  CORS headers, and its preflight is refused, so a browser never sends it. The response
  headers scripts need (validators, ``Link``, result counts) are exposed.
* ``server.trusted_proxy`` names the reverse proxy (its address, or ``*``) whose
  ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are believed; from anyone else those headers are
  ignored. The client address (rate limits) and the scheme (``Secure`` cookies) come from there.
* The session cookie is ``Secure`` exactly when the request came over TLS (directly, or through
  the trusted proxy); the token cookies of ``server.web.auth`` follow the same rule.

Nothing here reads or writes the store.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Iterable
from typing import TYPE_CHECKING

from flask import Flask, Response, g, request
from flask.sessions import SecureCookieSessionInterface
from werkzeug.middleware.proxy_fix import ProxyFix

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


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


def _preflight_or_none() -> Response | None:
    if request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers:
        return preflight()
    return None


def _grant_public_read(response: Response) -> Response:
    if _is_public_read() and "Access-Control-Allow-Origin" not in response.headers:
        grant(response)
    return response


# Request ids: a random prefix per process and a counter (16 hex digits; unique across restarts
# and workers without a random draw per request, which cost 5 % of a trivial SPARQL request).
_ID_PREFIX = secrets.token_hex(4)
_ID_COUNTER = itertools.count()


def new_request_id() -> str:
    """Return a fresh request id.

    >>> len(new_request_id()), new_request_id() != new_request_id()
    (16, True)
    """
    return f"{_ID_PREFIX}{next(_ID_COUNTER) & 0xFFFFFFFF:08x}"


def request_id() -> str:
    """Return the id of the current request (also sent as ``X-Request-Id``), drawn when first
    asked for."""
    rid = g.get("request_id")
    if rid is None:
        rid = new_request_id()
        g.request_id = rid
    return str(rid)


class TrustedProxy:
    """WSGI middleware: apply ``X-Forwarded-For``/``-Proto`` only from the trusted proxy."""

    def __init__(self, app: WSGIApplication, proxy: str) -> None:
        self._app = app
        self._proxy = proxy
        # One proxy hop: the last address it appended is the client, its scheme the request's.
        self._fixed = ProxyFix(app, x_for=1, x_proto=1, x_host=0, x_port=0, x_prefix=0)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        """Serve one request, believing forwarded headers only from the trusted proxy."""
        if self._proxy in ("*", environ.get("REMOTE_ADDR")):
            return self._fixed(environ, start_response)
        return self._app(environ, start_response)


class TlsSessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie sessions, ``Secure`` whenever the request came over TLS."""

    def get_cookie_secure(self, app: Flask) -> bool:
        """Return whether the session cookie must be ``Secure`` (the request used TLS)."""
        return bool(request.is_secure)


def _every_response(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    response.headers["X-Request-Id"] = request_id()
    return _grant_public_read(response)


def install_headers(app: Flask, trusted_proxy: str) -> None:
    """Add the headers every response carries, preflights, the trusted-proxy rule and
    TLS-following sessions to ``app``.

    Args:
        app: the application.
        trusted_proxy: ``server.trusted_proxy`` (empty: forwarded headers are never believed).
    """
    if trusted_proxy:
        app.wsgi_app = TrustedProxy(app.wsgi_app, trusted_proxy)  # type: ignore[method-assign]
    app.session_interface = TlsSessionInterface()
    app.before_request(_preflight_or_none)
    app.after_request(_every_response)

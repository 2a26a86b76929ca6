"""Security headers on every response, the trusted reverse proxy, and cookies that follow TLS.

* Every response carries a Content Security Policy that lets pages run only the scripts and
  styles served from ``/static`` (no inline script, no ``eval``, no plugins), refuses framing
  (``frame-ancestors 'none'`` and ``X-Frame-Options: DENY``), plus ``X-Content-Type-Options:
  nosniff`` and ``Referrer-Policy: same-origin`` (URLs may carry ``?token=``; they never leave
  the site in a ``Referer``).
* ``server.trusted_proxy`` names the reverse proxy (its address, or ``*``) whose
  ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are believed; from anyone else those headers are
  ignored. The client address (rate limits) and the scheme (``Secure`` cookies) come from there.
* The session cookie is ``Secure`` exactly when the request came over TLS (directly, or through
  the trusted proxy); the token cookies of ``server.web.auth`` follow the same rule.

Nothing here reads or writes the store.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from flask import Flask, Response, request
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


def install_headers(app: Flask, trusted_proxy: str) -> None:
    """Add the security headers, the trusted-proxy rule and TLS-following sessions to ``app``.

    Args:
        app: the application.
        trusted_proxy: ``server.trusted_proxy`` (empty: forwarded headers are never believed).
    """
    if trusted_proxy:
        app.wsgi_app = TrustedProxy(app.wsgi_app, trusted_proxy)  # type: ignore[method-assign]
    app.session_interface = TlsSessionInterface()

    @app.after_request
    def _security_headers(response: Response) -> Response:
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

"""Access tokens of private experiments as requests present them, and the admin token check.

Owners present a token as ``Authorization: Bearer <token>`` or ``?token=<token>``; a token that
opens something is remembered in an HttpOnly cookie so that links keep working. Tokens are
compared only through their SHA-256 hashes (``store.visibility``).
"""

from __future__ import annotations

import hmac

from flask import Response, request

COOKIE = "qabench_tokens"
# Tokens kept in the cookie at most (each opens one or more private experiments).
MAX_COOKIE_TOKENS = 8


def bearer_token() -> str | None:
    """Return the token of an ``Authorization: Bearer`` header, if any."""
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


def request_tokens() -> list[str]:
    """Return every access token the current request presents (header, query, cookie)."""
    found: list[str] = []
    bearer = bearer_token()
    if bearer:
        found.append(bearer)
    found.extend(t for t in request.args.getlist("token") if t)
    found.extend(t for t in request.cookies.get(COOKIE, "").split() if t)
    return found[: MAX_COOKIE_TOKENS * 2]


def remember_tokens(response: Response, opened_something: bool) -> Response:
    """Keep ``?token=`` values in an HttpOnly cookie when they opened a private experiment."""
    fresh = [t for t in request.args.getlist("token") if t]
    if not fresh or not opened_something:
        return response
    kept = fresh + [t for t in request.cookies.get(COOKIE, "").split() if t not in fresh]
    response.set_cookie(
        COOKIE,
        " ".join(kept[:MAX_COOKIE_TOKENS]),
        httponly=True,
        samesite="Lax",
        secure=request.is_secure,
        path="/",
    )
    return response


def is_admin(admin_token: str | None) -> bool:
    """Return whether the request carries the admin bearer token (constant-time compare)."""
    presented = bearer_token()
    if not admin_token or not presented:
        return False
    return hmac.compare_digest(presented.encode("utf-8"), admin_token.encode("utf-8"))

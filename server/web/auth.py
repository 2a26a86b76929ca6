"""Who may see and do what: access tokens, the submit and admin tokens, sessions and CSRF.

* **Reading private experiments**: owners present the experiment's access token as
  ``Authorization: Bearer <token>`` or ``?token=<token>``; a token that opens something is
  remembered in an HttpOnly cookie so that links keep working. Tokens are compared only through
  their SHA-256 hashes (``store.visibility``).
* **Administration** (SPARQL Update at ``/update``) needs the admin token, read once from the
  environment variable ``QABENCH_ADMIN_TOKEN``; without it every update is refused.

The write forms (docs/server.md, "Forms and the write path"):

* **Submitting** (start an experiment, evaluate an answers file, upload a dataset) needs the
  *submit token*: the environment variable ``QABENCH_SUBMIT_TOKEN``, or else a token generated
  at start-up and written to ``<data dir>/submit-token`` (readable by the operator only). The
  admin token (``QABENCH_ADMIN_TOKEN``) works as well. Scripts send it as
  ``Authorization: Bearer``; browsers type it into the form once, after which their session
  remembers it (a fingerprint of the token, never the token).
* **Publishing** needs the experiment's own access token (header, ``?token=``, the token cookie
  or a form field) or the admin token.
* **CSRF**: a browser form post must carry the per-session ``csrf_token`` of the form it came
  from, and its ``Origin`` and ``Sec-Fetch-Site`` headers, when sent, must say same-origin.
  Requests that authenticate with an ``Authorization`` header are exempt (browsers never add
  that header on their own, so a forged cross-site request cannot carry it).

Sessions are Flask's signed cookie (``qabench_session``, HttpOnly, SameSite=Lax), signed with
``QABENCH_SECRET_KEY`` or a key made at start-up. Nothing here is module-level state.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from flask import Flask, Response, current_app, request, session
from itsdangerous import BadSignature
from werkzeug.http import parse_cookie

from server.config import Config
from server.web.problems import Problem

log = logging.getLogger(__name__)

SUBMIT_TOKEN_ENV = "QABENCH_SUBMIT_TOKEN"  # noqa: S105 (a variable name, not a secret)
# The bearer token that enables SPARQL Update at /update (a secret, so never in config.toml).
ADMIN_TOKEN_ENV = "QABENCH_ADMIN_TOKEN"  # noqa: S105 (a variable name, not a secret)
SECRET_KEY_ENV = "QABENCH_SECRET_KEY"  # noqa: S105 (a variable name)
SUBMIT_TOKEN_FILE = "submit-token"  # noqa: S105 (a file name)
SESSION_COOKIE = "qabench_session"
_KEY = "form_secrets"
_CSRF = "csrf"
_SUBMITTER = "submitter"

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


def remember_tokens(response: Response) -> Response:
    """Keep ``?token=`` values in an HttpOnly cookie (call it when they opened a private
    experiment)."""
    fresh = [t for t in request.args.getlist("token") if t]
    if not fresh:
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


@dataclass(frozen=True, slots=True)
class FormSecrets:
    """The tokens that open the write forms of one app."""

    submit_token: str
    admin_token: str | None = None
    token_file: Path | None = None


def load_form_secrets(config: Config) -> FormSecrets:
    """Return the admin token and the submit token from the environment (or a generated one).

    Without ``QABENCH_SUBMIT_TOKEN`` a submit token is generated and written to
    ``<data dir>/submit-token`` (mode 0600).

    Args:
        config: the configuration (the token file goes into its data directory).
    """
    admin_token = os.environ.get(ADMIN_TOKEN_ENV, "").strip() or None
    configured = os.environ.get(SUBMIT_TOKEN_ENV, "").strip()
    if configured:
        return FormSecrets(configured, admin_token)
    token = secrets.token_urlsafe(24)
    path = config.data_dir / SUBMIT_TOKEN_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)
    path.write_text(token + "\n", encoding="utf-8")
    log.info("submit token for the web forms written to %s", path)
    return FormSecrets(token, admin_token, path)


def install(app: Flask, secrets_: FormSecrets) -> None:
    """Configure the session cookie and keep ``secrets_`` on ``app``."""
    app.secret_key = os.environ.get(SECRET_KEY_ENV, "") or secrets.token_bytes(32)
    app.config.update(
        SESSION_COOKIE_NAME=SESSION_COOKIE,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
    )
    app.extensions[_KEY] = secrets_


def form_secrets() -> FormSecrets:
    """Return the form secrets of the current app."""
    found = current_app.extensions[_KEY]
    assert isinstance(found, FormSecrets)
    return found


def csrf_token() -> str:
    """Return the CSRF token of the current session (creating the session when needed)."""
    token = session.get(_CSRF)
    if not isinstance(token, str) or not token:
        token = secrets.token_urlsafe(24)
        session[_CSRF] = token
    return token


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


def _fingerprint(token: str) -> str:
    return hashlib.sha256(("qabench-submitter:" + token).encode("utf-8")).hexdigest()[:32]


def check_csrf() -> None:
    """Refuse a form post that may come from another site.

    Raises:
        Problem: 403 when the origin headers name another site or the CSRF token is missing
            or wrong. Requests with an ``Authorization`` header are not checked.
    """
    if bearer_token() is not None:
        return
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None and site not in ("same-origin", "none"):
        raise Problem(403, f"Cross-site form post refused (Sec-Fetch-Site: {site[:40]}).")
    origin = request.headers.get("Origin")
    if origin is not None and origin != "null":
        own = urlsplit(request.host_url)
        theirs = urlsplit(origin)
        if (theirs.scheme, theirs.netloc) != (own.scheme, own.netloc):
            raise Problem(403, f"Form post from another origin refused ({origin[:80]}).")
    sent = request.form.get("csrf_token", "")
    expected = session.get(_CSRF)
    if not sent or not isinstance(expected, str) or not _same(sent, expected):
        raise Problem(
            403,
            "The form's CSRF token is missing or does not belong to this session. Reload the "
            "form and submit it again.",
        )


def is_submitter() -> bool:
    """Return whether the session already proved that it holds the submit token."""
    remembered = session.get(_SUBMITTER)
    expected = _fingerprint(form_secrets().submit_token)
    return isinstance(remembered, str) and _same(remembered, expected)


def _opens_forms(token: str) -> bool:
    found = form_secrets()
    return _same(token, found.submit_token) or bool(
        found.admin_token and _same(token, found.admin_token)
    )


def require_submitter() -> None:
    """Check that the request may submit (bearer token, form field or session).

    Raises:
        Problem: 401 when no token is presented; 403 when the presented token is wrong.
    """
    presented = bearer_token() or request.form.get("submit_token", "").strip()
    if presented:
        if not _opens_forms(presented):
            raise Problem(403, "This submit token is not valid for this server.")
        if bearer_token() is None:
            session[_SUBMITTER] = _fingerprint(form_secrets().submit_token)
        return
    if not is_submitter():
        raise Problem(
            401,
            "Submitting needs the submit token (QABENCH_SUBMIT_TOKEN, or the token in "
            "<data dir>/submit-token): type it into the form, or send it as "
            "Authorization: Bearer.",
            headers={"WWW-Authenticate": 'Bearer realm="qabench"'},
        )


def holds_form_token() -> bool:
    """Return whether the request carries the submit or admin token (bearer or session).

    On anything but a read the session counts only with the form's CSRF token and a
    same-site origin (``check_csrf``): a post another site makes in a submitter's browser
    carries the session cookie, and must get nothing the session opens.
    """
    presented = bearer_token()
    if presented is not None:
        return _opens_forms(presented)
    if not is_submitter():
        return False
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return True
    try:
        check_csrf()
    except Problem:
        return False
    return True


def admin_enabled() -> bool:
    """Return whether this server has an admin token at all."""
    return form_secrets().admin_token is not None


def is_admin() -> bool:
    """Return whether the request carries the admin token as a bearer token (constant time)."""
    admin = form_secrets().admin_token
    presented = bearer_token()
    return bool(admin and presented and _same(presented, admin))


def upload_gate(app: Flask) -> Callable[[str, Mapping[str, str]], int]:
    """Return the check the HTTP server makes on the head of an upload (``/upload/dataset``,
    ``/experiments/new``, ``/update``) before it reads a byte of the body.

    The check returns 0 (read the body: the app decides), 401 (no credentials at all: neither
    a bearer token nor a session this server signed; for ``/update`` anything but the admin
    token) or 403 (a bearer token that opens no upload, or ``/update`` switched off), as the
    routes would answer. ``headers`` are waitress's (``AUTHORIZATION``,
    ``COOKIE``). A session this server signed is let through, as a browser's first upload
    carries the submit token in its form; the app checks it and the CSRF token.
    """
    found = app.extensions[_KEY]
    assert isinstance(found, FormSecrets)
    forms, admin = found.submit_token, found.admin_token
    signer = app.session_interface.get_signing_serializer(app)  # type: ignore[attr-defined]

    def gate(path: str, headers: Mapping[str, str]) -> int:
        updating = path == "/update"
        if updating and not admin:
            return 403
        scheme, _, value = headers.get("AUTHORIZATION", "").partition(" ")
        token = value.strip()
        if scheme.lower() == "bearer" and token:
            if admin and _same(token, admin):
                return 0
            # as the routes answer: a wrong admin token is 401, a wrong submit token 403
            return 401 if updating else (0 if _same(token, forms) else 403)
        if updating:
            return 401
        signed = parse_cookie(headers.get("COOKIE", "")).get(SESSION_COOKIE)
        if signed and signer is not None:
            try:
                signer.loads(signed)
            except BadSignature:
                return 401
            return 0
        return 401

    return gate

"""Authentication and CSRF protection of the write forms (experiments, uploads, publishing).

The scheme (docs/server.md, "Forms and the write path"):

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
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from flask import Flask, current_app, request, session

from server.config import Config
from server.web.access import bearer_token
from server.web.problems import Problem

log = logging.getLogger(__name__)

SUBMIT_TOKEN_ENV = "QABENCH_SUBMIT_TOKEN"  # noqa: S105 (a variable name, not a secret)
SECRET_KEY_ENV = "QABENCH_SECRET_KEY"  # noqa: S105 (a variable name)
SUBMIT_TOKEN_FILE = "submit-token"  # noqa: S105 (a file name)
SESSION_COOKIE = "qabench_session"
_KEY = "form_secrets"
_CSRF = "csrf"
_SUBMITTER = "submitter"


@dataclass(frozen=True, slots=True)
class FormSecrets:
    """The tokens that open the write forms of one app."""

    submit_token: str
    admin_token: str | None = None
    token_file: Path | None = None


def load_form_secrets(config: Config, admin_token: str | None) -> FormSecrets:
    """Return the submit token from the environment, or generate one and write it to a file.

    Args:
        config: the configuration (the token file goes into its data directory).
        admin_token: the admin token, which opens the forms too.
    """
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


def is_admin_request() -> bool:
    """Return whether the request carries the admin token as a bearer token."""
    admin = form_secrets().admin_token
    presented = bearer_token()
    return bool(admin and presented and _same(presented, admin))

"""Security headers on every kind of response, forwarded headers believed only from the
trusted proxy, and cookies that are ``Secure`` exactly when the request came over TLS."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from server.web.headers import SECURITY_HEADERS
from tests.plugins.server import (
    OWNER_TOKEN,
    PRIVATE_EXPERIMENT,
    build_app,
    fixture_quads,
    server_config,
)

PATHS = [
    ("/", "text/html"),
    ("/datasets", "text/html"),
    (f"/experiment/{PRIVATE_EXPERIMENT}", "text/html"),  # a 404 problem page
    ("/sparql?query=ASK%7B%7D", "application/sparql-results+json"),
    ("/static/sparql.js", "*/*"),
    ("/context.jsonld", "application/ld+json"),
]


@pytest.mark.parametrize(("path", "accept"), PATHS)
def test_every_response_carries_the_security_headers(client: Any, path: str, accept: str) -> None:
    response = client.get(path, headers={"Accept": accept})
    for name, value in SECURITY_HEADERS.items():
        assert response.headers[name] == value, (path, name)
    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy
    response.close()  # static files are streamed from an open file


def test_path_count() -> None:
    assert len(PATHS) == 6


def _cookie(response: Any, name: str) -> str:
    found = [v for v in response.headers.getlist("Set-Cookie") if v.startswith(name + "=")]
    assert found, response.headers
    return found[0]


def _secure(response: Any, name: str) -> bool:
    return "; secure" in _cookie(response, name).lower()


def test_cookies_are_secure_only_over_tls(app: Any) -> None:
    # The session cookie (CSRF token of the forms) and the token cookie of ?token=; each
    # request from a fresh client, so that each one sets its cookie.
    html = {"Accept": "text/html"}
    plain = app.test_client().get("/upload", headers=html)
    assert not _secure(plain, "qabench_session")
    tls = app.test_client().get("/upload", headers=html, base_url="https://localhost")
    assert _secure(tls, "qabench_session")
    token = f"/experiment/{PRIVATE_EXPERIMENT}?token={OWNER_TOKEN}"
    assert not _secure(app.test_client().get(token), "qabench_tokens")
    assert _secure(app.test_client().get(token, base_url="https://localhost"), "qabench_tokens")


def test_forwarded_proto_is_believed_only_from_the_trusted_proxy(tmp_path: Path) -> None:
    forwarded = {"Accept": "text/html", "X-Forwarded-Proto": "https"}
    untrusted = build_app(server_config(tmp_path / "a"), fixture_quads())
    trusted = build_app(server_config(tmp_path / "b", trusted_proxy="127.0.0.1"), fixture_quads())
    other = build_app(server_config(tmp_path / "c", trusted_proxy="10.9.9.9"), fixture_quads())
    try:
        assert not _secure(
            untrusted.test_client().get("/upload", headers=forwarded), "qabench_session"
        )
        assert _secure(trusted.test_client().get("/upload", headers=forwarded), "qabench_session")
        # The test client's requests come from 127.0.0.1, which is not that proxy.
        assert not _secure(other.test_client().get("/upload", headers=forwarded), "qabench_session")
    finally:
        for app in (untrusted, trusted, other):
            app.extensions["services"].close()


@pytest.mark.browser
def test_pages_break_no_rule_of_their_policy_in_a_browser(page: Any) -> None:
    # Chromium reports every blocked script, style or frame, and every resource that failed to
    # load (the icon it asks for, say), on the console as an error; none may occur, and the
    # pages' own scripts still run (the example link fills the SPARQL editor).
    errors: list[str] = []
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    paths = ("/", "/datasets", "/experiments", "/upload", "/ask", "/leaderboard", "/sparql")
    for path in paths:
        page.goto(path)
        page.wait_for_load_state("networkidle")
    page.click("details.examples summary")
    link = page.locator("a[data-query]").first
    link.click()
    assert page.locator("#query").input_value() == link.get_attribute("data-query")
    assert errors == []

"""Every status the server emits is an RFC 9457 problem with our vocabulary's type IRI."""

from __future__ import annotations

from typing import Any

import pytest

from server.web.problems import Problem, problem_from_error
from store.errors import (
    QuerySyntaxError,
    StoreLockedError,
    UnsupportedFormatError,
    write_error,
)

QAB = "https://w3id.org/qabench/vocab#"


def _problem(response: Any, status: int, kind: str) -> dict[str, Any]:
    assert response.status_code == status
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert body["type"] == QAB + kind
    assert body["status"] == status
    assert body["title"] and body["detail"] and body["instance"].startswith("/")
    assert body["request_id"] == response.headers["X-Request-Id"]
    return dict(body)


def test_400_malformed_query_has_line_and_column(client: Any) -> None:
    body = _problem(client.get("/sparql", query_string={"query": "ASK {"}), 400, "MalformedQuery")
    assert body["line"] == 1 and body["column"] is not None


def test_403_404_405_406_413_415(client: Any) -> None:
    _problem(
        client.post("/sparql", data=b"CLEAR ALL", content_type="application/sparql-update"),
        403,
        "Forbidden",
    )
    _problem(client.get("/no/such/page"), 404, "NotFound")
    body = _problem(client.delete("/sparql"), 405, "MethodNotAllowed")
    assert "GET" in body["allowed"]
    _problem(
        client.get("/experiment/202401010001", headers={"Accept": "image/png"}),
        406,
        "NotAcceptable",
    )
    long_query = "ASK {} #" + "x" * 70_000
    _problem(
        client.post("/sparql", data=long_query, content_type="application/sparql-query"),
        413,
        "PayloadTooLarge",
    )
    _problem(
        client.post("/sparql", data=b"ASK {}", content_type="text/plain"),
        415,
        "UnsupportedMediaType",
    )


def test_401_for_updates_without_the_admin_token(client: Any) -> None:
    # The fixture app has no admin token: updates are switched off (403).
    _problem(
        client.post("/update", data=b"CLEAR ALL", content_type="application/sparql-update"),
        403,
        "Forbidden",
    )


def test_503_timeout_carries_retry_after(make_live_server: Any) -> None:
    import httpx

    live = make_live_server(query_timeout_seconds=1.0)
    query = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
    response = httpx.get(f"{live.url}/sparql", params={"query": query}, timeout=60)
    assert response.status_code == 503 and response.headers["retry-after"] == "1"
    assert response.json()["type"] == QAB + "QueryTimeout"


def test_500_hides_internals_and_logs_the_traceback(
    app: Any, caplog: pytest.LogCaptureFixture
) -> None:
    @app.route("/boom")
    def boom() -> str:
        raise RuntimeError("secret internal detail")

    response = app.test_client().get("/boom")
    body = _problem(response, 500, "InternalError")
    assert "secret" not in response.get_data(as_text=True)
    assert body["request_id"] in body["detail"]
    assert any(
        "secret internal detail" in (r.exc_text or "") and body["request_id"] in r.getMessage()
        for r in caplog.records
    )


def test_browsers_get_the_error_page(client: Any) -> None:
    response = client.get("/experiment/199901010001", headers={"Accept": "text/html"})
    assert response.status_code == 404 and response.mimetype == "text/html"
    html = response.get_data(as_text=True)
    assert "404" in html and "/vocab#NotFound" in html


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (QuerySyntaxError("bad", 1, 2), 400),
        (UnsupportedFormatError("x"), 415),
        (StoreLockedError("locked"), 409),
        (write_error("Writing failed", OSError("IO error: No space left on device: x")), 507),
        (ValueError("other"), None),
    ],
)
def test_domain_errors_map_to_statuses(error: Exception, status: int | None) -> None:
    mapped = problem_from_error(error)
    assert (mapped.status if mapped else None) == status


def test_problem_defaults_by_status() -> None:
    problem = Problem(409, "already running")
    assert problem.type is not None and problem.type.value == QAB + "Conflict"


def test_one_status_has_one_title_whichever_route_answers(client: Any) -> None:
    # an unknown path (Werkzeug's 404) and an unknown experiment (ours) read the same
    routed = client.get("/no/such/page").get_json()
    ours = client.get("/experiment/209901010001", headers={"Accept": "application/json"})
    assert ours.status_code == 404
    assert routed["title"] == ours.get_json()["title"] == "Not found"
    assert client.delete("/sparql").get_json()["title"] == "Method not allowed"

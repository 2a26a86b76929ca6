"""Cross-origin reads (Flask client): every public GET/HEAD, its errors and POST /sparql carry
``Access-Control-Allow-Origin: *`` without credentials; preflights allow reads and refuse
writes. (A real browser on another origin: tests/server/test_client_matrix.py.)"""

from __future__ import annotations

from typing import Any

import pytest

ORIGIN = {"Origin": "http://other.example"}
PUBLIC_GETS = [
    "/",
    "/datasets",
    "/experiments",
    "/systems",
    "/experiment/202401010001",
    "/experiment/202401010001.ttl",
    "/experiment/202401010001.jsonld",
    "/dataset/demo-qa/v1.nt",
    "/task/202401010001/1",
    "/graph/catalog.nq",
    "/vocab",
    "/context.jsonld",
    "/.well-known/void",
    "/sparql",
    "/sparql?query=ASK%7B%7D",
    "/dump.nq",
    "/leaderboard",
    "/experiment/199901010001",  # 404s are reads too
]


@pytest.mark.parametrize("url", PUBLIC_GETS)
def test_every_public_get_is_open_to_other_origins(client: Any, url: str) -> None:
    for method in (client.get, client.head):
        response = method(url, headers=ORIGIN, buffered=True)
        assert response.headers["Access-Control-Allow-Origin"] == "*", url
        assert "Access-Control-Allow-Credentials" not in response.headers
        exposed = response.headers["Access-Control-Expose-Headers"]
        assert "ETag" in exposed and "Link" in exposed


def test_public_get_table_is_complete() -> None:
    assert len(PUBLIC_GETS) == 18


def test_sparql_post_is_a_read(client: Any) -> None:
    response = client.post(
        "/sparql", data="ASK {}", content_type="application/sparql-query", headers=ORIGIN
    )
    assert response.headers["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize(
    ("url", "method", "headers"),
    [
        ("/experiment/202401010001", "GET", "accept, if-none-match"),
        ("/dump.nq", "GET", "range"),
        ("/sparql", "POST", "content-type"),
        ("/sparql", "GET", ""),
    ],
)
def test_preflight_allows_reads(client: Any, url: str, method: str, headers: str) -> None:
    asked = {"Access-Control-Request-Method": method, **ORIGIN}
    if headers:
        asked["Access-Control-Request-Headers"] = headers
    response = client.options(url, headers=asked)
    assert response.status_code == 204
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert method in response.headers["Access-Control-Allow-Methods"]
    assert "Access-Control-Allow-Credentials" not in response.headers
    for header in filter(None, (h.strip() for h in headers.split(","))):
        assert header in response.headers["Access-Control-Allow-Headers"]


@pytest.mark.parametrize(
    ("url", "method", "headers"),
    [
        ("/update", "POST", "content-type"),
        ("/experiments/new", "POST", ""),
        ("/upload/dataset", "POST", ""),
        ("/experiment/202401010001", "DELETE", ""),
        ("/experiment/202401010001", "GET", "x-custom"),
    ],
)
def test_preflight_refuses_writes(client: Any, url: str, method: str, headers: str) -> None:
    asked = {"Access-Control-Request-Method": method, **ORIGIN}
    if headers:
        asked["Access-Control-Request-Headers"] = headers
    response = client.options(url, headers=asked)
    assert "Access-Control-Allow-Origin" not in response.headers


def test_writes_get_no_cors_headers(client: Any) -> None:
    for url in ("/update", "/experiments/new", "/upload/dataset"):
        response = client.post(url, data={}, headers=ORIGIN)
        assert "Access-Control-Allow-Origin" not in response.headers, url

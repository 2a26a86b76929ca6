"""SPARQL Update at /update: admin token required, protocol dataset parameters, refusals."""

from __future__ import annotations

import http.server
import threading
from typing import Any

import httpx
import pytest

TOKEN = "test-admin-token"


@pytest.fixture
def admin_live(make_live_server: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("QABENCH_ADMIN_TOKEN", TOKEN)
    return make_live_server(quads=[])


def _update(live: Any, text: str, token: str | None = TOKEN, **params: str) -> httpx.Response:
    headers = {"Content-Type": "application/sparql-update"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.post(
        f"{live.url}/update", content=text, headers=headers, params=params, timeout=30
    )


def _ask(live: Any, query: str) -> bool:
    response = httpx.get(f"{live.url}/sparql", params={"query": query}, timeout=30)
    return bool(response.json()["boolean"])


def test_update_needs_the_admin_token(admin_live: Any) -> None:
    insert = "INSERT DATA { GRAPH <http://x.test/g> { <http://x.test/s> <http://x.test/p> 1 } }"
    assert _update(admin_live, insert, token=None).status_code == 401
    assert _update(admin_live, insert, token="wrong").status_code == 401
    assert not _ask(admin_live, "ASK { ?s ?p 1 }")
    assert _update(admin_live, insert).status_code == 204
    assert _ask(admin_live, "ASK { ?s ?p 1 }")


def test_using_graph_uri_becomes_using(admin_live: Any) -> None:
    setup = (
        "INSERT DATA { GRAPH <http://x.test/a> { <http://x.test/s> a <http://x.test/T> } "
        "GRAPH <http://x.test/b> { <http://x.test/t> a <http://x.test/T> } }"
    )
    assert _update(admin_live, setup).status_code == 204
    copy = "INSERT { GRAPH <http://x.test/out> { ?s a <http://x.test/Copied> } } WHERE { ?s a <http://x.test/T> }"
    assert _update(admin_live, copy, **{"using-graph-uri": "http://x.test/a"}).status_code == 204
    assert _ask(admin_live, "ASK { <http://x.test/s> a <http://x.test/Copied> }")
    assert not _ask(admin_live, "ASK { <http://x.test/t> a <http://x.test/Copied> }")


def test_refusals(admin_live: Any) -> None:
    with_clause = "WITH <http://x.test/g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }"
    assert (
        _update(admin_live, with_clause, **{"using-named-graph-uri": "http://x.test/g"}).status_code
        == 400
    )
    assert _update(admin_live, "CLEAR XYZ").status_code == 400
    # Issue 41: the engine's refusals of an update as written were 500s
    for refused in ("CLEAR GRAPH <http://x.test/missing>", "DROP GRAPH <http://x.test/missing>"):
        answer = _update(admin_live, refused)
        assert answer.status_code == 400, (refused, answer.text)
        assert "does not exist" in answer.json()["detail"]
    assert _update(admin_live, "CLEAR SILENT GRAPH <http://x.test/missing>").status_code == 204
    service = "INSERT { ?s ?p ?o } WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }"
    assert _update(admin_live, service).status_code == 400
    assert httpx.get(f"{admin_live.url}/update", timeout=10).status_code == 405
    form = httpx.post(
        f"{admin_live.url}/update",
        data={"update": "CLEAR ALL"},
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=10,
    )
    assert form.status_code == 204


def test_load_is_refused_and_fetches_nothing(admin_live: Any) -> None:
    """LOAD would make the server fetch any URL (like SERVICE): a real tiny site counts hits."""
    hits: list[str] = []

    class Site(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/turtle")
            self.end_headers()
            self.wfile.write(b"<http://x.test/a> <http://x.test/b> <http://x.test/c> .")

        def log_message(self, *_args: Any) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Site)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{site.server_port}/data.ttl"
        for text in (f"LOAD <{url}>", f"load silent <{url}> into graph <http://x.test/g>"):
            refused = _update(admin_live, text)
            assert refused.status_code == 400 and "LOAD" in refused.text
        assert hits == []
        # the word inside an IRI or a string is not the operation
        fine = 'INSERT DATA { <http://x.test/LOAD> <http://x.test/p> "LOAD" }'
        assert _update(admin_live, fine).status_code == 204
    finally:
        site.shutdown()
        site.server_close()

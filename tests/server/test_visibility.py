"""Private experiments: every route hides them from anonymous readers and shows them to the
holder of the access token (header, query parameter, or the cookie a query parameter sets).

Visibility itself (``store.visibility``) is checked on a real store with hand-made admin quads.
"""

from __future__ import annotations

from typing import Any

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from evaluators.cube import structure_key
from store import graphs
from store.visibility import private_experiment_ids, token_hash, visible_graphs
from tests.plugins.server import (
    BASE,
    OWNER_TOKEN,
    PRIVATE_EXPERIMENT,
    PRIVATE_MARKER,
    fixture_quads,
)
from vocab.project import QAB
from vocab.standard import XSD

PRIVATE = PRIVATE_EXPERIMENT
# (path, Accept) of every route that can show experiment data.
ROUTES = [
    (f"/experiment/{PRIVATE}", "text/html"),
    (f"/experiment/{PRIVATE}", "text/turtle"),
    (f"/experiment/{PRIVATE}.jsonld", None),
    (f"/experiment/{PRIVATE}.nt", None),
    (f"/experiment/{PRIVATE}.rdf", None),
    (f"/experiment/{PRIVATE}.nq", None),
    (f"/experiment/{PRIVATE}?format=ttl", None),
    (f"/task/{PRIVATE}/1", "text/turtle"),
    (
        f"/task/{PRIVATE}/1/cube/aggregate/{structure_key(['macro_f1', 'macro_f1_qald'])}",
        "text/turtle",
    ),
    (f"/task/{PRIVATE}/1/obs/QA/macro_f1", "text/turtle"),
    (f"/task/{PRIVATE}/1/question/1/QA", "text/turtle"),
    (f"/graph/experiment/{PRIVATE}", "application/n-quads"),
]
LISTS = [
    ("/experiments", "text/html"),
    ("/experiments.ttl", None),
    ("/dump.nq", None),
    ("/systems", "text/html"),
]


def _get(client: Any, path: str, accept: str | None, **headers: str) -> Any:
    if accept:
        headers["Accept"] = accept
    return client.get(path, headers=headers, buffered=True)


@pytest.mark.parametrize(("path", "accept"), ROUTES)
def test_private_resources_are_404_anonymously_and_200_with_the_token(
    app: Any, path: str, accept: str | None
) -> None:
    anonymous = _get(app.test_client(), path, accept)
    assert anonymous.status_code == 404
    assert PRIVATE_MARKER.encode() not in anonymous.data
    owner = _get(app.test_client(), path, accept, Authorization=f"Bearer {OWNER_TOKEN}")
    assert owner.status_code == 200, owner.data[:300]
    if (
        path.startswith(f"/experiment/{PRIVATE}")
        and "/" not in path[len(f"/experiment/{PRIVATE}") :]
    ):
        assert PRIVATE_MARKER.encode() in owner.data


@pytest.mark.parametrize(("path", "accept"), LISTS)
def test_lists_and_dumps_leave_private_experiments_out(
    app: Any, path: str, accept: str | None
) -> None:
    anonymous = _get(app.test_client(), path, accept)
    assert anonymous.status_code == 200
    assert PRIVATE.encode() not in anonymous.data and PRIVATE_MARKER.encode() not in anonymous.data
    if path != "/systems":
        owner = _get(app.test_client(), path, accept, Authorization=f"Bearer {OWNER_TOKEN}")
        assert PRIVATE.encode() in owner.data


def test_query_token_sets_an_httponly_cookie_that_keeps_working(app: Any) -> None:
    client = app.test_client()
    first = client.get(
        f"/experiment/{PRIVATE}?token={OWNER_TOKEN}", headers={"Accept": "text/turtle"}
    )
    assert first.status_code == 200
    cookie = first.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
    again = client.get(f"/experiment/{PRIVATE}", headers={"Accept": "text/turtle"})
    assert again.status_code == 200 and PRIVATE_MARKER.encode() in again.data
    assert app.test_client().get(f"/experiment/{PRIVATE}").status_code == 404


def test_a_wrong_token_opens_nothing_and_sets_no_cookie(app: Any) -> None:
    response = app.test_client().get(f"/experiment/{PRIVATE}?token=wrong")
    assert response.status_code == 404 and "Set-Cookie" not in response.headers


def test_the_admin_graph_is_never_served(app: Any) -> None:
    for headers in ({}, {"Authorization": f"Bearer {OWNER_TOKEN}"}):
        response = app.test_client().get("/graph/admin", headers=headers)
        assert response.status_code == 404
        dump = app.test_client().get("/dump.nq", headers=headers)
        assert b"accessTokenHash" not in dump.data and b"/graph/admin" not in dump.data


def test_void_counts_and_leaderboard_only_public_results(app: Any) -> None:
    void = app.test_client().get("/.well-known/void", headers={"Accept": "application/n-triples"})
    assert PRIVATE.encode() not in void.data
    board = app.test_client().get(
        "/leaderboard",
        query_string={"version": f"{BASE}/dataset/demo-qa/v1"},
        headers={"Accept": "text/html"},
    )
    assert b"0.5000" in board.data and b"0.9000" not in board.data


def test_store_visibility_functions(store: Any) -> None:
    store.add(fixture_quads())
    assert private_experiment_ids(store, BASE) == {PRIVATE}
    private_graph = graphs.experiment_graph(BASE, PRIVATE)
    anonymous = visible_graphs(store, BASE)
    assert private_graph not in anonymous and graphs.admin_graph(BASE) not in anonymous
    assert graphs.catalog_graph(BASE) in anonymous
    assert private_graph in visible_graphs(store, BASE, ["nope", OWNER_TOKEN])
    assert private_graph not in visible_graphs(store, BASE, ["nope"])
    # Publishing it makes it public for everyone.
    admin = graphs.admin_graph(BASE)
    iri = NamedNode(f"{BASE}/experiment/{PRIVATE}")
    store.apply(
        remove=[Quad(iri, QAB.published, Literal("false", datatype=XSD.boolean), admin)],
        add=[Quad(iri, QAB.published, Literal("true", datatype=XSD.boolean), admin)],
    )
    assert private_experiment_ids(store, BASE) == set()
    assert private_graph in visible_graphs(store, BASE)


def test_token_hash_is_sha256_hex() -> None:
    assert token_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


PRIVATE_OR_MISSING = [
    "/experiment/{id}",
    "/task/{id}/1",
    "/task/{id}/1.ttl",
    "/task/{id}/1/obs/qa/1",
    "/graph/experiment/{id}",
]


@pytest.mark.parametrize("template", PRIVATE_OR_MISSING)
@pytest.mark.parametrize("accept", ["text/html", "text/turtle", "application/ld+json"])
def test_a_private_resource_answers_exactly_like_a_missing_one(
    client: Any, template: str, accept: str
) -> None:
    # Same status, same headers (but the request id), same body once the id is swapped; the
    # decision is taken before the store is read (timing: bench/privacy.py).
    missing_id = "209912319999"
    private = client.get(template.format(id=PRIVATE_EXPERIMENT), headers={"Accept": accept})
    missing = client.get(template.format(id=missing_id), headers={"Accept": accept})
    assert private.status_code == missing.status_code == 404

    def _shape(response: Any, experiment_id: str) -> tuple[object, ...]:
        rid = response.headers["X-Request-Id"]
        body = response.get_data(as_text=True).replace(experiment_id, "ID").replace(rid, "RID")
        headers = sorted((k, v) for k, v in response.headers.items() if k != "X-Request-Id")
        return body, headers

    assert _shape(private, PRIVATE_EXPERIMENT) == _shape(missing, missing_id)


def test_the_owner_still_reads_a_private_task(client: Any) -> None:
    response = client.get(
        f"/task/{PRIVATE_EXPERIMENT}/1",
        headers={"Accept": "text/turtle", "Authorization": f"Bearer {OWNER_TOKEN}"},
    )
    assert response.status_code == 200 and b"ofTask" in response.get_data()

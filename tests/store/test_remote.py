"""`RemoteStore` against a real Oxigraph server (PyPI ``oxigraph``) started on loopback."""

from __future__ import annotations

import io
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pyoxigraph import Literal, NamedNode, Quad, QueryBoolean, QuerySolutions, RdfFormat, parse

from server.app import create_app
from server.config import config_from_dict
from store.errors import QuerySyntaxError, RdfSyntaxError
from store.remote import RemoteStore
from tests.plugins.server import BASE, PRIVATE_MARKER, REPO, fixture_quads

G1, G2 = NamedNode("http://x.test/g1"), NamedNode("http://x.test/g2")
S, P = NamedNode("http://x.test/s"), NamedNode("http://x.test/p")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def oxigraph_url(tmp_path: Path) -> Iterator[str]:
    """An ``oxigraph serve`` process on a free loopback port (stopped at teardown)."""
    binary = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
    port = _free_port()
    process = subprocess.Popen(
        [binary, "serve", "--location", str(tmp_path / "oxigraph"), "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/query", timeout=2)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or process.poll() is not None:
                    pytest.fail("oxigraph serve did not start")
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def remote(oxigraph_url: str) -> Iterator[RemoteStore]:
    store = RemoteStore(f"{oxigraph_url}/query", f"{oxigraph_url}/update", f"{oxigraph_url}/store")
    yield store
    store.close()


def test_writes_and_reads_round_trip(remote: RemoteStore) -> None:
    remote.add([Quad(S, P, Literal("one"), G1), Quad(S, P, Literal("two"), G2)])
    assert len(remote) == 2
    assert sorted(g.value for g in remote.graphs()) == [G1.value, G2.value]
    assert remote.has_graph(G1) and not remote.has_graph(NamedNode("http://x.test/none"))
    assert {q.object.value for q in remote.quads(S, None, None, G1)} == {"one"}
    assert len(list(remote.quads(predicate=P))) == 2
    rows = remote.select("SELECT ?o WHERE { ?s ?p ?o } ORDER BY ?o")
    assert [r["o"].value for r in rows] == ["one", "two"]
    assert remote.ask("ASK { ?s ?p 'two' }") is True


def test_query_dataset_substitutions_and_result_types(remote: RemoteStore) -> None:
    remote.add([Quad(S, P, Literal("one"), G1), Quad(S, P, Literal("two"), G2)])
    only_g1 = remote.query("SELECT ?o WHERE { ?s ?p ?o }", default_graph=[G1])
    assert isinstance(only_g1, QuerySolutions) and [r["o"].value for r in only_g1] == ["one"]
    named = remote.query("ASK { GRAPH ?g { ?s ?p 'two' } }", named_graphs=[G1])
    assert isinstance(named, QueryBoolean) and not bool(named)
    bound = remote.query(
        "SELECT ?s ?o WHERE { GRAPH ?g { ?s ?p ?o } }", substitutions={"o": Literal("two")}
    )
    assert [r["s"] for r in bound] == [S]  # type: ignore[union-attr]
    triples = list(remote.query("CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }"))  # type: ignore[arg-type]
    assert sorted(t.object.value for t in triples) == ["one", "two"]


def test_apply_drop_load_and_dump(remote: RemoteStore) -> None:
    remote.add([Quad(S, P, Literal("old"), G1)])
    remote.apply(remove=[Quad(S, P, Literal("old"), G1)], add=[Quad(S, P, Literal("new"), G1)])
    assert [q.object.value for q in remote.quads(graph=G1)] == ["new"]
    remote.load(b"<http://x.test/a> <http://x.test/p> 1 .", RdfFormat.TURTLE, graph=G2)
    assert remote.ask("ASK { GRAPH <http://x.test/g2> { ?a ?p 1 } }")
    remote.drop_graphs([G1])
    assert not remote.has_graph(G1)
    out = io.BytesIO()
    assert remote.dump(out) == 1
    assert [q.graph_name for q in parse(out.getvalue(), RdfFormat.N_QUADS)] == [G2]


def test_errors_keep_their_types(remote: RemoteStore) -> None:
    with pytest.raises(QuerySyntaxError):
        remote.query("SELECT * WHERE { ?s ?p }")
    with pytest.raises(QuerySyntaxError):
        remote.update("INSERT DATA { <s> }")
    with pytest.raises(RdfSyntaxError):
        remote.load(b"<http://x.test/a> <http://x.test/p> .", RdfFormat.N_TRIPLES, graph=G1)
    assert len(remote) == 0


def test_the_app_serves_a_remote_store(oxigraph_url: str, tmp_path: Path) -> None:
    config = config_from_dict(
        {
            "server": {"base_iri": BASE, "demo": False},
            "store": {
                "data_dir": str(tmp_path / "data"),
                "remote_query_url": f"{oxigraph_url}/query",
                "remote_update_url": f"{oxigraph_url}/update",
                "remote_store_url": f"{oxigraph_url}/store",
            },
        },
        source=REPO / "config.toml",
    )
    app = create_app(config)
    svc = app.extensions["services"]
    try:
        assert isinstance(svc.store, RemoteStore)
        svc.store.add(fixture_quads())
        svc.notify_write()
        client = app.test_client()
        page = client.get("/experiment/202401010001", headers={"Accept": "text/turtle"})
        assert page.status_code == 200 and b"Experiment" in page.data
        assert client.get("/experiment/202401010002").status_code == 404
        hidden = client.get(
            "/sparql", query_string={"query": f'ASK {{ ?s ?p "{PRIVATE_MARKER}" }}'}
        )
        assert hidden.json == {"head": {}, "boolean": False}
    finally:
        svc.close()

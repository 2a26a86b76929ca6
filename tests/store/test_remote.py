"""`RemoteStore` against real SPARQL servers on loopback: ``oxigraph serve`` and Virtuoso.

Every test taking ``engine`` runs once per server (``tests/store/engines.py`` starts them);
the tests named ``test_virtuoso_…`` cover what only Virtuoso does (permissions, its commits).
"""

from __future__ import annotations

import io
import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from flask import Flask
from pyoxigraph import (
    BlankNode,
    CanonicalizationAlgorithm,
    Dataset,
    Literal,
    NamedNode,
    Quad,
    QueryBoolean,
    QuerySolutions,
    RdfFormat,
    parse,
)
from werkzeug.test import TestResponse

from server.app import create_app
from server.cli import main
from server.config import STORE_PASSWORD_ENV, config_from_dict
from store import graphs
from store.errors import QuerySyntaxError, RdfSyntaxError, RemoteStoreError, StoreError
from store.remote import ENGINE_GRAPHS, VIRTUOSO_UPDATE_PRAGMA, RemoteStore
from store.triplestore import TripleStore
from tests import EXAMPLES
from tests.plugins.server import (
    BASE,
    OWNER_TOKEN,
    PRIVATE_EXPERIMENT,
    PRIVATE_MARKER,
    PUBLIC_EXPERIMENT,
    REPO,
    experiment_quads,
    fixture_quads,
)
from tests.store.engines import Engine, free_port, serving_oxigraph, serving_virtuoso
from vocab import iris
from vocab.project import QAB
from vocab.standard import RDF, XSD

G1, G2 = NamedNode("http://x.test/g1"), NamedNode("http://x.test/g2")
S, P = NamedNode("http://x.test/s"), NamedNode("http://x.test/p")
ENGINES = ("oxigraph", "virtuoso")
THIRD_EXPERIMENT = "202401010003"

# Real engines in processes of their own (oxigraph serve, Virtuoso): the full suite runs them,
# the fast lane leaves them out.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def virtuoso(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """One Virtuoso for the session (its start costs seconds); tests empty it first."""
    with serving_virtuoso(tmp_path_factory.mktemp("virtuoso")) as engine:
        yield engine


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """An empty SPARQL server of each kind."""
    if request.param == "virtuoso":
        server: Engine = request.getfixturevalue("virtuoso")
        server.reset()
        yield server
        return
    with serving_oxigraph(tmp_path / "oxigraph") as server:
        yield server


@pytest.fixture
def remote(engine: Engine) -> Iterator[RemoteStore]:
    store = engine.store()
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
    assert remote.ask("ASK { ?s ?p 'three' }") is False


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


# The literals qabench writes, in the forms it writes them (Python floats by their repr).
LITERALS = (
    Literal(7),
    Literal(-3),
    Literal(0.3333333333333333),
    Literal(0.1),
    Literal(12345.678),
    Literal(2.5e-05),
    Literal(1.0),
    Literal(True),
    Literal(False),
    Literal("0.25", datatype=XSD.decimal),
    Literal("2024-01-01T10:00:00Z", datatype=XSD.dateTime),
    Literal("2024-01-01T10:00:00.123456+02:00", datatype=XSD.dateTime),
    Literal("2024-01-01", datatype=XSD.date),
    Literal("http://x.test/a b", datatype=XSD.anyURI),
    Literal('{"a": [1, 2]}', datatype=RDF.JSON),
    Literal('Who wrote "Hamlet"?\nLine two\ttab é漢字 🙂'),
    Literal("Paris", language="en-GB"),
    Literal("", language="de"),
    Literal(""),
)


def test_literals_come_back_as_the_embedded_store_gives_them(remote: RemoteStore) -> None:
    written = [Quad(NamedNode(f"http://x.test/s{i}"), P, lit, G1) for i, lit in enumerate(LITERALS)]
    embedded = TripleStore.in_memory()
    embedded.add(written)
    remote.add(written)
    assert remote.snapshot() == embedded.snapshot()
    assert remote.snapshot([G1]) == embedded.snapshot([G1])
    assert sorted(remote.quads(None, P, None, G1), key=str) == embedded.snapshot()
    # Booleans and exact lookups read back as values (Virtuoso writes booleans as 1/0).
    rows = remote.select("SELECT ?o WHERE { <http://x.test/s7> ?p ?o }")
    assert rows == [{"o": Literal(True)}]
    # Doubles too, exact (Virtuoso's result writers round them to six digits).
    rows = remote.select(f"SELECT ?s ?o WHERE {{ ?s ?p ?o FILTER (datatype(?o) = {XSD.double}) }}")
    assert sorted(r["o"].value for r in rows) == sorted(
        lit.value for lit in LITERALS if lit.datatype == XSD.double
    )
    assert [q.subject for q in remote.quads(None, P, Literal(12345.678), G1)] == [
        NamedNode("http://x.test/s4")
    ]
    # A derived integer type: Oxigraph keeps xsd:integer, Virtuoso the type; the value is one.
    remote.add([Quad(S, P, Literal("12", datatype=XSD.nonNegativeInteger), G2)])
    assert remote.ask("ASK { ?s ?p 12 }")
    # Removing by value works for every kind of literal.
    remote.apply(remove=written[:10])
    assert len(remote) == len(LITERALS) - 10 + 1


def test_apply_drop_load_and_dump(remote: RemoteStore) -> None:
    remote.add([Quad(S, P, Literal("old"), G1)])
    remote.apply(remove=[Quad(S, P, Literal("old"), G1)], add=[Quad(S, P, Literal("new"), G1)])
    assert [q.object.value for q in remote.quads(graph=G1)] == ["new"]
    remote.load(b"<http://x.test/a> <http://x.test/p> 1 .", RdfFormat.TURTLE, graph=G2)
    assert remote.ask("ASK { GRAPH <http://x.test/g2> { ?a ?p 1 } }")
    remote.drop_graphs([G1])
    assert not remote.has_graph(G1)
    remote.drop_graphs([G1, NamedNode("http://x.test/never")])  # dropping nothing is no error
    out = io.BytesIO()
    assert remote.dump(out) == 1
    assert [q.graph_name for q in parse(out.getvalue(), RdfFormat.N_QUADS)] == [G2]


@pytest.mark.parametrize("size", [1, 600])
def test_apply_keeps_a_value_both_removed_and_added(remote: RemoteStore, size: int) -> None:
    # Both engines store a dateTime written with +00:00 as the same value with Z, so the quad
    # read back differs from the one written again: the removal must run first (Virtuoso's
    # DELETE … INSERT … WHERE {} inserts first, then deletes, and would lose it).
    written = Quad(S, P, Literal("2024-01-01T10:00:00+00:00", datatype=XSD.dateTime), G1)
    remote.add([written])
    stored = list(remote.quads(S, P, None, G1))
    bulk = [Quad(NamedNode(f"http://x.test/b{i}"), P, Literal(i), G1) for i in range(size - 1)]
    remote.apply(remove=stored, add=[written, *bulk])
    assert len(list(remote.quads(S, P, None, G1))) == 1 and len(remote) == size


def test_replace_graph_keeps_what_stays_and_other_graphs(remote: RemoteStore) -> None:
    keep, old = Quad(S, P, Literal("keep"), G1), Quad(S, P, Literal("old"), G1)
    other = Quad(S, P, Literal("other"), G2)
    remote.add([keep, old, other])
    remote.replace_graph(G1, [keep, Quad(S, P, Literal("new"), G1)])
    assert sorted(q.object.value for q in remote.quads(graph=G1)) == ["keep", "new"]
    assert list(remote.quads(graph=G2)) == [other]


def test_large_writes_are_whole(remote: RemoteStore) -> None:
    # Past the one-operation template, apply inserts then deletes; add is one data block.
    first = [Quad(NamedNode(f"http://x.test/a{i}"), P, Literal(i), G1) for i in range(3000)]
    second = [Quad(NamedNode(f"http://x.test/b{i}"), P, Literal(i), G1) for i in range(3000)]
    remote.add(first)
    assert len(remote) == 3000
    remote.apply(remove=first, add=second)
    assert len(remote) == 3000
    assert not remote.ask("ASK { <http://x.test/a1> ?p ?o }")
    assert remote.ask("ASK { <http://x.test/b2999> ?p 2999 }")
    # A quad both removed and added stays (remove, then add).
    remote.apply(remove=second[:10], add=second[:5])
    assert len(remote) == 2995 and remote.ask("ASK { <http://x.test/b4> ?p 4 }")


def test_blank_nodes_load_and_link(remote: RemoteStore, engine: Engine) -> None:
    turtle = b"<http://x.test/s> <http://x.test/p> [ <http://x.test/q> 'inner' ] ."
    remote.load(turtle, RdfFormat.TURTLE, graph=G1)
    remote.add([Quad(S, P, BlankNode("fresh"), G2), Quad(BlankNode("fresh"), P, Literal("x"), G2)])
    for graph, inner in ((G1, "inner"), (G2, "x")):
        rows = remote.query(
            "SELECT ?v WHERE { GRAPH ?g { <http://x.test/s> ?p ?b . ?b ?q ?v } }",
            default_graph=[],
            named_graphs=[graph],
        )
        assert [r["v"].value for r in rows] == [inner]  # type: ignore[union-attr]
    node = next(q.object for q in remote.quads(S, P, None, G1))
    assert isinstance(node, BlankNode)
    found = [q.object.value for q in remote.quads(node, None, None, G1)]
    # Virtuoso names its blank nodes (<nodeID://…>); other engines cannot be asked about one.
    assert found == (["inner"] if engine.name == "virtuoso" else [])


def test_graph_prefix_scopes_the_store(engine: Engine) -> None:
    ours, theirs = NamedNode("http://x.test/ours/g"), NamedNode("http://x.test/theirs/g")
    everything = engine.store()
    scoped = engine.store(graph_prefix="http://x.test/ours/")
    try:
        everything.add([Quad(S, P, Literal("a"), ours), Quad(S, P, Literal("b"), theirs)])
        assert not ENGINE_GRAPHS & {g.value for g in everything.graphs()}
        assert len(everything) == 2
        assert scoped.graphs() == [ours] and len(scoped) == 1
        assert [q.graph_name for q in scoped.quads()] == [ours]
        assert not scoped.has_graph(theirs) and list(scoped.quads(graph=theirs)) == []
        assert scoped.select("SELECT ?o WHERE { ?s ?p ?o }") == [{"o": Literal("a")}]
    finally:
        everything.close()
        scoped.close()


def test_errors_keep_their_types(remote: RemoteStore) -> None:
    with pytest.raises(QuerySyntaxError):
        remote.query("SELECT * WHERE { ?s ?p }")
    with pytest.raises(QuerySyntaxError):
        remote.update("INSERT DATA { <s> }")
    with pytest.raises(RdfSyntaxError):
        remote.load(b"<http://x.test/a> <http://x.test/p> .", RdfFormat.N_TRIPLES, graph=G1)
    assert len(remote) == 0


def test_a_result_cut_short_is_an_error_not_an_answer(remote: RemoteStore, engine: Engine) -> None:
    # 110 x 110 rows: more than the Virtuoso fixture's ResultSetMaxRows (Oxigraph has none).
    numbers = " ".join(str(n) for n in range(110))
    query = f"SELECT ?a ?b WHERE {{ VALUES ?a {{ {numbers} }} VALUES ?b {{ {numbers} }} }}"
    if engine.name == "virtuoso":
        with pytest.raises(RemoteStoreError, match="ResultSetMaxRows"):
            remote.query(query)
    else:
        assert len(list(remote.query(query))) == 110 * 110  # type: ignore[arg-type]


def test_an_unreachable_or_silent_server_is_a_store_error() -> None:
    gone = f"http://127.0.0.1:{free_port()}"
    store = RemoteStore(f"{gone}/query", f"{gone}/update", timeout=2)
    with socket.socket() as silent:  # accepts connections (backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        mute = f"http://127.0.0.1:{silent.getsockname()[1]}"
        slow = RemoteStore(f"{mute}/query", f"{mute}/update", timeout=0.5)
        try:
            with pytest.raises(RemoteStoreError, match="Cannot reach"):
                store.graphs()
            with pytest.raises(RemoteStoreError, match="Cannot reach"):
                store.add([Quad(S, P, Literal("x"), G1)])
            with pytest.raises(RemoteStoreError, match="did not answer in time"):
                slow.graphs()
            with pytest.raises(RemoteStoreError, match="may or may not have taken effect"):
                slow.update(f"INSERT DATA {{ GRAPH {G1} {{ {S} {P} 'x' }} }}")
        finally:
            store.close()
            slow.close()


# ---------------------------------------------------------------- Virtuoso only
def test_virtuoso_refused_write_leaves_the_store_as_it_was(virtuoso: Engine) -> None:
    # Virtuoso refuses xsd:duration values in SPARQL Update while it runs the operation.
    virtuoso.reset()
    store = virtuoso.store()
    poison = Quad(S, P, Literal("P1D", datatype=XSD.duration), G1)
    before = [Quad(NamedNode(f"http://x.test/a{i}"), P, Literal(i), G1) for i in range(1000)]
    try:
        store.add(before)
        for size in (10, 1000):  # the removal runs, the insertion is refused, the removal undone
            new = [Quad(NamedNode(f"http://x.test/n{i}"), P, Literal(i), G1) for i in range(size)]
            with pytest.raises(RemoteStoreError, match="refused the write"):
                store.apply(remove=before, add=[*new, poison])
            assert store.snapshot() == sorted(before, key=str)
        with pytest.raises(RemoteStoreError, match="refused the write"):
            store.add([Quad(S, P, Literal("x"), G2), poison])
        with pytest.raises(RemoteStoreError, match="refused the write"):
            store.replace_graph(G1, [poison])
        assert store.snapshot() == sorted(before, key=str)
        # Where Virtuoso cannot be all-or-nothing: a request of several operations keeps those
        # that ran before the failing one (the large apply above puts its removal back).
        with pytest.raises(StoreError):  # Virtuoso answers 400 here, as for a syntax error
            store.update(
                f"{VIRTUOSO_UPDATE_PRAGMA}INSERT DATA {{ GRAPH {G2} {{ {S} {P} 'kept' }} }} ;\n"
                f"INSERT DATA {{ GRAPH {G2} {{ {S} {P} {poison.object} }} }}"
            )
        assert [q.object.value for q in store.quads(graph=G2)] == ["kept"]
    finally:
        store.close()


def test_virtuoso_credentials_and_anonymous_readers(virtuoso: Engine) -> None:
    virtuoso.reset()
    store = virtuoso.store()
    secret = Quad(S, P, Literal(PRIVATE_MARKER), G1)
    store.add([secret])
    no_password = RemoteStore(virtuoso.query_url, virtuoso.update_url, virtuoso.store_url)
    wrong = RemoteStore(
        virtuoso.query_url, virtuoso.update_url, user="qabench", password="not-the-password"
    )
    try:
        for client in (no_password, wrong):
            with pytest.raises(RemoteStoreError, match="401"):
                client.add([Quad(S, P, Literal("intruder"), G1)])
            with pytest.raises(RemoteStoreError, match="401"):
                client.graphs()
        # The open endpoint answers anyone, but the setup denies anonymous reads of every graph.
        public = virtuoso.query_url.replace("/sparql-auth", "/sparql")
        answer = httpx.post(
            public,
            data={"query": f'SELECT * WHERE {{ GRAPH ?g {{ ?s ?p "{PRIVATE_MARKER}" }} }}'},
            headers={"Accept": "application/sparql-results+json"},
        )
        assert answer.status_code == 200 and answer.json()["results"]["bindings"] == []
        assert list(store.quads()) == [secret]
    finally:
        store.close()
        no_password.close()
        wrong.close()


# ---------------------------------------------------------------- the app over each engine
def _app(tmp: Path, engine: Engine | None) -> Flask:
    store: dict[str, object] = {"data_dir": str(tmp / "data")}
    if engine is not None:
        store |= {
            "remote_query_url": engine.query_url,
            "remote_update_url": engine.update_url,
            "remote_store_url": engine.store_url,
            "remote_user": engine.user,
        }
    config = config_from_dict(
        {"server": {"base_iri": BASE, "demo": False, "query_workers": 1}, "store": store},
        source=REPO / "config.toml",
    )
    app = create_app(config)
    app.extensions["services"].store.add(fixture_quads() + THIRDS)
    app.extensions["services"].notify_write()
    return app


VERSION = f"{BASE}/dataset/demo-qa/v1"
# Values with more digits than Virtuoso's result writers keep (six significant ones).
THIRDS = [
    *experiment_quads(BASE, THIRD_EXPERIMENT, {"macro_f1": 2 / 3, "micro_f1": 0.123456789}),
    Quad(
        iris.experiment_iri(BASE, THIRD_EXPERIMENT),
        QAB.published,
        Literal(True),
        graphs.admin_graph(BASE),
    ),
]
PAGES = (
    "/",
    "/datasets",
    "/experiments",
    "/systems",
    "/dataset/demo-qa",
    "/dataset/demo-qa/v1",
    "/dataset/demo-qa/v1/question/2",
    f"/experiment/{PUBLIC_EXPERIMENT}",
    f"/experiment/{PRIVATE_EXPERIMENT}",
    f"/experiment/{PRIVATE_EXPERIMENT}?token={OWNER_TOKEN}",
    f"/task/{PUBLIC_EXPERIMENT}/1",
    f"/experiment/{THIRD_EXPERIMENT}",
    f"/task/{THIRD_EXPERIMENT}/1",
    "/system/demo-system",
    f"/leaderboard?version={VERSION}&type=QA",
    "/.well-known/void",
)
QUERIES = (
    "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }",
    "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g ORDER BY ?g",
    f'ASK {{ ?s ?p "{PRIVATE_MARKER}" }}',
    "SELECT ?v WHERE { ?o <http://purl.org/linked-data/cube#measureType> ?m ; ?m ?v } ORDER BY ?v",
)


def _html(response: TestResponse) -> str:
    # Forms carry a per-session CSRF token, error pages a request id and the VoID table fresh
    # blank nodes; the rest must match.
    text = re.sub(r'name="csrf_token" value="[^"]*"', "", response.get_data(as_text=True))
    text = re.sub(r"_:[0-9a-f]+", "_:", text)
    return re.sub(r"id <code>[0-9a-f]+</code>", "", text)


def test_the_app_serves_a_remote_store_as_the_embedded_one(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(STORE_PASSWORD_ENV, engine.password)
    embedded, remote = _app(tmp_path / "embedded", None), _app(tmp_path / "remote", engine)
    try:
        assert isinstance(remote.extensions["services"].store, RemoteStore)
        ours, theirs = embedded.test_client(), remote.test_client()
        for path in PAGES:
            for accept in ("text/html", "text/turtle"):
                want = ours.get(path, headers={"Accept": accept})
                got = theirs.get(path, headers={"Accept": accept})
                assert got.status_code == want.status_code, (path, accept)
                assert got.mimetype == want.mimetype, (path, accept)
                if want.mimetype == "text/html":
                    assert _html(got) == _html(want), (path, accept)
                elif want.mimetype == "text/turtle":
                    assert _dataset(got.data, RdfFormat.TURTLE) == _dataset(
                        want.data, RdfFormat.TURTLE
                    ), path
        for query in QUERIES:
            for token in ("", OWNER_TOKEN):
                args = {"query": query, "token": token} if token else {"query": query}
                accept = {"Accept": "application/sparql-results+json"}
                want = ours.get("/sparql", query_string=args, headers=accept)
                got = theirs.get("/sparql", query_string=args, headers=accept)
                assert (got.status_code, got.json) == (want.status_code, want.json), query
        # A reader without the owner's token (the clients above hold it as a cookie now).
        dump = remote.test_client().get("/dump.nq")
        assert dump.status_code == 200 and PRIVATE_MARKER.encode() not in dump.data
        assert _dataset(dump.data, RdfFormat.N_QUADS) == _dataset(
            embedded.test_client().get("/dump.nq").data, RdfFormat.N_QUADS
        )
    finally:
        embedded.extensions["services"].close()
        remote.extensions["services"].close()


def _dataset(data: bytes, rdf_format: RdfFormat) -> Dataset:
    dataset = Dataset(
        q if isinstance(q, Quad) else Quad(q.subject, q.predicate, q.object)
        for q in parse(data, rdf_format)
    )
    dataset.canonicalize(CanonicalizationAlgorithm.UNSTABLE)
    return dataset


# ---------------------------------------------------------------- the command line over each engine
COMMANDS = (
    ["datasets", "load", str(EXAMPLES / "example-questions.json"), "--json"],
    ["datasets", "load", str(EXAMPLES / "example-questions.json"), "--json"],  # unchanged
    ["kb", "load", str(EXAMPLES / "example-kb.ttl"), "--name", "example", "--json"],
    ["kb", "load", str(EXAMPLES / "example-kb.ttl"), "--name", "example", "--json"],  # replace
    ["kb", "list", "--json"],
    ["datasets", "list", "--json"],
)


RUN = [
    "experiment",
    "run",
    "--dataset",
    "qabench-example",
    "--builtin",
    "gold",
    "--answers",
    f"example={EXAMPLES / 'example-answers.json'}",
    "--publish",
    "--json",
]
# Differ between two runs of the same commands: clock times, durations, the new access token.
VOLATILE = frozenset({"loaded_at", "created", "started", "ended", "avg_millis", "token"})


def _steady(document: object) -> object:
    if isinstance(document, dict):
        return {k: _steady(v) for k, v in document.items() if k not in VOLATILE}
    if isinstance(document, list):
        return [_steady(v) for v in document]
    if isinstance(document, str) and "/graph/kb/" in document:
        return document.rsplit("/", 1)[0]  # a knowledge base's graph is named after its load
    return document


def _run(config: Path, command: list[str], capsys: pytest.CaptureFixture[str]) -> object:
    assert main(["--config", str(config), *command]) == 0, command
    return _steady(json.loads(capsys.readouterr().out))


def test_commands_write_to_the_remote_store(
    engine: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(STORE_PASSWORD_ENV, engine.password)
    common = f'[server]\nbase_iri = "{BASE}"\ndemo = false\n'
    embedded = tmp_path / "embedded.toml"
    embedded.write_text(f'{common}[store]\ndata_dir = "{tmp_path / "embedded"}"\n')
    remote = tmp_path / "remote.toml"
    remote.write_text(
        f'{common}[store]\ndata_dir = "{tmp_path / "remote"}"\n'
        f'remote_query_url = "{engine.query_url}"\nremote_update_url = "{engine.update_url}"\n'
        f'remote_store_url = "{engine.store_url}"\nremote_user = "{engine.user}"\n'
    )
    for command in COMMANDS:
        assert _run(remote, command, capsys) == _run(embedded, command, capsys), command
    # An experiment: task states, results and publication written, then read back.
    ran = _run(remote, RUN, capsys)
    assert ran == _run(embedded, RUN, capsys)
    assert isinstance(ran, dict)
    show = ["experiment", "show", str(ran["id"]), "--json"]
    assert _run(remote, show, capsys) == _run(embedded, show, capsys)
    assert not (tmp_path / "remote" / "store").exists()  # nothing went to an embedded store
    store = engine.store(graph_prefix=f"{BASE}/graph/")
    try:
        assert {g.value.rsplit("/graph/", 1)[1] for g in store.graphs()} >= {
            "catalog",
            "dataset/qabench-example/v1",
        }
        assert any(g.value.startswith(f"{BASE}/graph/kb/example/") for g in store.graphs())
    finally:
        store.close()

"""Fixtures for the web server: a hand-built store, the app, its test client, a live server and
a Playwright page driving Debian's Chromium.

The data follows the shapes in docs/server.md (datasets in the catalog graph, questions in
version graphs, experiments with Data Cube observations in their own graphs, publication state
in the admin graph). One experiment is private; its token is ``OWNER_TOKEN``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from evaluators import cube
from evaluators.results import (
    EvaluationResult,
    ExperimentTypeResult,
    MeasureValue,
    QuestionScore,
)
from server import httpd
from server.app import create_app
from server.cli.serve import build_servers
from server.config import Config, config_from_dict
from server.services import Services
from store import graphs
from store.triplestore import TripleStore
from store.visibility import token_hash
from tests import REPO
from vocab import iris
from vocab.project import QAB
from vocab.standard import DCAT, DCTERMS, PROV, RDF, RDFS, XSD

BASE = "http://qabench.test"
PUBLIC_EXPERIMENT = "202401010001"
PRIVATE_EXPERIMENT = "202401010002"
OWNER_TOKEN = "owner-secret-token"
PRIVATE_MARKER = "PRIVATE-MARKER-7f3a"
XSS_TEXT = "<script>window.__xss = 1</script>Who wrote <b>Hamlet</b>?"
ARTIFACTS = REPO / "test-artifacts"


def _lit(value: object, datatype: NamedNode | None = None) -> Literal:
    if isinstance(value, bool):
        return Literal("true" if value else "false", datatype=XSD.boolean)
    if isinstance(value, int):
        return Literal(str(value), datatype=XSD.integer)
    if isinstance(value, float):
        return Literal(repr(value), datatype=XSD.double)
    return Literal(str(value), datatype=datatype) if datatype else Literal(str(value))


def dataset_quads(base: str = BASE) -> list[Quad]:
    """Return one dataset with one version of three questions (one carrying markup)."""
    catalog = graphs.catalog_graph(base)
    version_graph = graphs.dataset_graph(base, "demo-qa", 1)
    ds, v1 = iris.dataset_iri(base, "demo-qa"), iris.dataset_version_iri(base, "demo-qa", 1)
    count = iris.sub_iri(v1, "answer-type", "resource")
    out = [
        Quad(ds, RDF.type, QAB.Dataset, catalog),
        Quad(ds, DCTERMS.identifier, _lit("demo-qa"), catalog),
        Quad(ds, DCTERMS.title, _lit("Demo QA"), catalog),
        Quad(ds, QAB.version, v1, catalog),
        Quad(v1, RDF.type, QAB.DatasetVersion, catalog),
        Quad(v1, QAB.versionNumber, _lit(1), catalog),
        Quad(v1, QAB.sha256, _lit("ab" * 32), catalog),
        Quad(v1, DCAT.byteSize, _lit(1234), catalog),
        Quad(v1, QAB.sourceFormat, _lit("qald-json"), catalog),
        Quad(v1, QAB.questionCount, _lit(3), catalog),
        Quad(v1, DCTERMS.language, _lit("en"), catalog),
        Quad(v1, QAB.graph, version_graph, catalog),
        Quad(v1, PROV.generatedAtTime, _lit("2024-01-01T00:00:00Z", XSD.dateTime), catalog),
        Quad(v1, QAB.answerTypeCount, count, catalog),
        Quad(count, QAB.answerType, QAB.Resource, catalog),
        Quad(count, QAB.count, _lit(3), catalog),
    ]
    texts = ["Who is the mayor of Berlin?", XSS_TEXT, "Is Berlin a city?"]
    for n, text in enumerate(texts, start=1):
        q = iris.question_iri(base, "demo-qa", 1, str(n))
        answers = iris.sub_iri(q, "answers", "0")
        out += [
            Quad(q, RDF.type, QAB.Question, version_graph),
            Quad(q, QAB.questionId, _lit(str(n)), version_graph),
            Quad(q, QAB.position, _lit(n), version_graph),
            Quad(q, QAB.text, Literal(text, language="en"), version_graph),
            Quad(q, QAB.answerType, QAB.Resource, version_graph),
            Quad(q, QAB.sparql, _lit(f"SELECT ?x WHERE {{ ?x ?p {n} }}"), version_graph),
            Quad(q, QAB.answerSet, answers, version_graph),
            Quad(answers, RDF.type, QAB.AnswerSet, version_graph),
            Quad(
                answers,
                QAB.answer,
                NamedNode(f"http://dbpedia.org/resource/Answer_{n}"),
                version_graph,
            ),
        ]
    # An answer IRI that must never become a clickable link.
    out.append(
        Quad(
            iris.sub_iri(iris.question_iri(base, "demo-qa", 1, "2"), "answers", "0"),
            QAB.answer,
            NamedNode("javascript:window.__xss=2"),
            version_graph,
        )
    )
    system = iris.system_iri(base, "Demo System")
    out += [
        Quad(system, RDF.type, QAB.System, catalog),
        Quad(system, RDFS.label, _lit("Demo System"), catalog),
    ]
    return out


def experiment_quads(
    base: str, experiment_id: str, values: dict[str, float], marker: str | None = None
) -> list[Quad]:
    """Return one experiment graph: one task, aggregate and per-question observations."""
    g = graphs.experiment_graph(base, experiment_id)
    exp = iris.experiment_iri(base, experiment_id)
    task = iris.task_iri(base, experiment_id, 1)
    system = iris.system_iri(base, "Demo System")
    v1 = iris.dataset_version_iri(base, "demo-qa", 1)
    out = [
        Quad(exp, RDF.type, QAB.Experiment, g),
        Quad(exp, DCTERMS.created, _lit("2024-01-01T10:00:00Z", XSD.dateTime), g),
        Quad(exp, QAB.task, task, g),
        Quad(task, RDF.type, QAB.Task, g),
        Quad(task, DCTERMS.identifier, _lit(1), g),
        Quad(task, QAB.system, system, g),
        Quad(system, RDFS.label, _lit("Demo System"), g),
        Quad(task, QAB.datasetVersion, v1, g),
        Quad(task, DCTERMS.language, _lit("en"), g),
        Quad(task, QAB.state, QAB.Finished, g),
        Quad(task, QAB.stateCode, _lit(0), g),
    ]
    if marker:
        out.append(Quad(exp, RDFS.comment, _lit(marker), g))
    # Results as the evaluation engine writes them (evaluators.cube).
    result = EvaluationResult(
        dataset="demo-qa",
        profile="strict",
        language="en",
        questions=3,
        results=(
            ExperimentTypeResult(
                "QA",
                tuple(MeasureValue(m, v) for m, v in values.items()),
                (QuestionScore("1", (MeasureValue("f1", 1.0),)),),
            ),
        ),
    )
    out += cube.observation_quads(
        result, base=base, task=task, graph=g, system=system, dataset_version=v1
    )
    return out


def admin_quads(base: str = BASE) -> list[Quad]:
    """Return the admin graph: one published and one private experiment."""
    admin = graphs.admin_graph(base)
    public = iris.experiment_iri(base, PUBLIC_EXPERIMENT)
    private = iris.experiment_iri(base, PRIVATE_EXPERIMENT)
    return [
        Quad(public, QAB.published, _lit(True), admin),
        Quad(private, QAB.published, _lit(False), admin),
        Quad(private, QAB.accessTokenHash, _lit(token_hash(OWNER_TOKEN)), admin),
    ]


def fixture_quads(base: str = BASE) -> list[Quad]:
    """Return the whole hand-built store used by the server tests."""
    return (
        dataset_quads(base)
        + experiment_quads(
            base, PUBLIC_EXPERIMENT, {"macro_f1_qald": 0.5, "macro_f1": 0.5, "micro_f1": 0.6}
        )
        + experiment_quads(
            base, PRIVATE_EXPERIMENT, {"macro_f1_qald": 0.9, "macro_f1": 0.9}, PRIVATE_MARKER
        )
        + admin_quads(base)
    )


def server_config(tmp: Path, **server: Any) -> Config:
    """Return a test configuration whose data lives under ``tmp``."""
    values: dict[str, Any] = {
        "base_iri": BASE,
        "demo": False,
        "query_workers": 2,
        "query_timeout_seconds": 3.0,
    }
    values.update(server)
    return config_from_dict(
        {"server": values, "store": {"data_dir": str(tmp / "data")}}, source=REPO / "config.toml"
    )


def build_app(config: Config, quads: list[Quad]) -> Any:
    """Create the app over a store holding ``quads``."""
    app = create_app(config)
    svc: Services = app.extensions["services"]
    if quads:
        svc.store.add(quads)
        svc.notify_write()
    return app


def public_write(app: Any, graph: str | None = None) -> None:
    """Write one quad into a graph (the public catalog by default) and notify the app."""
    svc: Services = app.extensions["services"]
    node = NamedNode(f"{BASE}/note/{time.time_ns()}")
    target = NamedNode(graph) if graph else graphs.catalog_graph(BASE)
    svc.store.add([Quad(node, RDFS.comment, Literal("a write"), target)])
    svc.notify_write()


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Any]:
    """The app over the hand-built store (function-scoped; closes its workers and store)."""
    application = build_app(server_config(tmp_path), fixture_quads())
    yield application
    application.extensions["services"].close()


@pytest.fixture
def client(app: Any) -> Any:
    """Flask's test client for ``app``."""
    return app.test_client()


class LiveServer:
    """The server of ``qabench serve`` for an app (waitress with the connection limits and
    the SPARQL front, ``server.cli.serve.build_servers``), its loop in a thread of the test
    process."""

    def __init__(self, application: Any) -> None:
        self.app = application
        settings = application.extensions["services"].config.server
        servers, events, adjustments = build_servers(application, settings, "127.0.0.1", 0)
        self.servers = servers
        self.url = f"http://127.0.0.1:{httpd.bound_addresses(servers)[0][1]}"
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=httpd.run, args=(servers, events, adjustments, self._stop), daemon=True
        )
        self._thread.start()

    @property
    def front(self) -> Any:
        """Return the SPARQL front (None when ``server.sparql_front`` is off)."""
        return self.servers[0].front

    def shutdown(self) -> None:
        """Stop serving (the app's store and workers stay open)."""
        if self._thread.is_alive():
            httpd.stop_soon(self.servers, self._stop)
            self._thread.join(10)

    @property
    def services(self) -> Services:
        """Return the app's services."""
        found: Services = self.app.extensions["services"]
        return found

    def stop(self) -> None:
        """Stop serving and release the app's store and workers."""
        self.shutdown()
        self.services.close()


@pytest.fixture
def live_server(app: Any) -> Iterator[LiveServer]:
    """``app`` served over HTTP on a free loopback port."""
    server = LiveServer(app)
    yield server
    server.shutdown()


@pytest.fixture(scope="module")
def shared_live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A live server over the hand-built store, shared by a module's read-only tests.

    Module scope because starting query workers costs about a second; tests using it must not
    write (those use ``live_server``).
    """
    tmp = tmp_path_factory.mktemp("shared-live")
    server = LiveServer(build_app(server_config(tmp), fixture_quads()))
    server.services.pool.start()
    server.services.pool.wait_ready(60)
    yield server
    server.stop()


@pytest.fixture
def make_live_server(tmp_path: Path) -> Iterator[Callable[..., LiveServer]]:
    """Return a factory of live servers with custom data and settings (stopped at teardown)."""
    started: list[LiveServer] = []

    def _make(quads: list[Quad] | None = None, **server: Any) -> LiveServer:
        sub = tmp_path / f"server{len(started)}"
        live = LiveServer(
            build_app(server_config(sub, **server), fixture_quads() if quads is None else quads)
        )
        started.append(live)
        return live

    yield _make
    for live in started:
        live.stop()


@pytest.fixture
def page(live_server: LiveServer) -> Iterator[Any]:
    """A Playwright page in Debian's Chromium, pointed at ``live_server``."""
    from playwright.sync_api import sync_playwright

    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        pytest.fail("Debian's chromium is missing: run ./dev test (it installs it)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(chromium),
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-background-networking",
                "--disable-gpu",
                "--disable-component-update",
                "--no-first-run",
            ],
        )
        context = browser.new_context(base_url=live_server.url)
        yield context.new_page()
        context.close()
        browser.close()


@pytest.fixture
def store_with(tmp_path: Path) -> Iterator[Callable[[list[Quad]], TripleStore]]:
    """Return a factory of real stores preloaded with quads."""
    opened: list[TripleStore] = []

    def _make(quads: list[Quad]) -> TripleStore:
        ts = TripleStore.open(tmp_path / f"store{len(opened)}")
        ts.add(quads)
        opened.append(ts)
        return ts

    yield _make
    for ts in opened:
        ts.close()

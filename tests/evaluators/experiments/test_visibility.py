"""Private experiments stay private on every route the server has.

A real experiment runner writes one private and one published experiment into the app's store;
then every rule of ``app.url_map`` is requested anonymously (several media types, SPARQL queries
that name the private graph) and no response may mention the private experiment. A new route
without an entry in ``ROUTE_ARGUMENTS`` fails the test, so the list cannot silently go stale.
"""

from __future__ import annotations

import gzip
import html
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

import pytest

from evaluators.datasets import library
from evaluators.experiments.model import SoftwareRelease
from evaluators.experiments.runner import ExperimentRequest, ExperimentRunner, SystemRequest
from evaluators.systems.protocol import SystemKind
from evaluators.systems.registry import builtin_registry
from server.app import create_app
from server.config import Config
from store import graphs
from store.visibility import private_experiment_ids
from tests.plugins.qa_stub_experiments import QALD_FILES, limits_for_tests

ACCEPT = [
    "text/html",
    "text/turtle",
    "application/ld+json",
    "application/n-triples",
    "application/n-quads",
    "application/json",
    "application/sparql-results+json",
    "*/*",
]

SPARQL = [
    "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }",
    "SELECT ?g WHERE { GRAPH ?g { } }",
    "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }",
    "SELECT * WHERE { GRAPH <{graph}> { ?s ?p ?o } }",
    "SELECT * WHERE { <{experiment}> ?p ?o }",
    "SELECT * FROM NAMED <{graph}> WHERE { GRAPH ?g { ?s ?p ?o } }",
    "SELECT * FROM <{admin}> WHERE { ?s ?p ?o }",
    "ASK { GRAPH ?g { <{experiment}> ?p ?o } }",
]


@pytest.fixture
def world(config: Config, shared_data: Path) -> Iterator[dict[str, Any]]:
    app = create_app(config)
    svc = app.extensions["services"]
    base = config.base_iri
    library.load_dataset(
        svc.store, base, shared_data / QALD_FILES["qald-8-test"], name="qald-8-test"
    )
    runner = ExperimentRunner(
        svc.store,
        base,
        limits=limits_for_tests(),
        registry=builtin_registry(),
        release=SoftwareRelease("0.1.0"),
        on_write=svc.notify_write,
    )
    made = {}
    for label, publish in (("private", False), ("public", True)):
        submission = runner.submit(
            ExperimentRequest(
                systems=(SystemRequest(f"gold-{label}", SystemKind.BUILT_IN, builtin="gold"),),
                datasets=("qald-8-test",),
                publish=publish,
            )
        )
        runner.run(submission.id)
        made[label] = submission
    yield {"app": app, "base": base, **made}
    svc.close()


def _route_arguments(world: dict[str, Any]) -> dict[str, list[dict[str, str]]]:
    private, public = world["private"].id, world["public"].id
    exts = [{"ext": e} for e in ("html", "ttl", "jsonld", "json", "nt", "nq")]
    return {
        # the experiments, and resources minted below them (configurations, releases,
        # observations, per-question results)
        "/experiment/<path:rest>": [
            {"rest": e}
            for e in (private, public, f"{private}/system/gold-private", f"{private}/release")
        ],
        "/task/<path:rest>": [
            {"rest": t}
            for t in (
                f"{private}/1",
                f"{public}/1",
                f"{private}/1/cube/aggregate",
                f"{private}/1/obs/QA/macro_f1",
                f"{private}/1/question/1/QA",
            )
        ],
        "/dataset/<path:rest>": [{"rest": "qald-8-test"}, {"rest": "qald-8-test/v1"}],
        "/system/<path:rest>": [{"rest": "gold-private"}, {"rest": "gold-public"}],
        "/kb/<path:rest>": [{"rest": "dbpedia"}],
        "/graph/<path:rest>": [
            {"rest": f"experiment/{private}"},
            {"rest": f"experiment/{public}"},
            {"rest": "admin"},
            {"rest": "catalog"},
        ],
        "/rag/run/<path:rest>": [{"rest": "1"}],
        "/challenge/<name>": [{"name": "text2sparql-2026"}],
        "/ask/jobs/<job_id>": [{"job_id": "1"}],
        "/experiments/started/<ticket>": [{"ticket": "1"}],
        "/experiments/<experiment_id>/publish": [{"experiment_id": private}],
        "/experiment-type/<path:rest>": [{"rest": "QA"}, {"rest": "C2KB"}],
        "/profile/<path:rest>": [{"rest": "strict"}],
        "/cube/<path:rest>": [{"rest": "structure/aggregate"}, {"rest": "structure/per-question"}],
        "/vocab/<name>": [{"name": "Experiment"}, {"name": "Task"}],
        "/datasets.<ext>": exts,
        "/experiments.<ext>": exts,
        "/systems.<ext>": exts,
        "/vocab.<ext>": exts,
        "/.well-known/void.<ext>": exts,
        "/index.<ext>": exts,
        "/sitemap/<int:number>.xml": [{"number": "1"}, {"number": "2"}],
        "/static/<path:filename>": [{"filename": "style.css"}],
    }


def _query_strings(world: dict[str, Any]) -> dict[str, list[str]]:
    """Query strings of pages that read parameters, naming tasks of the private experiment."""
    private, public = world["private"].id, world["public"].id
    version = f"{world['base']}/dataset/qald-8-test/v1"
    return {
        "/compare": [f"?a={private}/1&b={public}/1", f"?a={public}/1&b={private}/1&type=C2KB"],
        "/leaderboard": [f"?version={version}", f"?version={version}&type=C2KB&profile=any"],
    }


def _urls(app: Any, world: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    arguments = _route_arguments(world)
    queries = _query_strings(world)
    for rule in app.url_map.iter_rules():
        methods = sorted((rule.methods or set()) - {"HEAD", "OPTIONS"})
        if not rule.arguments:
            for method in methods:
                yield rule.rule, method, rule.rule
                if method == "GET":
                    for query in queries.get(rule.rule, []):
                        yield rule.rule, method, rule.rule + query
            continue
        assert rule.rule in arguments, f"new route {rule.rule}: add its arguments to this test"
        for values in arguments[rule.rule]:
            path = rule.rule
            for name, value in values.items():
                path = path.replace(f"<path:{name}>", value).replace(f"<{name}>", value)
            for method in methods:
                yield rule.rule, method, path


def _without_echo(body: str, *sent: str) -> str:
    """Drop what the request itself said (its path, its query text), which pages, download
    links and problem ``instance`` members repeat, escaped in various ways."""
    decoded = unquote_plus(html.unescape(body))
    for text in sorted((t for t in sent if t), key=len, reverse=True):
        for form in (text, json.dumps(text)[1:-1]):
            decoded = decoded.replace(form, "")
    return decoded


def _calls(client: Any, rule: str, method: str, path: str, accept: str, queries: list[str]):
    headers = {"Accept": accept}
    if method == "GET":
        yield "", client.get(path, headers=headers)
        if rule == "/sparql":
            for q in queries:
                yield q, client.get(path, query_string={"query": q}, headers=headers)
        return
    for q in queries:
        yield q, client.open(path, method=method, data={"query": q, "update": q}, headers=headers)


@pytest.mark.slow
def test_no_anonymous_response_mentions_a_private_experiment(world: dict[str, Any]) -> None:
    app = world["app"]
    client = app.test_client()
    base = world["base"]
    private = world["private"]
    graph = graphs.experiment_graph(base, private.id).value
    secret_marks = [private.id, graph, "gold-private", private.token]
    fills = {
        "{graph}": graph,
        "{experiment}": private.iri,
        "{admin}": graphs.admin_graph(base).value,
    }
    queries = []
    for text in SPARQL:
        for key, value in fills.items():
            text = text.replace(key, value)
        queries.append(text)
    requested: set[str] = set()
    seen_public = False
    responses = 0
    for rule, method, path in _urls(app, world):
        requested.add(rule)
        for accept in ACCEPT:
            for sent, response in _calls(client, rule, method, path, accept, queries):
                data = response.get_data()
                if response.mimetype == "application/gzip":  # /dump.nq.gz
                    data = gzip.decompress(data)
                body = _without_echo(data.decode("utf-8"), sent, path)
                response.close()  # static files are streamed from an open file
                location = response.headers.get("Location", "")
                for mark in secret_marks:
                    assert mark not in body and mark not in location, (path, accept, method, sent)
                seen_public = seen_public or world["public"].id in body
                responses += 1
    assert requested == {r.rule for r in app.url_map.iter_rules()}  # every route was exercised
    # and no anonymous request changed anything: the private experiment is still private
    store = app.extensions["services"].store
    assert private_experiment_ids(store, base) == {private.id}
    assert responses > 100
    assert seen_public  # the same requests do show published experiments


def test_the_owner_token_opens_the_private_experiment(world: dict[str, Any]) -> None:
    client = world["app"].test_client()
    private = world["private"]
    path = f"/experiment/{private.id}"
    anonymous = client.get(path, headers={"Accept": "text/turtle"})
    assert anonymous.status_code == 404
    # the same answer as for an experiment that never existed
    assert (
        client.get("/experiment/199901010000", headers={"Accept": "text/turtle"}).status_code == 404
    )
    assert client.get(f"/task/{private.id}/1", headers={"Accept": "text/turtle"}).status_code == 404
    owner = client.get(
        path, headers={"Accept": "text/turtle", "Authorization": f"Bearer {private.token}"}
    )
    assert owner.status_code == 200
    assert private.id in owner.get_data(as_text=True)

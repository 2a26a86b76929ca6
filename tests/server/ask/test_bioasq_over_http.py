"""Benchmarking a BioASQ system over HTTP: ``/api/qa`` in BioASQ mode is scored exactly as the
built-in system is, and a task whose every measure is undefined fails with the reason."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaluators.datasets import library
from evaluators.experiments.model import CODE_SYSTEM_ERROR, TaskStatus
from evaluators.experiments.runner import ExperimentRequest, SystemRequest
from evaluators.systems.protocol import SystemKind
from server.app import create_app
from server.ask.qa_system import system_registry
from server.config import Config
from server.runner import build_runner
from tests.plugins.qa_stub import QaStub, Reply
from tests.plugins.server import LiveServer

URL = "http://www.ncbi.nlm.nih.gov/pubmed/"


def snippet(pmid: str, text: str, begin: int) -> dict[str, object]:
    # 2013-style section names: the abstract is "sections.0"
    return {
        "document": URL + pmid,
        "text": text,
        "beginSection": "sections.0",
        "endSection": "sections.0",
        "offsetInBeginSection": begin,
        "offsetInEndSection": begin + len(text) - 1,
    }


QUESTIONS = [
    {
        "id": "b1",
        "type": "yesno",
        "body": "Does aspirin reduce recurrent myocardial infarction?",
        "documents": [URL + "1000001"],
        "snippets": [
            snippet(
                "1000001",
                "Aspirin lowered the rate of recurrent myocardial infarction in 1,204 patients.",
                0,
            )
        ],
        "exact_answer": "yes",
        "ideal_answer": ["Yes, aspirin lowered the rate of recurrent infarction."],
    },
    {
        "id": "b2",
        "type": "factoid",
        "body": "Which drug caused delirium in older adults?",
        "documents": [URL + "1000005"],
        "snippets": [
            snippet(
                "1000005",
                "Six hospitalised adults developed delirium while receiving famotidine.",
                0,
            )
        ],
        "exact_answer": [["famotidine"]],
        "ideal_answer": ["Famotidine."],
    },
    {
        "id": "b3",
        "type": "summary",
        "body": "What is the effect of dexrazoxane on anthracycline cardiotoxicity?",
        "documents": [URL + "1000006"],
        "snippets": [snippet("1000006", "Dexrazoxane reduced the risk.", 77)],
        "ideal_answer": ["Dexrazoxane reduced the risk of cardiotoxicity."],
    },
]


@pytest.fixture
def app(rag_config: Config) -> Iterator[Any]:
    """The app over the fixture index (replaces the server plugin's ``app``)."""
    application = create_app(rag_config)
    yield application
    application.extensions["rag"].close()
    application.extensions["services"].close()


def run_experiment(live: LiveServer, tmp_path: Path, *systems: SystemRequest) -> Any:
    svc = live.services
    path = tmp_path / "bioasq-demo.json"
    path.write_text(json.dumps({"questions": QUESTIONS}), "utf-8")
    library.load_dataset(svc.store, svc.config.base_iri, path)
    svc.notify_write()
    registry = system_registry(live.app.extensions["rag"])
    runner = build_runner(svc.config, svc.store, registry=registry, on_write=svc.notify_write)
    submission = runner.submit(ExperimentRequest(systems=systems, datasets=("bioasq-demo",)))
    return runner.run(submission.id)


def measures(task: Any) -> dict[tuple[str, str], float | None]:
    return {
        (r.experiment_type, m.measure): m.value
        for r in task.results
        for m in r.measures
        if m.measure != "avg_millis"
    }


def test_bioasq_over_api_qa_is_scored_exactly_as_in_process(
    live_server: LiveServer, tmp_path: Path
) -> None:
    summary = run_experiment(
        live_server,
        tmp_path,
        SystemRequest("rag-http", SystemKind.WEB_SERVICE, url=f"{live_server.url}/api/qa"),
        SystemRequest("rag", SystemKind.BUILT_IN, builtin="rag"),
    )
    tasks = {t.plan.system: t for t in summary.tasks}
    assert {name: t.status for name, t in tasks.items()} == {
        "rag-http": TaskStatus.FINISHED,
        "rag": TaskStatus.FINISHED,
    }
    over_http, in_process = measures(tasks["rag-http"]), measures(tasks["rag"])
    assert over_http == in_process
    assert len(over_http) >= 30  # every BioASQ type with its measures
    assert over_http[("documents", "map")] == 1.0
    # snippets are named "sections.0" as the 2013-style gold names them, so they overlap
    assert (over_http[("snippets", "mean_f1")] or 0) > 0.3
    assert over_http[("yesno", "accuracy")] == 1.0
    assert over_http[("factoid", "mrr")] == 1.0


def test_a_task_whose_every_measure_is_undefined_fails_with_the_reason(
    live_server: LiveServer, tmp_path: Path, qa_stub: QaStub
) -> None:
    # a GERBIL QA service that answers QALD JSON only: no documents, snippets or exact answers
    qa_stub.behaviour = lambda text, lang: Reply(
        body=json.dumps({"questions": [{"id": "1", "answers": []}]}).encode()
    )
    summary = run_experiment(
        live_server, tmp_path, SystemRequest("qald-only", SystemKind.WEB_SERVICE, url=qa_stub.url)
    )
    (task,) = summary.tasks
    assert task.status is TaskStatus.FAILED and task.code == CODE_SYSTEM_ERROR
    assert "every measure is undefined" in (task.message or "")
    assert "the response has no documents" in (task.message or "")
    # the service was asked in BioASQ mode: type and id in the form, BioASQ JSON preferred
    assert all("application/vnd.bioasq+json" in r.accept for r in qa_stub.requests)
    assert all(b"type=" in r.raw_body and b"id=b" in r.raw_body for r in qa_stub.requests)
    assert len(qa_stub.requests) == len(QUESTIONS)

"""qabench benchmarks its own RAG system over HTTP: an experiment whose web-service system is
``/api/qa`` of a live server (next to the same system as a built-in), shown on its experiment page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaluators.datasets import library
from evaluators.experiments.model import TaskStatus
from evaluators.experiments.runner import ExperimentRequest, SystemRequest
from evaluators.systems.protocol import SystemKind
from server.app import create_app
from server.ask.qa_system import system_registry
from server.config import Config
from server.runner import build_runner
from store import graphs
from tests.plugins.server import ARTIFACTS, LiveServer
from vocab.project import QAB
from vocab.standard import RDF

# Three questions about the fixture corpus, with gold answers in QALD-JSON.
QUESTIONS = [
    ("1", "Does aspirin reduce recurrent myocardial infarction?", {"boolean": True}),
    ("2", "Did dexrazoxane reduce the risk of anthracycline cardiotoxicity?", {"boolean": True}),
    (
        "3",
        "Which drug caused delirium in older adults?",
        {
            "head": {"vars": ["x"]},
            "results": {"bindings": [{"x": {"type": "literal", "value": "famotidine"}}]},
        },
    ),
]


def write_dataset(path: Path) -> Path:
    doc = {
        "dataset": {"id": "rag-demo"},
        "questions": [
            {
                "id": qid,
                "answertype": "boolean" if "boolean" in answer else "string",
                "question": [{"language": "en", "string": text}],
                "answers": [answer if "boolean" not in answer else {"head": {}, **answer}],
            }
            for qid, text, answer in QUESTIONS
        ],
    }
    path.write_text(json.dumps(doc), "utf-8")
    return path


pytestmark = pytest.mark.browser


@pytest.fixture
def app(rag_config: Config) -> Iterator[Any]:
    """The app over the fixture index (replaces the server plugin's ``app`` for ``page``)."""
    application = create_app(rag_config)
    yield application
    application.extensions["rag"].close()
    application.extensions["services"].close()


def test_rag_system_benchmarked_over_http_finishes_and_is_shown(
    live_server: LiveServer, page: Any, tmp_path: Path
) -> None:
    live = live_server
    svc = live.services
    config = svc.config
    library.load_dataset(svc.store, config.base_iri, write_dataset(tmp_path / "rag-demo.json"))
    svc.notify_write()
    registry = system_registry(live.app.extensions["rag"])
    runner = build_runner(config, svc.store, registry=registry, on_write=svc.notify_write)
    request = ExperimentRequest(
        systems=(
            SystemRequest("qabench-rag-http", SystemKind.WEB_SERVICE, url=f"{live.url}/api/qa"),
            SystemRequest("rag", SystemKind.BUILT_IN, builtin="rag"),
        ),
        datasets=("rag-demo",),
        publish=True,
    )
    submission = runner.submit(request)
    summary = runner.run(submission.id)
    states = {t.plan.system: t.status for t in summary.tasks}
    assert states == {"qabench-rag-http": TaskStatus.FINISHED, "rag": TaskStatus.FINISHED}
    f1 = {t.plan.system: _qa(t).value("macro_f1") for t in summary.tasks}
    assert f1["qabench-rag-http"] == f1["rag"]
    assert f1["qabench-rag-http"] is not None and f1["qabench-rag-http"] > 0.5
    # every question asked over HTTP left a stored run
    runs = list(svc.store.quads(None, RDF.type, QAB.RagRun, graphs.rag_graph(config.base_iri)))
    assert len(runs) >= len(QUESTIONS)

    page.goto(f"/experiment/{submission.id}")
    text = page.inner_text("main")
    assert "qabench-rag-http" in text and "rag-demo" in text
    assert "finished" in text.lower()
    shots = ARTIFACTS / "ask"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / "6-experiment.png"), full_page=True)


def _qa(task: Any) -> Any:
    return next(r for r in task.results if r.experiment_type == "QA")


def test_a_question_with_yes_no_options_is_asked_as_yes_no(rag_config: Config) -> None:
    """A MIRAGE question (options yes/no/maybe, no BioASQ type) is a yes/no question even when
    its words would be read as another type."""
    from evaluators.model import Choices, Question, QuestionText
    from server.ask.qa_system import RagQASystem
    from server.ask.service import RagService

    service = RagService(rag_config)
    try:
        question = Question(
            id="q1",
            texts=(QuestionText("en", "Which drug, aspirin, lowered recurrent infarction?"),),
            choices=Choices("pubmedqa", (("A", "yes"), ("B", "no"), ("C", "maybe"))),
        )
        answered = RagQASystem(service).answer(question, "en")
        assert answered.bioasq is not None and answered.bioasq.question_type == "yesno"
        other = Question(id="q2", texts=question.texts)
        assert RagQASystem(service).answer(other, "en").bioasq.question_type == "factoid"
    finally:
        service.close()

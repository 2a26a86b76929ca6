"""Fixtures for the experiment, task, system, leaderboard, compare and form pages.

The app's store holds the example dataset (``server/examples``) and a tiny second dataset, and
experiments run by the app's own runner, so every page reads results of the real Data Cube
shape: a published experiment with a web service that is down (aborted by the 25% rule), the
example answers file, an answers file that is wrong everywhere (Macro F1 QALD undefined) and the
``gold`` system; a private experiment with ``gold``; and ``gold`` on the tiny dataset.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evaluators.datasets import library
from evaluators.experiments.runner import (
    ExperimentRequest,
    ExperimentRunner,
    Submission,
    SystemRequest,
)
from evaluators.systems.protocol import SystemKind
from server.app import create_app
from server.config import Config, config_from_dict
from server.services import RUNNER_KEY, Services
from server.web.auth import SUBMIT_TOKEN_ENV
from tests import EXAMPLES, REPO

PAGES_BASE = "http://qabench.test"
SUBMIT_TOKEN = "submit-token-for-tests"
EXAMPLE_DATASET = "qabench-example"
TINY_DATASET = "tiny-qa"
# The tiny dataset's question texts; the second carries markup that must be shown, not run.
TINY_TEXTS = ("Tiny question one?", "<script>window.__xss = 1</script>Tiny <b>two</b>?")
# Upload limit of the test app: small, so that the 413 test sends little.
MAX_UPLOAD = 300_000


def pages_config(tmp: Path) -> Config:
    """Return a configuration for page tests whose data lives under ``tmp``."""
    return config_from_dict(
        {
            "server": {
                "base_iri": PAGES_BASE,
                "demo": False,
                "query_workers": 1,
                "query_timeout_seconds": 20.0,
                "max_upload_bytes": MAX_UPLOAD,
            },
            "store": {"data_dir": str(tmp / "data")},
            # no retries, as for web services: a TEXT2SPARQL system's failed questions are not
            # asked again 5 times 15 s apart (the 2026 protocol's defaults)
            "evaluation": {
                "request_timeout_seconds": 2.0,
                "retries": 0,
                "text2sparql_retries": 0,
                "bootstrap_samples": 100,
            },
        },
        source=REPO / "config.toml",
    )


def closed_port_url() -> str:
    """Return a loopback URL where nothing listens (connections are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/qa"


def wrong_answers_file(folder: Path) -> Path:
    """Write an answers file that answers every example question with a wrong resource."""
    gold = json.loads((EXAMPLES / "example-questions.json").read_text("utf-8"))
    questions = [
        {
            "id": q["id"],
            "question": [{"language": "en", "string": "?"}],
            "answers": [
                {
                    "head": {"vars": ["uri"]},
                    "results": {
                        "bindings": [{"uri": {"type": "uri", "value": "http://example.org/wrong"}}]
                    },
                }
            ],
        }
        for q in gold["questions"]
    ]
    path = folder / "wrong-answers.json"
    path.write_text(json.dumps({"questions": questions}), "utf-8")
    return path


def tiny_dataset_file(folder: Path) -> Path:
    """Write a two-question QALD-JSON dataset (another dataset to refuse comparisons with)."""
    questions = [
        {
            "id": str(n),
            "answertype": "resource",
            "question": [{"language": "en", "string": TINY_TEXTS[n - 1]}],
            "query": {"sparql": f"SELECT ?x WHERE {{ ?x <http://example.org/p> {n} }}"},
            "answers": [
                {
                    "head": {"vars": ["x"]},
                    "results": {
                        "bindings": [{"x": {"type": "uri", "value": f"http://example.org/a{n}"}}]
                    },
                }
            ],
        }
        for n in (1, 2)
    ]
    path = folder / "tiny-qa.json"
    path.write_text(json.dumps({"dataset": {"id": TINY_DATASET}, "questions": questions}), "utf-8")
    return path


@dataclass
class PagesWorld:
    """An app with datasets and experiments, and what the tests need to know about them."""

    app: Any
    published: Submission
    private: Submission
    tiny: Submission

    @property
    def services(self) -> Services:
        """Return the app's services."""
        found: Services = self.app.extensions["services"]
        return found

    @property
    def runner(self) -> ExperimentRunner:
        """Return the app's experiment runner."""
        found: ExperimentRunner = self.app.extensions[RUNNER_KEY]
        return found


def make_forms_app(tmp: Path) -> Any:
    """Return an app with the example and tiny datasets loaded, and no experiment."""
    previous = os.environ.get(SUBMIT_TOKEN_ENV)
    os.environ[SUBMIT_TOKEN_ENV] = SUBMIT_TOKEN
    try:
        app = create_app(pages_config(tmp))
    finally:
        if previous is None:
            os.environ.pop(SUBMIT_TOKEN_ENV, None)
        else:
            os.environ[SUBMIT_TOKEN_ENV] = previous
    svc: Services = app.extensions["services"]
    library.load_dataset(
        svc.store, PAGES_BASE, EXAMPLES / "example-questions.json", name=EXAMPLE_DATASET
    )
    library.load_dataset(svc.store, PAGES_BASE, tiny_dataset_file(tmp), name=TINY_DATASET)
    svc.notify_write()
    return app


def _run(runner: ExperimentRunner, request: ExperimentRequest) -> Submission:
    submission = runner.submit(request)
    runner.run(submission.id)
    return submission


def make_pages_world(tmp: Path) -> PagesWorld:
    """Return an app holding the experiments described in the module docstring."""
    app = make_forms_app(tmp)
    runner: ExperimentRunner = app.extensions[RUNNER_KEY]
    published = _run(
        runner,
        ExperimentRequest(
            systems=(
                SystemRequest("down-service", SystemKind.WEB_SERVICE, url=closed_port_url()),
                SystemRequest(
                    "example-answers",
                    SystemKind.ANSWER_FILE,
                    answers_path=EXAMPLES / "example-answers.json",
                ),
                SystemRequest(
                    "wrong-answers", SystemKind.ANSWER_FILE, answers_path=wrong_answers_file(tmp)
                ),
                SystemRequest("gold", SystemKind.BUILT_IN, builtin="gold"),
            ),
            datasets=(EXAMPLE_DATASET,),
            owner="tests",
            publish=True,
        ),
    )
    private = _run(
        runner,
        ExperimentRequest(
            systems=(SystemRequest("gold-private", SystemKind.BUILT_IN, builtin="gold"),),
            datasets=(EXAMPLE_DATASET,),
        ),
    )
    tiny = _run(
        runner,
        ExperimentRequest(
            systems=(SystemRequest("gold", SystemKind.BUILT_IN, builtin="gold"),),
            datasets=(TINY_DATASET,),
            publish=True,
        ),
    )
    return PagesWorld(app, published, private, tiny)


@pytest.fixture(scope="module")
def pages_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PagesWorld]:
    """A module-wide app with experiments, for tests that only read (costly to build)."""
    world = make_pages_world(tmp_path_factory.mktemp("pages-world"))
    yield world
    world.services.close()


@pytest.fixture
def fresh_world(tmp_path: Path) -> Iterator[PagesWorld]:
    """An app with experiments of its own, for tests that write (publish)."""
    world = make_pages_world(tmp_path)
    yield world
    world.services.close()


@pytest.fixture
def forms_app(tmp_path: Path) -> Iterator[Any]:
    """An app with the example and tiny datasets and no experiment (form tests)."""
    app = make_forms_app(tmp_path)
    yield app
    app.extensions["services"].close()

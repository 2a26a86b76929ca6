"""SciQA's execution EM and MIRAGE on the pages: the experiment and task pages (per-question
diagnostics) and the leaderboard (issue 39)."""

from __future__ import annotations

from typing import Any

from evaluators.datasets import library
from evaluators.datasets.sciqa import load_sciqa
from evaluators.experiments.plan import ExperimentRequest, SystemRequest
from evaluators.systems.protocol import SystemKind
from server.services import RUNNER_KEY
from tests import TEST_DATA
from tests.plugins.experiment_pages import PAGES_BASE
from tests.plugins.page_helpers import HTML

SCIQA = TEST_DATA / "sciqa"
MIRAGE = TEST_DATA / "mirage"


def _run(app: Any, request: ExperimentRequest) -> str:
    runner = app.extensions[RUNNER_KEY]
    submission = runner.submit(request)
    runner.run(submission.id)
    app.extensions["services"].notify_write()
    return str(submission.id)


def test_execution_em_on_the_pages(forms_app: Any) -> None:
    store = forms_app.extensions["services"].store
    run = SCIQA / "firesparql-run.csv"
    load_sciqa(store, PAGES_BASE, SCIQA / "questions.json", gold_results=run, max_bytes=10**8,
               name="sciqa-excerpt")  # fmt: skip
    experiment = _run(
        forms_app,
        ExperimentRequest(
            systems=(
                SystemRequest("one-shot", SystemKind.ANSWER_FILE, answers_path=run),
                SystemRequest("gold", SystemKind.BUILT_IN, builtin="gold"),
            ),
            datasets=("sciqa-excerpt",),
            profiles=("execution-em",),
            publish=True,
        ),
    )
    client = forms_app.test_client()
    page = client.get(f"/experiment/{experiment}", headers=HTML).get_data(as_text=True)
    assert "EM (all)" in page and "EM (successful)" in page and "Successful queries" in page
    task = client.get(f"/task/{experiment}/1", headers=HTML).get_data(as_text=True)
    # the gold's and the system's rows, and how each answer was read
    assert "GPT-3 175B (Few-Shot)" in task and "ERROR: Invalid SPARQL query" in task
    assert ">NULL<" in task
    wrong = client.get(f"/task/{experiment}/1?wrong=1", headers=HTML).get_data(as_text=True)
    assert "AQ0392" in wrong and "AQ1475" not in wrong
    version = f"{PAGES_BASE}/dataset/sciqa-excerpt/v1"
    board = client.get(f"/leaderboard?version={version}&profile=execution-em", headers=HTML)
    assert board.status_code == 200 and "one-shot" in board.get_data(as_text=True)


def test_mirage_on_the_pages(forms_app: Any) -> None:
    store = forms_app.extensions["services"].store
    library.load_dataset(store, PAGES_BASE, MIRAGE / "benchmark-excerpt.json")
    predictions = MIRAGE / "prediction" / "{dataset}" / "cot/OpenAI/gpt-35-turbo-16k"
    experiment = _run(
        forms_app,
        ExperimentRequest(
            systems=(
                SystemRequest("gpt-3.5-cot", SystemKind.ANSWER_FILE, answers_path=predictions),
            ),
            datasets=("mirage",),
            profiles=("mirage",),
            publish=True,
        ),
    )
    client = forms_app.test_client()
    page = client.get(f"/experiment/{experiment}", headers=HTML).get_data(as_text=True)
    for label in ("MMLU-Med", "MedQA-US", "MedMCQA", "PubMedQA*", "BioASQ-Y/N"):
        assert label in page, label
    task = client.get(f"/task/{experiment}/1", headers=HTML).get_data(as_text=True)
    assert "chosen by: MIRAGE&#39;s rule" in task and "chosen by: no output stored" in task
    assert "<summary>reply</summary>" in task and "answer_choice" in task
    version = f"{PAGES_BASE}/dataset/mirage/v1"
    board = client.get(f"/leaderboard?version={version}&profile=mirage", headers=HTML)
    assert board.status_code == 200 and "gpt-3.5-cot" in board.get_data(as_text=True)

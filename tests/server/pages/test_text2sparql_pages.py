"""TEXT2SPARQL through the web: the form's protocol choice, the experiment and task pages."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from evaluators.datasets.text2sparql import load_text2sparql
from evaluators.knowledge.bases import load_kb
from evaluators.knowledge.execution import open_executor
from server.services import RUNNER_KEY
from tests.plugins.experiment_pages import PAGES_BASE
from tests.plugins.formats import T2sFiles
from tests.plugins.page_helpers import BEARER, HTML, wait_for
from tests.plugins.qa_stub import ReplayEndpoint


@pytest.fixture
def lacodam(t2s_files: T2sFiles, ck25_gold: Any) -> Iterator[ReplayEndpoint]:
    # LACODAM's recorded question strings differ from the questions file's: replay by qname
    answers = json.loads(t2s_files.result("LACODAM", "ck25", "answers").read_text())
    endpoint = ReplayEndpoint(answers, ck25_gold)
    yield endpoint
    endpoint.close()


def test_a_text2sparql_system_from_the_form_to_the_task_page(
    forms_app: Any, t2s_files: T2sFiles, lacodam: ReplayEndpoint
) -> None:
    store = forms_app.extensions["services"].store
    load_kb(store, PAGES_BASE, t2s_files.graph, "ck25")
    load_text2sparql(store, PAGES_BASE, t2s_files.questions("ck25"),
                     gold_results=t2s_files.reference("ck25"),
                     executor=open_executor(store, PAGES_BASE, "ck25"), max_bytes=10**8)  # fmt: skip
    client = forms_app.test_client()
    assert 'value="text2sparql"' in client.get("/experiments/new", headers=HTML).get_data(True)
    form = {"dataset": "ck25@1", "service_name_1": "lacodam", "service_url_1": lacodam.url,
            "service_kind_1": "text2sparql", "languages": "en", "profile": "text2sparql",
            "kb": "ck25", "publish": "1"}  # fmt: skip
    response = client.post("/experiments/new", data=form, headers=BEARER)
    assert response.status_code == 201, response.data
    experiment_id = response.get_json()["id"]
    wait_for(forms_app, experiment_id)
    (task,) = forms_app.extensions[RUNNER_KEY].summary(experiment_id).tasks
    # LACODAM answered 45 of the 50 questions (5 errors: within the 25% rule)
    assert task.status.value == "finished", task.message
    assert (len(lacodam.asked), task.errors) == (50, 5)
    page = client.get(f"/experiment/{experiment_id}", headers=HTML).get_data(as_text=True)
    assert "TEXT2SPARQL measures" in page and "set_F_ndcg" in page
    task_page = client.get(f"/task/{experiment_id}/1", headers=HTML).get_data(as_text=True)
    # the system's query, the API's reply and the reference's engine difference per question
    assert "<summary>query</summary>" in task_page and "reply:" in task_page
    assert "xsd:int" in task_page or "XMLSchema#int" in task_page

    # the leaderboard ranks by the TEXT2SPARQL headline; results as CSV; the cube over SPARQL
    version = f"{PAGES_BASE}/dataset/ck25/v1"
    board = client.get(f"/leaderboard?version={version}&profile=text2sparql", headers=HTML)
    assert board.status_code == 200 and "set_F_ndcg" in board.get_data(as_text=True)
    csv = client.get(f"/experiment/{experiment_id}?format=csv").get_data(as_text=True)
    assert "set_F_ndcg" in csv.splitlines()[0]
    query = (
        "PREFIX qab: <https://w3id.org/qabench/vocab#> PREFIX qb: <http://purl.org/linked-data/cube#> "
        "SELECT (COUNT(*) AS ?n) WHERE { ?o a qb:Observation ; qab:setFNdcg ?v }"
    )
    answer = client.get("/sparql", query_string={"query": query},
                        headers={"Accept": "application/sparql-results+json"})  # fmt: skip
    assert answer.status_code == 200, answer.data
    count = int(answer.get_json()["results"]["bindings"][0]["n"]["value"])
    assert count == 51  # one per question and the aggregate
    task_doc = client.get(f"/task/{experiment_id}/1", headers={"Accept": "text/turtle"})
    assert task_doc.status_code == 200 and b"setFNdcg" in task_doc.data

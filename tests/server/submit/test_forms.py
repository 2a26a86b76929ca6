"""The experiment forms through the Flask client: starting experiments and evaluating answers
files; authentication, CSRF, size limits and input errors with their positions.

Every test runs against its own app (``forms_app``: the example and tiny datasets loaded, the
submit token ``SUBMIT_TOKEN``) and checks the store afterwards: refused submissions store
nothing, accepted ones run to the end through the app's runner.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from server.services import RUNNER_KEY
from tests.plugins.experiment_pages import (
    EXAMPLE_DATASET,
    EXAMPLES,
    MAX_UPLOAD,
    PAGES_BASE,
    SUBMIT_TOKEN,
    TINY_DATASET,
)
from tests.plugins.page_helpers import (
    BEARER,
    HTML,
    JSON,
    cell_texts,
    csrf_of,
    experiment_ids,
    gold_form,
    html_tables,
    upload,
    wait_for,
)

# ---------------------------------------------------------------- the forms themselves


def test_new_experiment_form_offers_datasets_builtins_and_a_token_field(forms_app: Any) -> None:
    response = forms_app.test_client().get("/experiments/new", headers=HTML)
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    for value in (f"{EXAMPLE_DATASET}@1", f"{TINY_DATASET}@1", 'value="gold"', 'value="rag"'):
        assert value in html
    assert 'name="csrf_token"' in html and 'name="submit_token"' in html
    assert "HttpOnly" in response.headers["Set-Cookie"]
    assert "SameSite=Lax" in response.headers["Set-Cookie"]


# ---------------------------------------------------------------- authentication and CSRF


def test_a_post_without_the_csrf_token_is_403_and_stores_nothing(forms_app: Any) -> None:
    client = forms_app.test_client()
    client.get("/experiments/new", headers=HTML)
    response = client.post(
        "/experiments/new", data=gold_form(submit_token=SUBMIT_TOKEN), headers=JSON
    )
    assert response.status_code == 403 and response.mimetype == "application/problem+json"
    assert "CSRF" in response.get_json()["detail"]
    assert experiment_ids(forms_app) == []


@pytest.mark.parametrize(
    "headers",
    [{"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}],
    ids=["origin", "sec-fetch-site"],
)
def test_cross_site_posts_are_403_even_with_a_valid_csrf_token(
    forms_app: Any, headers: dict[str, str]
) -> None:
    client = forms_app.test_client()
    data = gold_form(csrf_token=csrf_of(client), submit_token=SUBMIT_TOKEN)
    response = client.post("/experiments/new", data=data, headers={**JSON, **headers})
    assert response.status_code == 403
    assert experiment_ids(forms_app) == []


def test_missing_submit_token_is_401_and_a_wrong_one_403(forms_app: Any) -> None:
    client = forms_app.test_client()
    token = csrf_of(client)
    missing = client.post("/experiments/new", data=gold_form(csrf_token=token), headers=JSON)
    assert missing.status_code == 401
    assert missing.headers["WWW-Authenticate"].startswith("Bearer")
    wrong = client.post(
        "/experiments/new", data=gold_form(csrf_token=token, submit_token="nope"), headers=JSON
    )
    assert wrong.status_code == 403
    bearer = client.post(
        "/experiments/new", data=gold_form(), headers={"Authorization": "Bearer nope", **JSON}
    )
    assert bearer.status_code == 403
    assert experiment_ids(forms_app) == []


def test_browser_shows_the_form_again_with_the_error(forms_app: Any) -> None:
    client = forms_app.test_client()
    response = client.post(
        "/experiments/new", data=gold_form(csrf_token=csrf_of(client)), headers=HTML
    )
    assert response.status_code == 401 and response.mimetype == "text/html"
    html = response.get_data(as_text=True)
    assert 'id="form-error"' in html and "submit token" in html and "<form" in html


# ---------------------------------------------------------------- starting experiments


def test_bearer_submission_starts_a_background_run_and_returns_the_token(forms_app: Any) -> None:
    client = forms_app.test_client()
    before = forms_app.extensions["services"].generation
    response = client.post("/experiments/new", data=gold_form(publish="1"), headers=BEARER)
    assert response.status_code == 201, response.data
    body = response.get_json()
    assert response.headers["Location"] == body["page"] == f"/experiment/{body['id']}"
    assert body["iri"] == f"{PAGES_BASE}/experiment/{body['id']}" and len(body["token"]) >= 32
    wait_for(forms_app, body["id"])
    assert forms_app.extensions["services"].generation > before  # notify_write ran
    page = client.get(body["page"], headers=HTML).get_data(as_text=True)
    table = html_tables(page, "results")[0]
    assert cell_texts(table[1])[1] == "gold" and cell_texts(table[1])[-1].startswith("finished")


def test_browser_submission_shows_the_token_once_and_remembers_session_and_token(
    forms_app: Any,
) -> None:
    client = forms_app.test_client()
    response = client.post(
        "/experiments/new",
        data=gold_form(csrf_token=csrf_of(client), submit_token=SUBMIT_TOKEN),
        headers=HTML,
    )
    assert response.status_code == 201 and response.headers["Cache-Control"] == "no-store"
    html = response.get_data(as_text=True)
    found = re.search(r'<code id="access-token">([^<]+)</code>', html)
    assert found is not None
    token = found.group(1)
    experiment_id = response.headers["Location"].rsplit("/", 1)[-1]
    wait_for(forms_app, experiment_id)
    # The token cookie opens the private experiment in this browser only.
    assert client.get(f"/experiment/{experiment_id}", headers=HTML).status_code == 200
    other = forms_app.test_client()
    assert other.get(f"/experiment/{experiment_id}", headers=HTML).status_code == 404
    opened = other.get(f"/experiment/{experiment_id}?token={token}", headers=HTML)
    assert opened.status_code == 200
    # The session remembers the submit token: the next form needs no token field.
    form = client.get("/experiments/new", headers=HTML).get_data(as_text=True)
    assert 'name="submit_token"' not in form
    again = client.post(
        "/experiments/new", data=gold_form(csrf_token=csrf_of(client)), headers=JSON
    )
    assert again.status_code == 201
    wait_for(forms_app, again.get_json()["id"])


def test_answers_file_upload_runs_it_against_its_dataset(forms_app: Any) -> None:
    client = forms_app.test_client()
    data = {
        "dataset": f"{EXAMPLE_DATASET}@1",
        "answers_file_1": upload((EXAMPLES / "example-answers.json").read_bytes(), "mine.json"),
        "answers_name_1": "my-system",
        "profile": "gerbil",
        "origin": "upload",
    }
    response = client.post(
        "/experiments/new", data=data, headers=BEARER, content_type="multipart/form-data"
    )
    assert response.status_code == 201, response.data
    experiment_id = response.get_json()["id"]
    wait_for(forms_app, experiment_id)
    summary = forms_app.extensions[RUNNER_KEY].summary(experiment_id)
    (task,) = summary.tasks
    assert (task.plan.system, task.plan.profile, task.status.value) == (
        "my-system",
        "gerbil",
        "finished",
    )
    stored = list((Path(forms_app.extensions["services"].config.data_dir) / "uploads").rglob("*"))
    assert any(p.name == "mine.json" for p in stored)  # kept for resume


def test_the_form_names_the_knowledge_base_of_the_experiment(forms_app: Any) -> None:
    from evaluators.experiments.read import experiment_facts
    from evaluators.knowledge.bases import load_kb

    services = forms_app.extensions["services"]
    load_kb(services.store, PAGES_BASE, EXAMPLES / "example-kb.ttl", "example")
    client = forms_app.test_client()
    assert 'name="kb"' in client.get("/upload", headers=HTML).get_data(as_text=True)
    gold = json.loads((EXAMPLES / "example-questions.json").read_text("utf-8"))["questions"]
    queries = json.dumps([{"id": q["id"], "sparql": q["query"]["sparql"]} for q in gold])
    scores = []
    for kb in ("example", ""):
        data = {
            "dataset": f"{EXAMPLE_DATASET}@1",
            "answers_file_1": upload(queries.encode(), "queries.json"),
            "origin": "upload",
            "kb": kb,
        }
        response = client.post(
            "/experiments/new", data=data, headers=BEARER, content_type="multipart/form-data"
        )
        assert response.status_code == 201, response.data
        experiment_id = response.get_json()["id"]
        wait_for(forms_app, experiment_id)
        (task,) = forms_app.extensions[RUNNER_KEY].summary(experiment_id).tasks
        qa = next(r for r in task.results if r.experiment_type == "QA")
        scores.append(qa.value("macro_f1"))
        facts = experiment_facts(services.store, PAGES_BASE, experiment_id)
        assert facts.knowledge_base == (kb or None)
    # the SPARQL-only answers ran on the named knowledge base only
    assert scores == [1.0, 0.0]


@pytest.mark.parametrize(
    ("content", "expected", "position"),
    [
        (b'{"questions": [', "invalid JSON", (1, 16)),
        (
            json.dumps(
                {"questions": [{"id": "99", "answers": []}, {"id": "1"}, {"id": "1"}]}
            ).encode(),
            "1 duplicated id(s): '1'",
            None,
        ),
        (
            json.dumps(
                [{"_id": "1", "corrected_question": "x", "sparql_query": "ASK {}"}]
            ).encode(),
            "expected one of",
            None,
        ),
        (b'{"questions": []}', "holds no questions", None),
    ],
    ids=["malformed", "duplicate-ids", "wrong-format", "no-questions"],
)
def test_bad_answers_files_are_refused_before_anything_runs(
    forms_app: Any, content: bytes, expected: str, position: tuple[int, int] | None
) -> None:
    client = forms_app.test_client()
    data = {"dataset": f"{EXAMPLE_DATASET}@1", "answers_file_1": upload(content)}
    response = client.post(
        "/experiments/new", data=data, headers=BEARER, content_type="multipart/form-data"
    )
    assert response.status_code == 400
    problem = response.get_json()
    assert expected in problem["detail"]
    if position is not None:
        assert (problem["line"], problem["column"]) == position
    assert experiment_ids(forms_app) == []
    uploads = forms_app.extensions["services"].config.data_dir / "uploads"
    assert not any(p.is_file() for p in uploads.rglob("*"))  # refused files are not kept


def test_ids_the_dataset_lacks_are_ignored_and_listed_unless_refused(forms_app: Any) -> None:
    client = forms_app.test_client()
    answers = json.loads((EXAMPLES / "example-answers.json").read_text("utf-8"))
    answers["questions"].append({"id": "99", "answers": []})
    content = json.dumps(answers).encode()
    refused = client.post(
        "/experiments/new",
        data={
            "dataset": f"{EXAMPLE_DATASET}@1",
            "answers_file_1": upload(content),
            "strict_ids": "1",
        },
        headers=BEARER,
        content_type="multipart/form-data",
    )
    assert refused.status_code == 400 and "not in the dataset: '99'" in refused.get_json()["detail"]
    assert experiment_ids(forms_app) == []
    response = client.post(
        "/experiments/new",
        data={"dataset": f"{EXAMPLE_DATASET}@1", "answers_file_1": upload(content, "extra.json")},
        headers=BEARER,
        content_type="multipart/form-data",
    )
    assert response.status_code == 201, response.data
    warning = f"answers file extra.json: 1 id(s) not in {EXAMPLE_DATASET}@1 were ignored: '99'"
    assert response.get_json()["warnings"] == [warning]
    wait_for(forms_app, response.get_json()["id"])
    summary = forms_app.extensions[RUNNER_KEY].summary(response.get_json()["id"])
    assert summary.warnings == (warning,) and summary.tasks[0].status.value == "finished"


def test_malformed_answers_file_position_is_shown_on_the_page(forms_app: Any) -> None:
    client = forms_app.test_client()
    data = {
        "csrf_token": csrf_of(client),
        "submit_token": SUBMIT_TOKEN,
        "dataset": f"{EXAMPLE_DATASET}@1",
        "answers_file_1": upload(b'{"questions": ['),
    }
    response = client.post(
        "/experiments/new", data=data, headers=HTML, content_type="multipart/form-data"
    )
    assert response.status_code == 400
    assert "Position: line 1, column 16." in response.get_data(as_text=True)


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        ({"builtin": "gold"}, "Choose at least one dataset"),
        ({"dataset": f"{EXAMPLE_DATASET}@1"}, "Add at least one system"),
        ({"dataset": f"{EXAMPLE_DATASET}@1", "builtin": "nope"}, "No built-in system"),
        ({"dataset": "missing@1", "builtin": "gold"}, "No dataset 'missing@1'"),
        ({"dataset": f"{EXAMPLE_DATASET}@1", "service_name_1": "x"}, "needs both"),
        (
            {"dataset": f"{EXAMPLE_DATASET}@1", "service_name_1": "x", "service_url_1": "ftp://x"},
            "not an absolute http(s) URL",
        ),
        ({"dataset": f"{EXAMPLE_DATASET}@1", "builtin": "gold", "languages": "e n!"}, "language"),
        ({"dataset": f"{EXAMPLE_DATASET}@1", "builtin": "gold", "profile": "x"}, "profile"),
        (
            {"dataset": f"{EXAMPLE_DATASET}@1", "builtin": "gold", "kb": "no-such-kb"},
            "No knowledge base 'no-such-kb'",
        ),
        (
            # a form names this server's knowledge bases only (issue 41)
            {"dataset": f"{EXAMPLE_DATASET}@1", "builtin": "gold", "kb": "http:///sparql"},
            "or its configured endpoint",
        ),
    ],
)
def test_bad_fields_are_refused_with_a_clear_problem(
    forms_app: Any, form: dict[str, str], expected: str
) -> None:
    response = forms_app.test_client().post("/experiments/new", data=form, headers=BEARER)
    assert response.status_code == 400
    assert expected in response.get_json()["detail"]
    assert experiment_ids(forms_app) == []


def test_an_oversized_upload_is_413(forms_app: Any) -> None:
    data = {
        "dataset": f"{EXAMPLE_DATASET}@1",
        "answers_file_1": upload(b" " * (MAX_UPLOAD + 1)),
    }
    response = forms_app.test_client().post(
        "/experiments/new", data=data, headers=BEARER, content_type="multipart/form-data"
    )
    assert response.status_code == 413 and response.mimetype == "application/problem+json"
    dataset = forms_app.test_client().post(
        "/upload/dataset",
        data={"dataset_file": upload(b" " * (MAX_UPLOAD + 1))},
        headers=BEARER,
        content_type="multipart/form-data",
    )
    assert dataset.status_code == 413
    assert experiment_ids(forms_app) == []

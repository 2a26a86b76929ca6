"""Dataset uploads and publishing (``server/submit/routes.py``) through the Flask client: a stored
version and a refreshed store generation, parse errors with their positions, XML entities
refused; the owner publishes with the access token and the CSRF token, nobody else can.
"""

from __future__ import annotations

import re
import socket
from typing import Any

import httpx
import pytest

from evaluators.datasets import library
from tests.plugins.experiment_pages import (
    EXAMPLES,
    PAGES_BASE,
    SUBMIT_TOKEN,
)
from tests.plugins.page_helpers import (
    BEARER,
    HTML,
    JSON,
    csrf_of,
    gold_form,
    upload,
    wait_for,
)
from tests.plugins.server import LiveServer

# ---------------------------------------------------------------- dataset upload


def test_dataset_upload_stores_a_new_version_and_refreshes_readers(forms_app: Any) -> None:
    client = forms_app.test_client()
    svc = forms_app.extensions["services"]
    before = svc.generation
    data = {
        "csrf_token": csrf_of(client, "/upload"),
        "submit_token": SUBMIT_TOKEN,
        "dataset_file": upload((EXAMPLES / "example-questions.json").read_bytes(), "x.json"),
        "name": "uploaded-example",
        "title": "Uploaded",
    }
    response = client.post(
        "/upload/dataset", data=data, headers=HTML, content_type="multipart/form-data"
    )
    assert response.status_code == 201
    assert response.headers["Location"] == "/dataset/uploaded-example/v1"
    (info,) = library.list_versions(svc.store, PAGES_BASE, "uploaded-example")
    assert info.questions == 8 and info.title == "Uploaded"
    assert svc.generation > before
    assert client.get("/dataset/uploaded-example/v1", headers=HTML).status_code == 200
    listing = client.get("/datasets", headers=HTML).get_data(as_text=True)
    assert "uploaded-example" in listing


def test_an_uploaded_dataset_is_checked_and_the_report_linked(forms_app: Any) -> None:
    client = forms_app.test_client()
    svc = forms_app.extensions["services"]
    data = {
        "csrf_token": csrf_of(client, "/upload"),
        "submit_token": SUBMIT_TOKEN,
        "dataset_file": upload((EXAMPLES / "example-questions.json").read_bytes(), "x.json"),
        "name": "checked-example",
    }
    response = client.post(
        "/upload/dataset", data=data, headers=HTML, content_type="multipart/form-data"
    )
    assert response.status_code == 201
    html = response.get_data(as_text=True)
    (info,) = library.list_versions(svc.store, PAGES_BASE, "checked-example")
    report = library.check_dataset(
        library.read_dataset(svc.store, info), library.sparql_syntax_problem
    )
    errors, warnings = report.count("error"), report.count("warning")
    assert report.findings  # the example data has findings (question 8 lacks English)
    assert f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning" in html
    assert 'href="/dataset/checked-example/v1#check"' in html
    assert "no catalog entry has this file" in html
    # stored with the version: its page shows the findings instead of "not checked"
    page = client.get("/dataset/checked-example/v1", headers=HTML).get_data(as_text=True)
    assert "not checked" not in page and 'id="check"' in page


def test_a_known_benchmark_is_recognised_by_its_checksum(forms_app: Any, shared_data: Any) -> None:
    # QALD-4's multilingual test under another file name: recognised by its content, named
    # and described as the catalog says, its knowledge base recorded
    client = forms_app.test_client()
    svc = forms_app.extensions["services"]
    path = shared_data / "qald/ag-sc_QALD/4/data/qald-4_multilingual_test_withanswers.xml"
    response = client.post(
        "/upload/dataset",
        data={"dataset_file": upload(path.read_bytes(), "my-copy.xml")},
        headers={**JSON, **BEARER},
        content_type="multipart/form-data",
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    body = response.get_json()
    name = "qald-4-multilingual-test"
    assert body["name"] == body["catalog"] == name
    assert body["knowledge_base"] == "dbpedia-3.9"
    assert body["check"]["report"] == f"/dataset/{name}/v1#check"
    (info,) = library.list_versions(svc.store, PAGES_BASE, name)
    assert info.questions == 50 and info.knowledge_base == "dbpedia-3.9"
    assert info.catalog_name == name


@pytest.mark.parametrize(
    ("content", "name", "expected", "line"),
    [
        (b'{"questions": [{"id": 1,}]}', "broken.json", "invalid JSON", 1),
        (
            b'<?xml version="1.0"?>\n<!DOCTYPE d [<!ENTITY x "y">]>\n<dataset id="a"></dataset>',
            "entities.xml",
            "DOCTYPE",
            None,
        ),
        (b'{"questions": []}', "empty.json", "holds no questions", None),
        (
            b'{"questions": [{"id": "7", "question": [{"language": "en", "string": ""}]}]}',
            "textless.json",
            "no question text in any language ('7')",
            None,
        ),
    ],
    ids=["malformed-json", "xml-entities", "no-questions", "no-question-text"],
)
def test_bad_dataset_files_are_refused_with_their_position(
    forms_app: Any, content: bytes, name: str, expected: str, line: int | None
) -> None:
    svc = forms_app.extensions["services"]
    before = len(library.list_versions(svc.store, PAGES_BASE))
    response = forms_app.test_client().post(
        "/upload/dataset",
        data={"dataset_file": upload(content, name)},
        headers=BEARER,
        content_type="multipart/form-data",
    )
    assert response.status_code == 400
    problem = response.get_json()
    assert expected in problem["detail"]
    if line is not None:
        assert problem["line"] == line and problem["column"] is not None
    assert len(library.list_versions(svc.store, PAGES_BASE)) == before


def test_forms_and_submissions_survive_a_bad_stored_record(forms_app: Any) -> None:
    from tests.evaluators.datasets.test_library import poison_store

    svc = forms_app.extensions["services"]
    poison_store(svc.store)
    svc.notify_write()
    client = forms_app.test_client()
    for path in ("/experiments/new", "/upload", "/datasets"):
        assert client.get(path, headers=HTML).status_code == 200, path
    response = client.post(
        "/experiments/new",
        data=gold_form(csrf_token=csrf_of(client), submit_token=SUBMIT_TOKEN),
        headers=JSON,
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    wait_for(forms_app, response.get_json()["id"])


# ---------------------------------------------------------------- publishing


def _start_private(forms_app: Any) -> tuple[Any, str, str]:
    client = forms_app.test_client()
    response = client.post(
        "/experiments/new",
        data=gold_form(csrf_token=csrf_of(client), submit_token=SUBMIT_TOKEN),
        headers=JSON,
    )
    assert response.status_code == 201
    body = response.get_json()
    wait_for(forms_app, body["id"])
    return client, body["id"], body["token"]


def test_the_owner_publishes_from_the_page(forms_app: Any) -> None:
    client, experiment_id, _ = _start_private(forms_app)
    page = client.get(f"/experiment/{experiment_id}", headers=HTML).get_data(as_text=True)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert csrf is not None and f"/experiments/{experiment_id}/publish" in page
    before = forms_app.extensions["services"].generation
    response = client.post(
        f"/experiments/{experiment_id}/publish", data={"csrf_token": csrf.group(1)}, headers=HTML
    )
    assert response.status_code == 303 and response.headers["Location"].endswith(experiment_id)
    assert forms_app.extensions["services"].generation > before
    anonymous = forms_app.test_client().get(f"/experiment/{experiment_id}", headers=HTML)
    assert anonymous.status_code == 200
    assert "not yet: private" not in anonymous.get_data(as_text=True)


def test_publishing_needs_the_token_and_the_csrf_token(forms_app: Any) -> None:
    owner, experiment_id, token = _start_private(forms_app)
    stranger = forms_app.test_client()
    csrf = csrf_of(stranger)
    denied = stranger.post(
        f"/experiments/{experiment_id}/publish", data={"csrf_token": csrf}, headers=JSON
    )
    assert denied.status_code == 404  # a private experiment does not exist for strangers
    wrong = stranger.post(
        f"/experiments/{experiment_id}/publish",
        data={"csrf_token": csrf, "token": "wrong"},
        headers=JSON,
    )
    assert wrong.status_code == 404
    forged = owner.post(f"/experiments/{experiment_id}/publish", headers=JSON)
    assert forged.status_code == 403  # the owner's cookie alone is not enough
    assert forms_app.test_client().get(f"/experiment/{experiment_id}").status_code == 404
    done = stranger.post(
        f"/experiments/{experiment_id}/publish",
        data={"csrf_token": csrf, "token": token},
        headers=JSON,
    )
    assert done.status_code == 200 and done.get_json()["published"] is True


# ---------------------------------------------------------------- one experiment per form


def _experiments(forms_app: Any) -> set[str]:
    return {e.id for e in forms_app.extensions["services"].experiments.entries()}


def test_a_form_sent_twice_starts_one_experiment_and_reloading_never_resubmits(
    forms_app: Any,
) -> None:
    client = forms_app.test_client()
    page = client.get("/experiments/new", headers=HTML).get_data(as_text=True)
    key = re.search(r'name="submission_key" value="([^"]+)"', page)
    assert key is not None
    form = gold_form(csrf_token=csrf_of(client), submit_token=SUBMIT_TOKEN)
    first = client.post(
        "/experiments/new", data={**form, "submission_key": key.group(1)}, headers=HTML
    )
    assert first.status_code == 303  # post/redirect/get
    receipt = first.headers["Location"]
    assert receipt.startswith("/experiments/started/") and "token" not in receipt
    shown = client.get(receipt, headers=HTML).get_data(as_text=True)
    token = re.search(r'id="access-token">([^<]+)<', shown)
    assert token is not None
    experiment_id = re.search(r"/experiment/(\d+)", shown)
    assert experiment_id is not None
    wait_for(forms_app, experiment_id.group(1))
    # reloading the page of the receipt: no second run, no token again
    again = client.get(receipt, headers=HTML)
    assert again.status_code == 200 and token.group(1) not in again.get_data(as_text=True)
    assert "private" in again.headers["Cache-Control"]
    # the same form sent again (back button, resubmit): the same experiment
    repeated = client.post(
        "/experiments/new", data={**form, "submission_key": key.group(1)}, headers=HTML
    )
    assert repeated.status_code == 303 and repeated.headers["Location"] == receipt
    assert _experiments(forms_app) == {experiment_id.group(1)}
    # another browser cannot open the receipt
    assert forms_app.test_client().get(receipt, headers=HTML).status_code == 404


def test_an_idempotency_key_makes_a_retried_api_request_start_nothing_new(
    forms_app: Any,
) -> None:
    client = forms_app.test_client()
    form = gold_form(csrf_token=csrf_of(client), submit_token=SUBMIT_TOKEN)
    headers = {**JSON, "Idempotency-Key": "retry-1"}
    first = client.post("/experiments/new", data=form, headers=headers)
    second = client.post("/experiments/new", data=form, headers=headers)
    assert first.status_code == second.status_code == 201
    assert first.get_json()["id"] == second.get_json()["id"]
    wait_for(forms_app, first.get_json()["id"])
    other = client.post("/experiments/new", data=form, headers={**JSON, "Idempotency-Key": "2"})
    assert other.get_json()["id"] != first.get_json()["id"]
    wait_for(forms_app, other.get_json()["id"])
    assert len(_experiments(forms_app)) == 2


def _head_answer(url: str, path: str, headers: dict[str, str]) -> bytes:
    """Send an upload's head announcing a body, and no body; return what comes within 2 s."""
    host, port = url.removeprefix("http://").split(":")
    lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    with socket.create_connection((host, int(port)), timeout=2) as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; "
            f"boundary=b\r\nContent-Length: 10000\r\n{lines}\r\n".encode()
        )
        try:
            return sock.recv(4096)
        except TimeoutError:
            return b""  # the server waits for the body


def test_an_upload_is_authenticated_from_its_head_before_its_body_is_read(
    forms_app: Any,
) -> None:
    # Issue 41: anonymous bodies of up to 50 MB were read in full before the 401.
    live = LiveServer(forms_app)
    try:
        session = httpx.get(f"{live.url}/experiments/new", headers=HTML).cookies.get(
            "qabench_session"
        )
        assert session
        cases = [
            ("/upload/dataset", {}, b" 401 "),
            ("/experiments/new", {}, b" 401 "),
            ("/upload/dataset", {"Authorization": "Bearer wrong"}, b" 403 "),
            ("/upload/dataset", {"Cookie": "qabench_session=forged.value.sig"}, b" 401 "),
            ("/update", {}, b" 403 "),  # no admin token: updates are off
            ("/upload/dataset", BEARER, b""),  # credentials: the body is awaited
            ("/experiments/new", {"Cookie": f"qabench_session={session}"}, b""),
        ]
        for path, headers, expected in cases:
            answer = _head_answer(live.url, path, headers)
            if expected:
                assert expected in answer.split(b"\r\n")[0], (path, headers, answer[:200])
            else:
                assert answer == b"", (path, headers, answer[:200])
    finally:
        live.shutdown()


def test_the_form_names_only_this_servers_knowledge_bases(forms_app: Any) -> None:
    # Issue 41: the form's kb field made the server send SPARQL to any URL it was given.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(2)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/sparql"
        client = forms_app.test_client()
        form = gold_form(csrf_token=csrf_of(client), submit_token=SUBMIT_TOKEN, kb=url)
        answer = client.post("/experiments/new", data=form, headers=JSON)
        assert answer.status_code == 400, answer.get_data(as_text=True)
        assert "configured endpoint" in answer.get_json()["detail"]
        with pytest.raises(TimeoutError):
            listener.accept()  # nothing was sent there
    assert _experiments(forms_app) == set()


def test_an_idempotency_key_is_bound_to_its_body_and_its_submitter(forms_app: Any) -> None:
    # Issue 41: the key ignored the body (another request with publish=on got the first
    # experiment back with 201) and its scope was the shared submit token (another submitter
    # reusing a key got that experiment's id and access token).
    headers = {**BEARER, "Idempotency-Key": "shared-key"}
    form = gold_form(submit_token=SUBMIT_TOKEN)
    client = forms_app.test_client()
    first = client.post("/experiments/new", data=form, headers=headers)
    assert first.status_code == 201
    again = client.post("/experiments/new", data=form, headers=headers)
    assert again.status_code == 201 and again.get_json()["id"] == first.get_json()["id"]
    changed = client.post("/experiments/new", data={**form, "publish": "on"}, headers=headers)
    assert changed.status_code == 422, changed.get_data(as_text=True)
    assert first.get_json()["token"] not in changed.get_data(as_text=True)
    elsewhere = forms_app.test_client().post(
        "/experiments/new",
        data=form,
        headers=headers,
        environ_base={"REMOTE_ADDR": "10.9.9.9"},
    )
    assert elsewhere.status_code == 201
    assert elsewhere.get_json()["id"] != first.get_json()["id"]
    assert elsewhere.get_json()["token"] != first.get_json()["token"]
    for answer in (first, elsewhere):
        wait_for(forms_app, answer.get_json()["id"])
    assert len(_experiments(forms_app)) == 2

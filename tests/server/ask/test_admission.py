"""Admission to the RAG system: the bounded pool (429 + Retry-After when full, pages and SPARQL
still served), the cap on request threads waiting for runs, per-client rates on /api/qa, /ask and
/ask/jobs, and heavy generators kept for token holders."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.app import create_app
from server.ask.admission import PoolFullError, RagPool
from tests.plugins.rag import rag_server_config

ASPIRIN = "Does aspirin reduce recurrent myocardial infarction?"
JSON = {"Accept": "application/json"}


def _app(tmp_path: Path, index: Path, server: dict[str, Any] | None = None, **rag: Any) -> Any:
    config = rag_server_config(tmp_path, index, **rag)
    if server:
        from dataclasses import replace

        config = replace(config, server=replace(config.server, **server))
    return create_app(config)


@pytest.fixture
def small_pool_app(tmp_path: Path, rag_index_dir: Path) -> Iterator[Any]:
    app = _app(tmp_path, rag_index_dir, workers=1, queue=1)
    yield app
    app.extensions["services"].close()


def _fill(pool: RagPool) -> threading.Event:
    """Occupy every slot of ``pool`` with work that waits until the event is set."""
    release = threading.Event()
    for _ in range(pool.capacity):
        pool.submit(lambda: release.wait(60))
    return release


def test_a_full_pool_refuses_with_retry_after_while_pages_and_sparql_answer(
    small_pool_app: Any,
) -> None:
    client = small_pool_app.test_client()
    pool: RagPool = small_pool_app.extensions["rag_pool"]
    jobs = small_pool_app.extensions["ask_jobs"]
    release = _fill(pool)
    try:
        refused = [
            client.post("/api/qa", data={"query": ASPIRIN, "lang": "en"}),
            client.post("/ask/jobs", data={"question": ASPIRIN}, headers=JSON),
            client.post("/ask", data={"question": ASPIRIN}, headers=JSON),
        ]
        for response in refused:
            assert response.status_code == 429, response.get_data(as_text=True)
            assert response.get_json()["type"].endswith("#ServerBusy")
            assert int(response.headers["Retry-After"]) >= 1
        assert len(jobs._jobs) == 0  # a refused job is not kept
        # Everything else is served while the pool is full.
        assert client.get("/", headers={"Accept": "text/html"}).status_code == 200
        assert client.get("/datasets", headers={"Accept": "text/html"}).status_code == 200
        ask = client.get("/sparql", query_string={"query": "ASK { ?s ?p ?o }"})
        assert ask.status_code == 200
    finally:
        release.set()
    # Once the work is done, questions are answered again.
    for _ in range(200):
        if pool.pending == 0:
            break
        threading.Event().wait(0.05)
    answered = client.post("/api/qa", data={"query": ASPIRIN, "lang": "en"})
    assert answered.status_code == 200


def test_at_most_half_the_request_threads_wait_for_runs() -> None:
    pool = RagPool(1, 5, sync_waiters=1)
    release, started = threading.Event(), threading.Event()

    def _block() -> None:
        started.set()
        release.wait(30)

    waiter = threading.Thread(target=pool.run, args=(_block,))
    waiter.start()
    try:
        assert started.wait(10)
        # The queue has room, but the one thread allowed to wait is already waiting.
        with pytest.raises(PoolFullError):
            pool.run(lambda: None)
        assert pool.submit(lambda: None) is not None  # background jobs still queue
    finally:
        release.set()
        waiter.join(10)
        pool.close()


def test_retry_after_follows_recent_run_times() -> None:
    pool = RagPool(1, 0, sync_waiters=1)
    try:
        pool.run(lambda: None)
        assert pool.retry_after() >= 1
        release = threading.Event()
        pool.submit(lambda: release.wait(30))
        with pytest.raises(PoolFullError) as caught:
            pool.submit(lambda: None)
        assert caught.value.retry_after >= 1
        release.set()
    finally:
        pool.close()


def test_questions_are_rate_limited_per_client(tmp_path: Path, rag_index_dir: Path) -> None:
    # 4 a minute: one at once, then one every 15 s.
    app = _app(tmp_path, rag_index_dir, server={"rag_requests_per_minute": 4})
    try:
        client = app.test_client()
        form = {"query": ASPIRIN, "lang": "en"}
        assert client.post("/api/qa", data=form).status_code == 200
        second = client.post("/api/qa", data=form)
        assert second.status_code == 429
        assert second.get_json()["type"].endswith("#TooManyRequests")
        assert 1 <= int(second.headers["Retry-After"]) <= 15
        # The same bucket covers the ask page and its jobs.
        assert client.post("/ask/jobs", data={"question": ASPIRIN}, headers=JSON).status_code == 429
        # Holders of the submit token are exempt; a bad question is refused before counting.
        token = app.extensions["form_secrets"].submit_token
        bearer = {"Authorization": f"Bearer {token}"}
        assert client.post("/api/qa", data=form, headers=bearer).status_code == 200
        assert client.post("/api/qa", data={"query": "", "lang": "en"}).status_code == 400
    finally:
        app.extensions["services"].close()


@pytest.mark.parametrize("generator", ["transformers-local", "openai-http"])
def test_heavy_generators_need_the_token_unless_opened(
    tmp_path: Path, rag_index_dir: Path, generator: str
) -> None:
    # No local model at that path: an accepted transformers-local job fails fast.
    missing = str(tmp_path / "no-model")
    closed = _app(tmp_path / "closed", rag_index_dir, model_path=missing)
    opened = _app(tmp_path / "open", rag_index_dir, open_generators=True, model_path=missing)
    try:
        form = {"question": ASPIRIN, "generator": generator}
        anonymous = closed.test_client().post("/ask/jobs", data=form, headers=JSON)
        assert anonymous.status_code == 403 and generator in anonymous.get_json()["detail"]
        extractive = {"question": ASPIRIN, "generator": "extractive"}
        assert (
            closed.test_client().post("/ask/jobs", data=extractive, headers=JSON).status_code == 202
        )
        # openai-http is not configured and transformers-local has no model here: the accepted
        # jobs fail inside the pool (503), which is not what is tested.
        token = closed.extensions["form_secrets"].submit_token
        holder = closed.test_client().post(
            "/ask/jobs", data=form, headers={**JSON, "Authorization": f"Bearer {token}"}
        )
        assert holder.status_code == 202
        assert opened.test_client().post("/ask/jobs", data=form, headers=JSON).status_code == 202
    finally:
        for app in (closed, opened):
            app.extensions["rag_pool"].close()
            app.extensions["services"].close()


def _menu(client: Any) -> tuple[list[str], list[str]]:
    """Return the generator menu's options and the generators named as left out."""
    page = client.get("/ask", headers={"Accept": "text/html"}).get_data(as_text=True)
    select = page.split('<select id="generator"', 1)[1].split("</select>", 1)[0]
    options = re.findall(r'<option value="([^"]+)"', select)
    return options, re.findall(r'<li data-generator="([^"]+)"', page)


def test_the_menu_offers_what_this_reader_can_run_and_the_token_unlocks_the_rest(
    tmp_path: Path, rag_index_dir: Path, refused_url: str
) -> None:
    # openai-http is configured (reachable or not does not matter for the menu); the local
    # model path does not exist, so transformers-local cannot run here for anybody.
    app = _app(
        tmp_path,
        rag_index_dir,
        openai_base_url=refused_url,
        openai_model="m",
        model_path=str(tmp_path / "no-model"),
    )
    try:
        client = app.test_client()
        options, hidden = _menu(client)
        assert options == ["extractive"] and hidden == ["transformers-local", "openai-http"]
        page = client.get("/ask", headers={"Accept": "text/html"}).get_data(as_text=True)
        assert "does not exist" in page and "reserved for holders of the submit token" in page
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert csrf is not None
        wrong = client.post(
            "/ask/unlock", data={"csrf_token": csrf.group(1), "submit_token": "nope"}
        )
        assert wrong.status_code == 403 and _menu(client)[0] == ["extractive"]
        token = app.extensions["form_secrets"].submit_token
        unlocked = client.post(
            "/ask/unlock",
            data={"csrf_token": csrf.group(1), "submit_token": token, "question": "Q?"},
        )
        assert unlocked.status_code == 303 and unlocked.headers["Location"].endswith(
            "?question=Q%3F"
        )
        assert _menu(client) == (["extractive", "openai-http"], ["transformers-local"])
        # without the CSRF token nothing is unlocked
        other = app.test_client()
        assert other.post("/ask/unlock", data={"submit_token": token}).status_code == 403
        assert _menu(other)[0] == ["extractive"]
    finally:
        app.extensions["services"].close()


def test_empty_questions_do_not_count_against_the_rate(tmp_path: Path, rag_index_dir: Path) -> None:
    """Refused questions (400) cost nothing: the one question a minute is still there after."""
    app = _app(tmp_path, rag_index_dir, server={"rag_requests_per_minute": 1})
    try:
        client = app.test_client()
        for _ in range(3):
            assert client.post("/ask", data={"question": "  "}, headers=JSON).status_code == 400
            assert client.post("/ask", data={"question": ""}).status_code == 400  # the page
            empty = client.post("/ask/jobs", data={"question": ""}, headers=JSON)
            assert empty.status_code == 400
            assert client.post("/api/qa", data={"query": "", "lang": "en"}).status_code == 400
        assert client.post("/ask", data={"question": ASPIRIN}, headers=JSON).status_code == 200
        assert client.post("/ask", data={"question": ASPIRIN}, headers=JSON).status_code == 429
    finally:
        app.extensions["services"].close()


def test_a_submitters_session_opens_reserved_generators_only_with_the_forms_csrf_token(
    tmp_path: Path, rag_index_dir: Path, refused_url: str
) -> None:
    # Issue 41: another site's POST /ask in a submitter's browser carried the session cookie
    # and passed the check for the reserved generators (no CSRF token needed).
    app = _app(tmp_path, rag_index_dir, openai_base_url=refused_url, openai_model="m")
    try:
        client = app.test_client()
        page = client.get("/ask", headers={"Accept": "text/html"}).get_data(as_text=True)
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert csrf is not None
        token = app.extensions["form_secrets"].submit_token
        unlocked = client.post(
            "/ask/unlock", data={"csrf_token": csrf.group(1), "submit_token": token}
        )
        assert unlocked.status_code == 303
        page = client.get("/ask", headers={"Accept": "text/html"}).get_data(as_text=True)
        ask_form = page.split('id="ask-form"', 1)[1].split("</form>", 1)[0]
        in_form = re.search(r'name="csrf_token" value="([^"]+)"', ask_form)
        assert in_form is not None  # the page's own form carries the session's token
        form = {"question": ASPIRIN, "generator": "openai-http"}
        for path in ("/ask", "/ask/jobs"):
            forged = client.post(path, data=form, headers=JSON)
            assert forged.status_code == 403, (path, forged.get_data(as_text=True))
            cross = client.post(
                path,
                data={**form, "csrf_token": in_form.group(1)},
                headers={**JSON, "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
            )
            assert cross.status_code == 403, path
        own = client.post("/ask/jobs", data={**form, "csrf_token": in_form.group(1)}, headers=JSON)
        assert own.status_code == 202  # accepted (it fails later: nothing listens at that URL)
    finally:
        app.extensions["rag_pool"].close()
        app.extensions["services"].close()

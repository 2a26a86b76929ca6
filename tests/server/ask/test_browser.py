"""The ask page in Debian's Chromium: ask, watch the stages, edit the query, search again, follow
citations to snippets and the permalink; also without JavaScript. Screenshots go to
``test-artifacts/ask/``; the pages' HTML is checked with the Nu HTML Checker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.app import create_app
from server.config import Config
from tests.plugins.server import ARTIFACTS, LiveServer
from tests.server.pages.test_browser import validate_html

pytestmark = pytest.mark.browser

ASPIRIN = "Does aspirin reduce recurrent myocardial infarction?"
SHOTS = ARTIFACTS / "ask"


@pytest.fixture
def app(rag_config: Config) -> Iterator[Any]:
    """The app over the fixture index (replaces the server plugin's ``app`` for ``page``)."""
    application = create_app(rag_config)
    yield application
    application.extensions["rag"].close()
    application.extensions["services"].close()


def cited_and_listed(page: Any) -> tuple[list[str], list[str]]:
    cited = page.locator("#cited-answer a.cite").evaluate_all(
        "links => links.map(a => a.dataset.pmid)"
    )
    listed = page.locator("#snippets li").evaluate_all("items => items.map(li => li.dataset.pmid)")
    return cited, listed


def test_ask_edit_the_query_and_search_again(page: Any, live_server: LiveServer) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.goto("/ask")
    page.fill("#question", ASPIRIN)
    page.click("#ask-form button[type=submit]")
    page.wait_for_selector("#ask-result .rag-result", timeout=30_000)
    assert page.url.endswith("/ask")  # no reload: the result came through the job API
    stages = page.locator("#ask-stages li").evaluate_all(
        "items => items.map(li => [li.dataset.stage, li.dataset.state])"
    )
    assert stages == [[s, "done"] for s in ("expand", "retrieve", "extract", "rerank", "answer")]
    assert page.input_value("#query") == "aspirin reduce recurrent myocardial infarction"
    cited, listed = cited_and_listed(page)
    assert cited and set(cited) <= set(listed)
    page.screenshot(path=str(SHOTS / "1-answer.png"), full_page=True)

    first = page.locator("#cited-answer a.cite").first
    target = first.get_attribute("href")
    first.click()
    assert page.url.endswith(target)
    assert page.locator(f"#snippets li{target}").get_attribute("data-pmid") == first.inner_text()
    article = page.locator("#cited-answer a.article").first.get_attribute("href")
    assert article == f"https://pubmed.ncbi.nlm.nih.gov/{first.inner_text()}/"
    permalink = page.get_attribute("#run-link", "href")

    # searched again with a query whose documents speak of heart attacks, not of myocardial
    # infarction: the run says it cannot answer, and still lists what it found
    page.fill("#query", '"heart attack" OR clopidogrel')
    page.click(".requery button[type=submit]")
    page.wait_for_selector("text=Expanded query (edited by you)", timeout=30_000)
    assert page.input_value("#query") == '"heart attack" OR clopidogrel'
    statement = page.locator("#short-answer")
    assert statement.get_attribute("data-answered") == "false"
    assert "No answer: the evidence found does not address the question" in statement.inner_text()
    assert "myocardial infarction" in statement.inner_text()
    assert page.locator("#exact-answer").count() == 0
    cited, listed = cited_and_listed(page)
    assert cited == [] and listed[0] == "1000002"
    assert page.locator("h2", has_text="Short answer").count() == 0
    page.screenshot(path=str(SHOTS / "2-search-again-abstains.png"), full_page=True)

    page.goto(permalink)
    page.wait_for_selector("h1:has-text('RAG run')")
    cited_again, _ = cited_and_listed(page)
    assert cited_again and "index" in page.inner_text("#answering-index")
    page.screenshot(path=str(SHOTS / "3-permalink.png"), full_page=True)


def test_problems_show_on_the_page(page: Any, live_server: LiveServer) -> None:
    page.goto("/ask")
    page.fill("#question", ASPIRIN)
    page.click("#ask-form button[type=submit]")
    page.wait_for_selector("#ask-result .rag-result", timeout=30_000)
    page.fill("#query", "aspirin AND (")
    page.click(".requery button[type=submit]")
    problem = page.locator("#ask-problem .problem")
    problem.wait_for(timeout=30_000)
    assert "Malformed search query" in problem.inner_text()
    assert "column 13" in problem.inner_text()
    assert page.locator("#ask-progress").is_hidden()
    assert page.input_value("#query") == "aspirin AND ("  # kept, so it can be fixed
    page.screenshot(path=str(SHOTS / "4-malformed-query.png"), full_page=True)


def test_without_javascript_the_form_posts_and_the_page_answers(
    page: Any, live_server: LiveServer
) -> None:
    context = page.context.browser.new_context(base_url=live_server.url, java_script_enabled=False)
    try:
        plain = context.new_page()
        plain.goto("/ask")
        plain.fill("#question", ASPIRIN)
        with plain.expect_navigation():
            plain.click("#ask-form button[type=submit]")
        assert plain.locator("#ask-progress").is_hidden()
        cited, listed = cited_and_listed(plain)
        assert cited and set(cited) <= set(listed)
        plain.fill("#query", "clopidogrel")
        with plain.expect_navigation():
            plain.click(".requery button[type=submit]")
        assert plain.input_value("#query") == "clopidogrel"
        plain.screenshot(path=str(SHOTS / "5-no-javascript.png"), full_page=True)
    finally:
        context.close()


def test_ask_pages_are_valid_html(live_server: LiveServer, tmp_path: Path) -> None:
    client = live_server.app.test_client()
    empty = client.get("/ask").get_data(as_text=True)
    answered = client.post("/ask", data={"question": ASPIRIN}).get_data(as_text=True)
    run = client.post("/ask", data={"question": ASPIRIN}, headers={"Accept": "application/json"})
    stored = client.get(
        run.get_json()["run"].split("qabench.test")[1], headers={"Accept": "text/html"}
    )
    files = []
    for name, html in (
        ("ask", empty),
        ("answered", answered),
        ("run", stored.get_data(as_text=True)),
    ):
        path = tmp_path / f"{name}.html"
        path.write_text(html, "utf-8")
        files.append(path)
    assert validate_html(files) == []

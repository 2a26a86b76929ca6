"""The write path and the experiment pages in a real browser (Playwright, Debian's Chromium).

A user opens the new-experiment form, gives the submit token, chooses the example dataset,
ticks ``gold`` and attaches the example answers file, submits, sees the access token once,
follows the experiment while it runs (the page reloads itself, no script needed), publishes
it, and then walks the task page (with its filters), the compare form, the leaderboard and the
system page by their links. Screenshots go to ``test-artifacts/experiment-pages/``; every page
of the walk, the form pages and the pages answering form posts go through the Nu HTML Checker.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.plugins.experiment_pages import (
    EXAMPLE_DATASET,
    EXAMPLES,
    PAGES_BASE,
    SUBMIT_TOKEN,
)
from tests.plugins.server import ARTIFACTS, LiveServer
from tests.server.pages.test_browser import validate_html

pytestmark = pytest.mark.browser

SHOTS = ARTIFACTS / "experiment-pages"
WAIT_MS = 90_000


@pytest.fixture
def live_server(forms_app: Any) -> Iterator[LiveServer]:
    """The form-test app (example datasets, no experiment) served over HTTP on loopback."""
    server = LiveServer(forms_app)
    yield server
    server.shutdown()


def _shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_submit_follow_publish_and_walk_the_experiment_pages(
    page: Any, live_server: LiveServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    origin = live_server.url
    page.goto(origin + "/")
    page.click("nav >> text=New experiment")
    page.fill("#submit_token", SUBMIT_TOKEN)
    page.select_option("#dataset", f"{EXAMPLE_DATASET}@1")
    page.check("input[name=builtin][value=gold]")
    page.set_input_files("#answers_file_1", str(EXAMPLES / "example-answers.json"))
    page.fill("#answers_name_1", "example-answers")
    _shot(page, "01-new-experiment")
    page.click("form.upload button[type=submit]")
    token = page.inner_text("#access-token")
    assert len(token) >= 32
    _shot(page, "02-submitted")
    page.click("#experiment-link")
    expect(page.locator("#experiment-state")).to_have_text("finished", timeout=WAIT_MS)
    assert "not yet: private" in page.inner_text("#published")
    # one row per task in the QA table; the sub-experiments wait, collapsed, below it
    rows = page.locator("table.results tbody.task")
    assert rows.filter(visible=True).count() == 2
    assert page.locator("#sub-experiments table.results").is_hidden()
    page.click("#sub-experiments summary")
    assert page.locator("#sub-experiments table.results").is_visible()
    _shot(page, "03-experiment-private")
    page.click("form.publish button")
    expect(page.locator("#published time")).to_be_visible()
    experiment_url = page.url
    experiment_id = experiment_url.rstrip("/").rsplit("/", 1)[-1]
    _shot(page, "04-experiment-published")

    # The task page of the answers file, then its "only wrong" filter (a GET form).
    page.click("table.results >> nth=0 >> text=Task 1")
    page.wait_for_url("**/task/*/1")
    assert page.inner_text("h1") == f"Task 1 of experiment {experiment_id}"
    all_rows = page.locator("table.questions tbody tr").count()
    assert all_rows == 8
    _shot(page, "05-task")
    page.check("input[name=wrong]")
    page.click("form.filters button")
    page.wait_for_url("**/task/*/1?*wrong=1*")
    page.wait_for_load_state()
    wrong_rows = page.locator("table.questions tbody tr.wrong").count()
    assert 0 < wrong_rows == page.locator("table.questions tbody tr").count() < all_rows
    _shot(page, "06-task-wrong")
    page.select_option("#type", "C2KB")
    page.click("form.filters button")
    page.wait_for_url("**type=C2KB*")
    assert "Per-question diagnostics, C2KB" in page.inner_text("table.questions caption")

    # Compare the two tasks through the experiment page's form.
    page.goto(experiment_url)
    page.click("form.compare button")
    page.wait_for_url("**/compare?*")
    cells = page.locator("table.contingency td").all_inner_texts()
    assert sum(int(c) for c in cells) == 8 and cells[1] == "0"  # gold gets everything right
    assert re.search(r"p = 0\.\d{4}", page.inner_text("#verdict"))
    _shot(page, "07-compare")

    # The leaderboard from the navigation, its form, then a system page from its table.
    page.click("nav >> text=Leaderboard")
    version = f"{PAGES_BASE}/dataset/{EXAMPLE_DATASET}/v1"
    # chosen from the datasets that have published results
    page.select_option("#version", version)
    page.click("form.leaderboard button")
    page.wait_for_selector("svg.chart rect")
    # gold answers from the gold standard: a sanity check, listed apart and not ranked
    assert page.locator("svg.chart rect").count() == 1
    ranked = page.locator("table.results").first
    assert ranked.locator("tbody td:nth-child(2)").all_inner_texts() == ["example-answers"]
    assert page.locator("#sanity tbody td:nth-child(1)").all_inner_texts() == ["gold"]
    _shot(page, "08-leaderboard")
    page.click("table.results >> text=gold")
    page.wait_for_url("**/system/gold")
    assert page.inner_text("h1") == "System gold"
    _shot(page, "09-system")

    pages = [
        "/experiments/new",
        "/upload",
        experiment_url[len(origin) :],
        f"/task/{experiment_id}/1",
        f"/task/{experiment_id}/1?type=C2KB&wrong=1",
        f"/task/{experiment_id}/2",
        f"/compare?a={experiment_id}/1&b={experiment_id}/2",
        f"/leaderboard?version={version}",
        "/leaderboard",
        "/system/gold",
        "/system/example-answers",
    ]
    saved = []
    with httpx.Client(base_url=origin, timeout=60) as http:
        for n, path in enumerate(pages):
            response = http.get(path, headers={"Accept": "text/html"})
            assert response.status_code == 200, path
            saved.append(tmp_path / f"{n:02d}.html")
            saved[-1].write_bytes(response.content)
        posts = [
            ("/experiments/new", {"dataset": f"{EXAMPLE_DATASET}@1", "builtin": "gold"}, {}, 201),
            ("/experiments/new", {"dataset": f"{EXAMPLE_DATASET}@1"}, {}, 400),
            (
                "/upload/dataset",
                {},
                {"dataset_file": ("bad.json", b'{"questions": [', "application/json")},
                400,
            ),
            (
                "/upload/dataset",
                {"name": "again"},
                {"dataset_file": ("q.json", (EXAMPLES / "example-questions.json").read_bytes())},
                201,
            ),
        ]
        for n, (path, data, files, status) in enumerate(posts):
            response = http.post(
                path,
                data=data,
                files=files or None,
                headers={"Accept": "text/html", "Authorization": f"Bearer {SUBMIT_TOKEN}"},
            )
            assert response.status_code == status, (path, response.text[:300])
            saved.append(tmp_path / f"post-{n:02d}.html")
            saved[-1].write_bytes(response.content)
    errors = validate_html(saved)
    assert not errors, "\n".join(errors)
    assert len(saved) == len(pages) + len(posts)


def test_upload_from_the_navigation_typing_into_every_field(
    page: Any, live_server: LiveServer
) -> None:
    # Typing runs the browser's own checks of each field (a `pattern` is compiled then): the
    # page must log nothing on the console while every visible text field is typed into.
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: console.append(str(e)))
    page.goto(live_server.url + "/")
    page.click("nav >> text=Upload")
    page.wait_for_url("**/upload")
    fields = page.locator(
        "form input:not([type=hidden]):not([type=checkbox]):not([type=file]):not([type=radio])"
    )
    typed = 0
    for n in range(fields.count()):
        field = fields.nth(n)
        field.click()
        field.press_sequentially(
            "checked-in-browser" if "name" in (field.get_attribute("id") or "") else SUBMIT_TOKEN
        )
        field.press("Tab")
        typed += 1
    assert typed >= 6  # both forms: token, name and title, system name, language, KB
    assert console == []
    page.fill("#dataset-submit_token", SUBMIT_TOKEN)
    page.fill("#dataset-name", "checked-in-browser")
    page.set_input_files("#dataset_file", str(EXAMPLES / "example-questions.json"))
    page.click("#dataset-form button[type=submit]")
    page.wait_for_load_state()
    assert "no catalog entry has this file" in page.inner_text("#recognised")
    summary = page.inner_text("#check-summary")
    assert re.search(r"\d+ errors?, \d+ warnings?", summary)
    _shot(page, "10-uploaded")
    page.click("#check-summary a >> nth=0")
    page.wait_for_url("**/dataset/checked-in-browser/v1#check")
    assert page.locator("#check").is_visible()
    assert console == []


@pytest.mark.parametrize("width", [1400, 800])
def test_a_two_system_two_profile_experiment_reads_right_at_each_width(
    page: Any, live_server: LiveServer, tmp_path: Path, width: int
) -> None:
    from playwright.sync_api import expect

    from tests.plugins.experiment_pages import wrong_answers_file

    page.set_viewport_size({"width": width, "height": 900})
    page.goto(live_server.url + "/experiments/new")
    page.fill("#submit_token", SUBMIT_TOKEN)
    page.select_option("#dataset", f"{EXAMPLE_DATASET}@1")
    page.check("input[name=profile][value=gerbil-legacy]")  # strict is ticked already
    page.set_input_files("#answers_file_1", str(EXAMPLES / "example-answers.json"))
    page.fill("#answers_name_1", "example-answers")
    page.set_input_files("#answers_file_2", str(wrong_answers_file(tmp_path)))
    page.fill("#answers_name_2", "wrong-answers")
    page.check("input[name=publish]")
    page.click("form.upload button[type=submit]")
    page.click("#experiment-link")
    expect(page.locator("#experiment-state")).to_have_text("finished", timeout=WAIT_MS)
    # strict first: its matrix and headline come before gerbil-legacy's
    captions = page.locator("table.glance caption").all_inner_texts()
    assert [("strict" in c, "gerbil-legacy" in c) for c in captions] == [
        (True, False),
        (False, True),
    ]
    assert page.inner_text("#headlines").index("strict") < page.inner_text("#headlines").index(
        "gerbil-legacy"
    )
    # the headline values with their intervals, visible at this width
    interval = page.locator("table.glance td .ci").first
    expect(interval).to_be_visible()
    assert re.fullmatch(r"\[\d\.\d{4}, \d\.\d{4}\]", interval.inner_text())
    expect(page.locator("#profile-notes")).to_be_visible()
    assert "gerbil-legacy counts as right what strict does not" in page.inner_text("#profile-notes")
    expect(page.locator("#significance table").first).to_be_visible()  # open
    # the compare form starts with two systems under one profile
    first = page.locator("#compare-a option:checked").inner_text()
    second = page.locator("#compare-b option:checked").inner_text()
    assert (
        "(strict," in first and "(strict," in second and first.split(":")[1] != second.split(":")[1]
    )
    _shot(page, f"11-two-profiles-{width}")
    experiment = page.url.rstrip("/").rsplit("/", 1)[-1]
    latex = httpx.get(
        f"{live_server.url}/experiment/{experiment}", headers={"Accept": "application/x-latex"}
    )
    assert latex.status_code == 200 and r"\begin{tabular}" in latex.text
    csv_text = httpx.get(
        f"{live_server.url}/task/{experiment}/1", headers={"Accept": "text/csv"}
    ).text
    assert csv_text.splitlines()[0].startswith(
        "question,text,gold,system,tp,fp,fn,precision,recall,f1"
    )
    assert len(csv_text.strip().splitlines()) == 1 + 8

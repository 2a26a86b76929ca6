"""Honest out of the box: the demo index says it is the demo, in Chromium and in JSON; a real
index built afterwards answers instead, never with the example abstracts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rag.corpus.reader import read_corpus
from rag.retrieval.index import open_index
from server.app import create_app
from server.cli import main
from server.config import Config, config_from_dict, load_config
from server.demo import EXAMPLES, example_pmids
from tests import REPO
from tests.plugins.server import ARTIFACTS, LiveServer

SHOTS = ARTIFACTS / "ask"
DELIRIUM = "Which drugs can induce delirium?"
COVID = "Which virus causes COVID-19?"


def demo_config(tmp: Path, **rag: Any) -> Config:
    return config_from_dict(
        {
            "server": {
                "base_iri": "http://demo.test",
                "demo": True,
                "query_workers": 1,
                "rag_requests_per_minute": 0,
            },
            "store": {"data_dir": str(tmp / "data")},
            "rag": rag,
        },
        source=REPO / "config.toml",
    )


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Any]:
    """The app as ``./dev serve`` starts it on an empty data directory: demo on."""
    application = create_app(demo_config(tmp_path))
    yield application
    application.extensions["rag"].close()
    application.extensions["services"].close()


def test_the_demo_index_stands_apart_and_says_it_is_the_demo(app: Any) -> None:
    config = app.extensions["services"].config
    assert (config.demo_index_dir / "qabench-index.json").is_file()
    assert not config.index_dir.exists()  # the real index's place stays free
    client = app.test_client()
    run = client.post("/ask", data={"question": DELIRIUM}, headers={"Accept": "application/json"})
    body = run.get_json()
    assert body["index"]["demo"] is True and body["index"]["documents"] == 12
    assert "not real literature" in body["index"]["name"]
    page = client.post("/ask", data={"question": DELIRIUM}).get_data(as_text=True)
    assert 'id="answering-index" class="index-label demo"' in page
    assert "Demo index:" in page and "not from real literature" in page


def test_no_page_shows_no_answer_beside_an_exact_answer(app: Any) -> None:
    client = app.test_client()
    questions = (DELIRIUM, COVID, "Does vitamin D prevent falls in older adults?")
    for question in questions:
        html = client.post("/ask", data={"question": question}).get_data(as_text=True)
        run = client.post(
            "/ask", data={"question": question}, headers={"Accept": "application/json"}
        ).get_json()
        if run["answered"]:
            assert "No answer" not in html
        else:
            assert run["exact_answer"] is None and 'id="exact-answer"' not in html
            assert "No answer: the evidence found does not address the question" in html
    assert len(questions) == 3


@pytest.mark.browser
def test_the_demo_answers_and_abstains_in_chromium(page: Any, live_server: LiveServer) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.goto("/ask")
    page.fill("#question", COVID)
    page.click("#ask-form button[type=submit]")
    page.wait_for_selector("#ask-result .rag-result", timeout=30_000)
    label = page.locator("#answering-index")
    assert label.get_attribute("data-demo") == "true"
    assert "Demo index" in label.inner_text() and "12 example abstracts" in label.inner_text()
    assert page.get_attribute("#short-answer", "data-answered") == "false"
    assert "COVID-19" in page.inner_text("#short-answer")
    assert page.locator("#exact-answer").count() == 0
    # how the evidence was judged is said beside the index (words only, or words and meaning)
    assert page.inner_text("#evidence-check").startswith("Evidence judged by words")
    page.screenshot(path=str(SHOTS / "6-demo-abstains.png"), full_page=True)


def test_a_real_index_never_holds_the_example_abstracts(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = demo_config(tmp_path)
    # an index as an earlier release left it: the example abstracts in the real index's place
    with open_index(config.index_dir, create=True) as index:
        index.add(read_corpus(EXAMPLES / "example-abstracts.jsonl"))
    cdr = shared_data / "pubmed/cryptoradon_biomedRelExt/CDR_Data/CDR.Corpus.v010516"
    source = cdr / "CDR_TestSet.PubTator.titles_abstracts.tsv"
    cli = ["--config", str(REPO / "config.toml"), "--data-dir", str(tmp_path / "data")]
    assert main([*cli, "index", "build", str(source), "--name", "CDR test set"]) == 0
    err = capsys.readouterr().err
    assert "removed 12 demo document(s) (the example abstracts) from the index" in err
    with open_index(config.index_dir) as index:
        held = {a.pmid for a in index.articles()}
        assert len(held) == 500 and not held & example_pmids()
    assert main([*cli, "index", "info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info == info | {"name": "CDR test set", "demo": False, "documents": 500}
    # asked now, the real index answers and says which it is
    assert main([*cli, "ask", "Does lithium cause diabetes insipidus?", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert run["index"] == {"name": "CDR test set", "documents": 500, "demo": False}
    assert not any(d["pmid"].startswith("example-") for d in run["documents"])


def _judged(tmp: Path, question: str, rag: str = "") -> tuple[dict[str, Any], str]:
    """Ask through the app (JSON and page) and ``qabench ask`` with a config file whose
    ``[rag]`` table holds ``rag``; return the JSON and the page."""
    toml = tmp / "config.toml"
    toml.write_text(
        '[server]\nbase_iri = "http://demo.test"\ndemo = true\nquery_workers = 1\n'
        f'rag_requests_per_minute = 0\n[store]\ndata_dir = "{tmp / "data"}"\n[rag]\n{rag}\n',
        "utf-8",
    )
    application = create_app(load_config(toml))
    try:
        client = application.test_client()
        body = client.post(
            "/ask", data={"question": question}, headers={"Accept": "application/json"}
        ).get_json()
        html = client.post("/ask", data={"question": question}).get_data(as_text=True)
    finally:
        application.extensions["rag"].close()
        application.extensions["services"].close()
    assert main(["--config", str(toml), "ask", "--no-store", question]) == 0
    return body, html


QUESTION = "Which drug lowers blood sugar in type 2 diabetes?"


def test_every_run_says_how_its_evidence_was_judged_words_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body, html = _judged(tmp_path, QUESTION, "meaning_check = false")
    said = "words only; meaning off (rag.meaning_check = false)"
    assert body["settings"]["evidence_check"] == said
    assert "evidence_closeness" not in body["settings"]
    assert f'<p id="evidence-check" class="note">Evidence judged by {said}.</p>' in html
    assert f"evidence:  judged by {said}" in capsys.readouterr().out


YESNO = "Does cigarette smoking cause lung cancer?"


def test_a_yes_no_run_says_how_its_yes_or_no_was_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # no reader trained in the data directory: the word rules read it alone, and say so
    # without naming a path of the server's machine (anyone reads the run)
    body, html = _judged(tmp_path, YESNO, "meaning_check = false")
    said = (
        "words only; reader model off: none trained in rag.yesno_reader (make one with: "
        "qabench train-reader)"
    )
    assert body["settings"]["yesno_check"] == said
    assert body["answered"] is True
    assert str(tmp_path) not in json.dumps(body["settings"])
    assert f'<p id="yesno-check" class="note">Yes or no read by {said}.</p>' in html
    assert f"yes/no:    read by {said}" in capsys.readouterr().out
    # a folder whose reader does not load: the reason is kept for the server log only
    broken = tmp_path / "data" / "models" / "yesno-reader"
    broken.mkdir(parents=True)
    (broken / "reader.json").write_text("{}", "utf-8")
    body, html = _judged(tmp_path, YESNO, "meaning_check = false")
    said = "words only; reader model off: it did not load (the server log says why)"
    assert body["settings"]["yesno_check"] == said
    assert str(tmp_path) not in html
    # turned off
    body, html = _judged(tmp_path, YESNO, "meaning_check = false\nreader_check = false")
    said = "words only; reader model off (rag.reader_check = false)"
    assert body["settings"]["yesno_check"] == said
    assert f"Yes or no read by {said}." in html
    # a question of another type says nothing about yes or no
    body, html = _judged(tmp_path, QUESTION, "meaning_check = false")
    assert "yesno_check" not in body["settings"]
    assert 'id="yesno-check"' not in html


@pytest.mark.slow
def test_with_the_sentence_model_a_run_gives_its_closeness(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the models extra is installed in the full suite: the default checks meaning too
    body, html = _judged(tmp_path, QUESTION)
    settings = body["settings"]
    assert settings["evidence_check"] == "words and meaning (sentence model)"
    closeness = float(settings["evidence_closeness"])
    assert 0.0 < closeness <= 1.0
    assert f"has cosine {closeness:.3f} with the question" in html
    assert "0.50 needed beside the words; 0.70 answers alone" in html
    assert f"has cosine {closeness:.3f}" in capsys.readouterr().out

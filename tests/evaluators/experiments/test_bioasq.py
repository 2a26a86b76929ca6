"""BioASQ phase A and B end to end: index the snippets' text, answer with the RAG system,
score the response file with `qabench evaluate`, and store and show it as an experiment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.cli import main

QUESTIONS = 40


@pytest.fixture
def bioasq_gold(shared_data: Path, tmp_path: Path) -> Path:
    source = next((shared_data / "bioasq").rglob("BioASQ-trainingDataset2b.json"))
    doc = json.loads(source.read_text("utf-8"))
    doc["questions"] = doc["questions"][:QUESTIONS]
    path = tmp_path / "bioasq-2013-b-40.json"
    path.write_text(json.dumps(doc), "utf-8")
    return path


def test_phase_a_and_b_response_is_scored_stored_and_shown(
    bioasq_gold: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[server]\nbase_iri = "http://bioasq.test"\ndemo = false\n[store]\ndata_dir = "data"\n'
    )
    cli = ["--config", str(cfg)]
    assert main([*cli, "index", "build", str(bioasq_gold), "--format", "bioasq-snippets"]) == 0
    response = tmp_path / "response.json"
    assert (
        main(
            [*cli, "answer", "--dataset", str(bioasq_gold), "--builtin", "rag", "-o", str(response)]
        )
        == 0
    )
    capsys.readouterr()
    assert (
        main(
            [*cli, "evaluate", "--dataset", str(bioasq_gold), "--answers", str(response), "--json"]
        )
        == 0
    )
    scored = json.loads(capsys.readouterr().out)["results"]
    # the RAG system finds the gold documents and their snippets (offsets line up with gold)
    assert scored["documents"]["mean_recall"] > 0.3
    assert scored["snippets"]["mean_f1"] > 0.1
    assert scored["yesno"]["questions"] > 0 and scored["ideal"]["rouge2_recall"] > 0

    assert main([*cli, "datasets", "load", str(bioasq_gold), "--name", "bioasq-40"]) == 0
    assert (
        main(
            [
                *cli,
                "experiment",
                "run",
                "--dataset",
                "bioasq-40",
                "--answers",
                f"rag-file={response}",
                "--publish",
                "--json",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    experiment = json.loads(out[out.index("{") :])
    (task,) = experiment["tasks"]
    assert (task["profile"], task["state"], task["errors"]) == ("bioasq", "finished", 0)
    # the stored scores are the ones `qabench evaluate` printed for the same file
    for kind in ("documents", "snippets", "yesno", "factoid", "list", "ideal"):
        for measure, value in scored[kind].items():
            if isinstance(value, float):
                assert task["results"][kind][measure] == pytest.approx(value), (kind, measure)

    from server.app import create_app
    from server.config import load_config

    app = create_app(load_config(cfg))
    try:
        page = app.test_client().get(
            f"/experiment/{experiment['id']}", headers={"Accept": "text/html"}
        )
        assert page.status_code == 200
        assert b"rag-file" in page.data
        assert b"documents" in page.data and b"snippets" in page.data
    finally:
        app.extensions["services"].close()


def test_snippet_corpus_places_each_gold_snippet_at_its_offset(bioasq_gold: Path) -> None:
    from rag.corpus.bioasq_snippets import read_bioasq_snippets

    articles = {a.pmid: a for a in read_bioasq_snippets(bioasq_gold)}
    doc = json.loads(bioasq_gold.read_text("utf-8"))
    checked = 0
    for question in doc["questions"]:
        for sn in question.get("snippets", []):
            if sn["beginSection"] not in ("sections.0", "title"):
                continue
            article = articles[sn["document"].rsplit("/", 1)[-1]]
            text = article.title if sn["beginSection"] == "title" else article.abstract
            begin = sn["offsetInBeginSection"]
            placed = text[begin : begin + len(sn["text"])]
            # overlapping gold snippets may overwrite each other's characters; most do not
            checked += placed == sn["text"]
    assert checked > 200

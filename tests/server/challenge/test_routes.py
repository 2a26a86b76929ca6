"""``/challenge/text2sparql-2026``: the challenge's tables from published experiments, with runs.

Two systems' published result sets (the kept excerpts: CK26 questions 1-11 and DB26 1-14 in
both languages) are scored by ``experiment run --answers`` under ``text2sparql-2026`` and
published; one system is run twice on DB26 and the second run recorded as its rerun. The page must show the averages the official file
would hold for these questions (rebuilt here from the published per-question values), rank as
the challenge does, average the two datasets for the overall tables, and name each row's run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from evaluators.qa.text2sparql_file import OFFICIAL_2026, RULES, evaluation_document
from evaluators.reports.challenge import rows_of
from server.cli import main
from tests.plugins.formats import T2s26Files
from tests.plugins.page_helpers import HTML
from tests.plugins.server import BASE, build_app, server_config

SYSTEMS = ("SPARQL-LLM", "LIBER-AI-QWEN")
KEPT = {"ck26": 11, "db26": 14}  # the questions the excerpts hold


def _cli(capsys: pytest.CaptureFixture[str], config: Path, *argv: str) -> dict[str, Any]:
    status = main(["--config", str(config), *argv, "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def _expected(t2s26: T2s26Files, dataset: str, system: str) -> dict[str, Any]:
    """The official averages over the kept questions, from the published per-question values."""
    published = json.loads(t2s26.results(dataset, system).read_text())
    kept = {
        f"{dataset}:{n}-{lang}" for n in range(1, KEPT[dataset] + 1) for lang in ("en", "de", "es")
    }
    rows = [r for r in rows_of(published) if r.qname in kept]
    return evaluation_document(rows, RULES[OFFICIAL_2026])


@pytest.fixture
def board(capsys: pytest.CaptureFixture[str], t2s26: T2s26Files, tmp_path: Path) -> Any:
    config = tmp_path / "config.toml"
    config.write_text(f'[server]\nbase_iri = "{BASE}"\ndemo = false\n'
                      f'[store]\ndata_dir = "{tmp_path / "data"}"\n')  # fmt: skip
    for dataset, last in KEPT.items():
        doc = yaml.safe_load(t2s26.questions(dataset).read_text())
        doc["questions"] = [q for q in doc["questions"] if q["id"] <= last]
        questions = tmp_path / f"questions_{dataset}.yml"
        questions.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False))
        _cli(capsys, config, "datasets", "load", str(questions),
             "--gold-results", str(t2s26.reference(dataset)))  # fmt: skip
    run = ["experiment", "run", "--profile", "text2sparql-2026", "--language", "mul", "--publish"]
    ids = {}
    for dataset in KEPT:  # a system name is used once per experiment: one experiment a dataset
        answers = [
            a for s in SYSTEMS for a in ("--answers", f"{s}={t2s26.predictions(dataset, s)}")
        ]
        ids[dataset] = _cli(capsys, config, *run, "--dataset", dataset, *answers)["id"]
    again = ("--answers", f"LIBER-AI-QWEN={t2s26.predictions('db26', 'LIBER-AI-QWEN')}")
    second = _cli(capsys, config, *run, "--dataset", "db26", *again)["id"]  # a rerun
    recorded = _cli(capsys, config, "experiment", "rerun", second, "--of", ids["db26"],
                    "--reason", "the first run timed out")  # fmt: skip
    (pair,) = recorded["reruns"]  # only LIBER-AI-QWEN was run again
    assert pair["system"] == "LIBER-AI-QWEN" and pair["task"].endswith(f"/{second}/1")
    app = build_app(server_config(tmp_path), [])
    yield app, ids["db26"], second, pair
    app.extensions["services"].close()


def test_the_challenge_tables_with_the_runs_they_use(board: Any, t2s26: T2s26Files) -> None:
    app, first, second, pair = board
    client = app.test_client()
    doc = client.get("/challenge/text2sparql-2026?format=json").get_json()
    tables = {(t["dataset"], t["language"]): t for t in doc["tables"]}
    assert sorted(tables) == [
        ("ck26", ""), ("ck26", "de"), ("ck26", "en"), ("db26", ""), ("db26", "en"),
        ("db26", "es"), ("overall", ""), ("overall", "en"),
    ]  # fmt: skip
    for dataset, ranking in (("ck26", "set_F_ndcg"), ("db26", "set_F")):
        for language in ("", "en"):
            table = tables[(dataset, language)]
            assert table["columns"][0] == ranking
            key = "average" if not language else f"average-{language}"
            for row in table["rows"]:
                expected = _expected(t2s26, dataset, row["system"]).get(key, {})
                assert row["values"] == [expected.get(c) for c in table["columns"]]
            firsts = [r["values"][0] or 0.0 for r in table["rows"]]
            assert firsts == sorted(firsts, reverse=True)  # ranked
    overall = {r["system"]: r for r in tables[("overall", "")]["rows"]}
    for system in SYSTEMS:
        ck26, db26 = (_expected(t2s26, d, system)["average"]["set_F"] for d in ("ck26", "db26"))
        assert overall[system]["values"][0] == (ck26 + db26) / 2
    qwen = next(r for r in tables[("db26", "")]["rows"] if r["system"] == "LIBER-AI-QWEN")
    (run,) = qwen["runs"]
    assert run["of_runs"] == 2 and run["experiment"].endswith(second)  # the rerun counts
    assert run["rerun_of"] == pair["rerun_of"] and f"/{first}/" in pair["rerun_of"]
    llm = next(r for r in tables[("db26", "")]["rows"] if r["system"] == "SPARQL-LLM")
    assert llm["runs"][0]["of_runs"] == 1 and llm["runs"][0]["experiment"].endswith(first)
    page = client.get("/challenge/text2sparql-2026", headers=HTML)
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "counts of 2 runs" in html and "Overall: English" in html
    assert "(rerun of <a href=" in html and f">{first} task 2</a>)" in html
    assert client.get("/challenge/text2sparql-2025").status_code == 404

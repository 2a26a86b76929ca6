"""Errata: a corrected TEXT2SPARQL reference as the dataset's next version, scores side by side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators.datasets.errata import count_distinct_query, counts_rows
from evaluators.formats import parse_file
from server.cli import main
from store.triplestore import TripleStore
from tests.plugins.formats import T2sFiles

QUERY = "SELECT DISTINCT COUNT(?author) WHERE { ?book <http://ex.org/author> ?author }"


def test_the_db25_queries_of_issue_143_are_found_on_the_parse_tree(t2s_files: T2sFiles) -> None:
    db25 = parse_file(t2s_files.questions("db25"))
    found = sorted({int(q.id.split(":")[1].split("-")[0]) for q in db25.questions
                    if counts_rows(q.sparql or "")})  # fmt: skip
    assert found == [1, 25, 33, 61, 66, 70, 82, 89, 91]
    fixed = [count_distinct_query(q.sparql or "") for q in db25.questions if q.id == "db25:1-en"]
    assert fixed[0] is not None and "(COUNT(DISTINCT ?author) AS ?count)" in fixed[0]
    assert not counts_rows(fixed[0])
    ck25 = parse_file(t2s_files.questions("ck25"))
    assert [q.id for q in ck25.questions if counts_rows(q.sparql or "")] == [
        "ck25:9-en",
        "ck25:49-en",
    ]
    # grouping, or COUNT(DISTINCT ...), or a plain SELECT is not this error
    assert not counts_rows("SELECT DISTINCT ?s (COUNT(?o) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s")
    assert not counts_rows("SELECT (COUNT(?o) AS ?n) WHERE { ?s ?p ?o }")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    status = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_an_erratum_is_a_new_version_and_both_scores_show(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "kb.ttl").write_text(
        "<http://ex.org/a> <http://ex.org/author> <http://ex.org/x> .\n"
        "<http://ex.org/b> <http://ex.org/author> <http://ex.org/x> .\n"
        "<http://ex.org/c> <http://ex.org/author> <http://ex.org/y> .\n"
    )
    (tmp_path / "ex.yml").write_text(
        "dataset: {id: 'https://ex.org/c/', prefix: ex}\nquestions:\n"
        f"  - {{id: 1, question: {{en: 'How many authors?'}}, query: {{sparql: '{QUERY}'}}}}\n"
        "  - {id: 2, question: {en: 'Is there a book?'}, query: {sparql: 'ASK { ?b ?p ?o }'}}\n"
    )
    # the published reference counted the rows (3), not the authors (2)
    (tmp_path / "ref.json").write_text(json.dumps({"ex:1-en": {"3": 1}, "ex:2-en": {"true": 1}}))
    (tmp_path / "sys.json").write_text(json.dumps({"ex:1-en": {"2": 1}, "ex:2-en": {"true": 1}}))
    data = ("--data-dir", str(tmp_path / "data"))
    _run(capsys, *data, "kb", "load", str(tmp_path / "kb.ttl"), "--name", "tiny")
    _run(capsys, *data, "datasets", "load", str(tmp_path / "ex.yml"),
         "--gold-results", str(tmp_path / "ref.json"))  # fmt: skip
    fixed = _run(capsys, *data, "datasets", "erratum", "ex", "--count-distinct", "--kb", "tiny")
    assert (fixed["id"], fixed["corrected_from"].rsplit("/", 2)[-2:]) == ("ex/v2", ["ex", "v1"])
    (correction,) = fixed["corrections"]
    assert correction["question_id"] == "ex:1-en"
    assert (correction["result_before"], correction["result_after"]) == ({"3": 1}, {"2": 1})
    assert "COUNT(DISTINCT ?author)" in correction["query_after"] and "#143" in correction["reason"]
    doc = _run(capsys, *data, "evaluate", "--dataset", "ex@1", "--answers", str(tmp_path / "sys.json"),
               "--profile", "text2sparql-2026", "--compare-with", "ex@2")  # fmt: skip
    assert doc["results"]["QA"]["set_f"] == 0.5
    other = doc["compared_with"]
    assert other["dataset"] == "ex/v2" and other["results"]["QA"]["set_f"] == 1.0
    assert other["changed"] == [{"question": "ex:1-en", "value": 0.0, "compared": 1.0}]
    # the same correction from a file (the way for DB25, whose graph is not here)
    (tmp_path / "fix.json").write_text(json.dumps(
        {"ex:2-en": {"result": {"true": 0}, "reason": "no such book in the graph's intent"}}
    ))  # fmt: skip
    again = _run(
        capsys, *data, "datasets", "erratum", "ex@2", "--corrections", str(tmp_path / "fix.json")
    )
    assert again["id"] == "ex/v3" and again["corrections"][0]["result_after"] == {"true": 0}
    store = TripleStore.open(tmp_path / "data" / "store")
    try:
        ask = store.query(
            "PREFIX prov: <http://www.w3.org/ns/prov#> ASK { GRAPH ?g { ?v3 prov:wasRevisionOf ?v2 ;"
            " prov:wasGeneratedBy ?a . ?a <http://www.w3.org/2000/01/rdf-schema#label> ?l . "
            "FILTER(STRENDS(STR(?v3), '/ex/v3') && STRENDS(STR(?v2), '/ex/v2') && "
            "CONTAINS(?l, 'erratum')) } }"
        )
    finally:
        store.close()
    assert bool(ask)
    status = main([*data, "datasets", "erratum", "ex", "--count-distinct"])
    assert status == 2 and "--kb" in capsys.readouterr().err

"""Execution validity and row exact match, beside (never inside) the official TEXT2SPARQL measures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.cli import main

E = "http://ex.org/"
QUESTIONS = [  # (reference query, the system's query)
    (f"SELECT DISTINCT ?b ?a WHERE {{ ?b <{E}author> ?a }}",
     f"SELECT ?a ?b WHERE {{ ?b <{E}author> ?a }}"),  # the same rows, columns swapped
    (f"SELECT DISTINCT ?a WHERE {{ ?b <{E}author> ?a }}",
     f"SELECT ?a WHERE {{ ?b <{E}author> ?a }}"),  # duplicates: the same set, other rows
    (f"SELECT ?b WHERE {{ ?b <{E}author> <{E}x> }}", "SELECT WHERE nonsense"),  # does not parse
    (f"ASK {{ ?b <{E}author> <{E}y> }}", f"ASK {{ <{E}c> <{E}author> <{E}y> }}"),  # both true
    (f"SELECT ?b WHERE {{ ?b <{E}author> <{E}y> }}",
     f"SELECT ?b WHERE {{ ?b <{E}author> <{E}nobody> }}"),  # runs, nothing found
]  # fmt: skip


def test_validity_and_row_exact_match_are_reported_apart(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "kb.ttl").write_text(
        f"<{E}a> <{E}author> <{E}x> .\n<{E}b> <{E}author> <{E}x> .\n<{E}c> <{E}author> <{E}y> .\n"
    )
    entries = "".join(
        f"  - id: {n}\n    question: {{en: 'Q{n}?'}}\n    query: {{sparql: {json.dumps(ref)}}}\n"
        for n, (ref, _) in enumerate(QUESTIONS, start=1)
    )
    (tmp_path / "ex.yml").write_text(f"dataset: {{id: 'https://ex.org/c/', prefix: ex}}\n"
                                     f"questions:\n{entries}")  # fmt: skip
    answers = [{"dataset": "https://ex.org/c/", "question": f"Q{n}?", "query": mine,
                "endpoint": "", "qname": f"ex:{n}-en", "uri": f"https://ex.org/c/{n}-en"}
               for n, (_, mine) in enumerate(QUESTIONS, start=1)]  # fmt: skip
    (tmp_path / "answers.json").write_text(json.dumps(answers))
    data = ("--data-dir", str(tmp_path / "data"))
    assert main([*data, "kb", "load", str(tmp_path / "kb.ttl"), "--name", "tiny"]) == 0
    capsys.readouterr()
    status = main([*data, "evaluate", "--dataset", str(tmp_path / "ex.yml"), "--kb", "tiny",
                   "--answers", str(tmp_path / "answers.json"), "--profile", "text2sparql-2026",
                   "--json"])  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 0, err
    doc = json.loads(out)
    extra = doc["extra_measures"]
    valid = {q: v["execution_valid"] for q, v in extra["per_question"].items()}
    match = {q: v["row_exact_match"] for q, v in extra["per_question"].items()}
    assert valid == {"ex:1-en": 1.0, "ex:2-en": 1.0, "ex:3-en": 0.0, "ex:4-en": 1.0, "ex:5-en": 0.0}
    assert match == {"ex:1-en": 1.0, "ex:2-en": 0.0, "ex:3-en": 0.0, "ex:4-en": 1.0, "ex:5-en": 0.0}
    assert extra["means"] == {"execution_valid": 0.6, "row_exact_match": 0.4}
    assert extra["defined"] == {"execution_valid": 5, "row_exact_match": 5}
    official = doc["text2sparql_eval"]
    # the duplicates leave the official set measures at 1: the two views differ on question 2
    assert official["ex:2-en"]["set_F"] == 1.0
    assert all(set(v) <= {"set_P", "set_recall", "set_F", "ndcg", "set_F_ndcg"}
               for v in official.values())  # fmt: skip
    assert not {"execution_valid", "row_exact_match"} & set(doc["results"]["QA"])

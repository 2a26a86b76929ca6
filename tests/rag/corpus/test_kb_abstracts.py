"""`qabench index build --kb`: a knowledge base's dbo:abstract texts become searchable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.cli import main
from tests import EXAMPLES


def _retrieve(capsys: pytest.CaptureFixture[str], data: str, question: str) -> dict:
    assert main(["--data-dir", data, "retrieve", question, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_abstracts_of_a_loaded_kb_are_indexed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path)
    assert (
        main(
            [
                "--data-dir",
                data,
                "kb",
                "load",
                str(EXAMPLES / "example-kb.ttl"),
                "--name",
                "example",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["--data-dir", data, "index", "build", "--kb", "example", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["added"] == 4
    assert main(["--data-dir", data, "index", "info", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["documents"] == 4
    found = _retrieve(capsys, data, "Which river flows through the old town of Graz?")
    assert found["documents"][0]["pmid"] == "http://dbpedia.org/resource/Graz"


def test_abstracts_from_a_sparql_endpoint(
    tmp_path: Path, example_endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path)
    assert (
        main(
            [
                "--data-dir",
                data,
                "index",
                "build",
                "--kb",
                example_endpoint,
                str(EXAMPLES / "example-abstracts.jsonl"),
                "--json",
            ]
        )
        == 0
    )
    built = json.loads(capsys.readouterr().out)
    assert built["documents"] == 12 + 4
    found = _retrieve(capsys, data, "When was the University of Vienna founded?")
    assert found["documents"][0]["pmid"] == "http://dbpedia.org/resource/University_of_Vienna"


def test_unknown_kb_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["--data-dir", str(tmp_path), "index", "build", "--kb", "nope"])
    assert status == 2
    assert "kb load" in capsys.readouterr().err

"""The RAG system benchmarked on QALD hybrid questions over a knowledge base's abstracts.

Offline there is no DBpedia abstract dump, so the index holds the example KB's abstracts and
the example corpus; the test proves the path (KB abstracts indexed, hybrid questions asked,
QALD scoring, results stored and shown), not the quality a full DBpedia index would give.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.cli import main
from tests import EXAMPLES


def test_rag_on_qald_hybrid_questions_is_stored_as_an_experiment(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hybrid = shared_data / "qald/ag-sc_QALD/6/data/qald-6-test-hybrid.json"
    cli = ["--data-dir", str(tmp_path)]
    assert main([*cli, "kb", "load", str(EXAMPLES / "example-kb.ttl"), "--name", "example"]) == 0
    assert (
        main([*cli, "index", "build", "--kb", "example", str(EXAMPLES / "example-abstracts.jsonl")])
        == 0
    )
    assert main([*cli, "datasets", "load", str(hybrid), "--name", "qald-6-test-hybrid"]) == 0
    capsys.readouterr()
    assert (
        main(
            [
                *cli,
                "experiment",
                "run",
                "--dataset",
                "qald-6-test-hybrid",
                "--builtin",
                "rag",
                "--profile",
                "strict",
                "--json",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    doc = json.loads(out[out.index("{") :])
    (task,) = doc["tasks"]
    assert (task["system"], task["state"], task["errors"]) == ("rag", "finished", 0)
    qa = task["results"]["QA"]
    assert qa["questions"] == 24
    assert 0 <= qa["macro_f1"] <= 1
    assert task["avg_millis"] is not None

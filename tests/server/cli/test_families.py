"""SciQA and MIRAGE through the command line: loaded, evaluated and run as experiments
(issue 39), on the excerpts of tests/data/sciqa and tests/data/mirage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.cli import main
from tests import TEST_DATA

SCIQA = TEST_DATA / "sciqa"
MIRAGE = TEST_DATA / "mirage"
GPT35_COT = "cot/OpenAI/gpt-35-turbo-16k"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_a_firesparql_run_is_evaluated_and_run_as_an_experiment(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = ("--data-dir", str(tmp_path / "data"))
    run_file = str(SCIQA / "firesparql-run.csv")
    status, out, err = run(capsys, *data, "datasets", "load", str(SCIQA / "questions.json"),
                           "--gold-results", run_file, "--name", "sciqa-excerpt",
                           "--json")  # fmt: skip
    assert status == 0, err
    assert json.loads(out)["questions"] == 7
    status, out, err = run(capsys, *data, "evaluate", "--dataset", "sciqa-excerpt", "--answers",
                           run_file, "--profile", "execution-em", "--json")  # fmt: skip
    assert status == 0, err
    qa = json.loads(out)["results"]["QA"]
    assert (qa["successful"], qa["em_successful"], round(qa["em_all"], 4)) == (4, 1.0, 0.5714)
    status, out, err = run(capsys, *data, "experiment", "run", "--dataset", "sciqa-excerpt",
                           "--answers", f"fs={run_file}", "--profile", "execution-em",
                           "--profile", "strict", "--publish", "--json")  # fmt: skip
    assert status == 0, err
    tasks = json.loads(out)["tasks"]
    assert [t["profile"] for t in tasks] == ["execution-em", "strict"]
    assert tasks[0]["results"]["QA"]["em_all"] == qa["em_all"]
    assert tasks[0]["state"] == "finished"


def test_sciqa_gold_from_answers_json_on_the_command_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = run(capsys, "--data-dir", str(tmp_path / "data"), "evaluate",
                           "--dataset", str(SCIQA / "questions.json"),
                           "--gold-results", str(SCIQA / "answers.json"),
                           "--answers", str(SCIQA / "firesparql-run.csv"),
                           "--profile", "execution-em", "--json")  # fmt: skip
    assert status == 0, err
    qa = json.loads(out)["results"]["QA"]
    assert (qa["successful"], qa["em_successful"]) == (4, 0.75)


def test_mirage_predictions_are_evaluated_and_run_as_an_experiment(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = ("--data-dir", str(tmp_path / "data"))
    status, out, err = run(capsys, *data, "datasets", "load",
                           str(MIRAGE / "benchmark-excerpt.json"), "--json")  # fmt: skip
    assert status == 0, err
    loaded = json.loads(out)
    assert (loaded["name"], loaded["questions"]) == ("mirage", 28)
    folder = str(MIRAGE / "prediction" / "{dataset}" / GPT35_COT)
    status, out, err = run(capsys, *data, "evaluate", "--dataset", "mirage", "--answers", folder,
                           "--profile", "mirage", "--json")  # fmt: skip
    assert status == 0, err
    qa = json.loads(out)["results"]["QA"]
    assert qa["accuracy_bioasq"] == pytest.approx(4 / 6)
    assert qa["accuracy_mmlu"] == pytest.approx(10 / 13)
    status, out, err = run(capsys, *data, "experiment", "run", "--dataset", "mirage",
                           "--answers", f"gpt-3.5-cot={folder}", "--profile", "mirage",
                           "--publish", "--json")  # fmt: skip
    assert status == 0, err
    (task,) = json.loads(out)["tasks"]
    assert task["results"]["QA"]["accuracy"] == pytest.approx(qa["accuracy"])


def test_mirage_is_built_from_its_raw_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = run(capsys, "--data-dir", str(tmp_path / "data"), "datasets", "load",
                           str(MIRAGE / "rawdata"), "--json")  # fmt: skip
    assert status == 0, err
    doc = json.loads(out)
    assert (doc["name"], doc["questions"]) == ("mirage", 28)
    # the rebuilt file is the published one (here: the excerpt's entries, byte for byte)
    import hashlib

    assert (
        doc["sha256"]
        == hashlib.sha256((MIRAGE / "benchmark-excerpt.json").read_bytes()).hexdigest()
    )

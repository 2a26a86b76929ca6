"""``qabench experiment run|show|list|publish|resume`` as a user calls them: output contract,
JSON document, and one-line errors with a non-zero exit status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators.datasets import library
from evaluators.experiments.task import NOT_TIMED
from server.cli import main
from store.triplestore import TripleStore
from tests.plugins.qa_stub import Reply, ok
from tests.plugins.qa_stub_experiments import QALD_FILES

BASE = "http://qabench.test"


@pytest.fixture
def cli_config(tmp_path: Path, shared_data: Path) -> Path:
    """A config file whose store already holds QALD-8 test (the store is closed again)."""
    path = tmp_path / "config.toml"
    path.write_text(
        f"""
[server]
base_iri = "{BASE}"
demo = false

[store]
data_dir = "{tmp_path / "data"}"

[datasets]
reference_data = "{shared_data}"

[evaluation]
request_timeout_seconds = 5.0
bootstrap_samples = 10
"""
    )
    store = TripleStore.open(tmp_path / "data" / "store")
    library.load_dataset(store, BASE, shared_data / QALD_FILES["qald-8-test"], name="qald-8-test")
    store.close()
    return path


def _run(capsys, config: Path, *args: str) -> tuple[int, str, str]:
    status = main(["--config", str(config), "experiment", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_run_json_prints_the_documented_document(capsys, cli_config: Path, shared_data) -> None:
    answers = shared_data / QALD_FILES["qald-8-test"]
    status, out, err = _run(
        capsys,
        cli_config,
        "run",
        "--dataset",
        "qald-8-test",
        "--builtin",
        "gold",
        "--answers",
        f"copy={answers}@qald-8-test",
        "--json",
    )
    assert status == 0, err
    # no progress bar when stderr is not a terminal; only where the token was written
    assert err.startswith("qabench: access token written to ") and err.count("\n") == 1
    doc = json.loads(out)
    assert set(doc) == {"id", "iri", "published", "token", "tasks"}
    assert len(doc["id"]) == 12 and doc["iri"] == f"{BASE}/experiment/{doc['id']}"
    assert doc["published"] is False and len(doc["token"]) >= 32
    # systems in the order web services, answers files, built-ins
    assert [(t["system"], t["dataset"], t["state"]) for t in doc["tasks"]] == [
        ("copy", "qald-8-test@1", "finished"),
        ("gold", "qald-8-test@1", "finished"),
    ]
    for task in doc["tasks"]:
        assert task["errors"] == 0 and task["language"] == "en" and task["profile"] == "strict"
        assert task["results"]["QA"]["macro_f1"] == 1.0
        assert task["results"]["QA"]["errors"] == 0
    # a built-in system is timed; answers read from a file are not (no meaningless ~0 ms)
    copy, gold = doc["tasks"]
    assert isinstance(gold["avg_millis"], float)
    assert copy["avg_millis"] is None
    assert copy["results"]["QA"]["avg_millis_undefined"] == NOT_TIMED

    # show gives the same document without the token; list and publish agree
    status, out, _ = _run(capsys, cli_config, "show", doc["id"], "--json")
    shown = json.loads(out)
    # show adds the experiment's reports (tested below)
    assert isinstance(shown.pop("reports"), dict)
    assert status == 0 and shown == {k: v for k, v in doc.items() if k != "token"}
    status, out, _ = _run(capsys, cli_config, "list", "--json")
    assert json.loads(out) == [{"id": doc["id"], "iri": doc["iri"], "published": False}]
    status, out, _ = _run(capsys, cli_config, "publish", doc["id"], "--json")
    assert json.loads(out)["published"] is True
    status, out, _ = _run(capsys, cli_config, "show", doc["id"], "--json")
    assert json.loads(out)["published"] is True
    # nothing left to resume: the finished tasks stay as they were
    status, out, _ = _run(capsys, cli_config, "resume", doc["id"], "--json")
    assert status == 0 and json.loads(out)["tasks"] == shown["tasks"]


def test_run_prints_the_id_first_and_the_token_once(capsys, cli_config: Path) -> None:
    status, out, err = _run(
        capsys,
        cli_config,
        "run",
        "--dataset",
        "qald-8-test",
        "--builtin",
        "gold",
        "--profile",
        "gerbil",
        "--language",
        "en",
    )
    assert status == 0, err
    lines = out.splitlines()
    assert len(lines[0]) == 12 and lines[0].isdigit()
    # the token comes right after the id, before any question is asked, and is kept in a file
    assert lines[1].startswith("access token (shown once")
    token = lines[1].rsplit(": ", 1)[1]
    token_file = cli_config.parent / "data" / "tokens" / f"{lines[0]}.token"
    assert token_file.read_text().strip() == token
    assert token_file.stat().st_mode & 0o777 == 0o600
    assert token_file.parent.stat().st_mode & 0o777 == 0o700
    assert f"experiment {lines[0]}" in lines[2] and "private" in lines[2]
    assert "gold | qald-8-test@1 | en | gerbil | finished errors=0 macro_f1=1.0000" in out, out


def test_the_token_exists_before_the_first_question_is_asked(
    capsys, cli_config: Path, qa_stubs
) -> None:
    tokens = cli_config.parent / "data" / "tokens"
    seen: list[list[str]] = []

    def behave(text: str, lang: str) -> Reply:
        seen.append(sorted(p.name for p in tokens.glob("*.token")))
        return ok(None)

    stub = qa_stubs(behave)
    status, out, err = _run(
        capsys, cli_config, "run", "--dataset", "qald-8-test", "--system", f"s={stub.url}",
        "--json",
    )  # fmt: skip
    assert status == 0, err
    doc = json.loads(out)
    assert seen and seen[0] == [f"{doc['id']}.token"]
    assert (tokens / f"{doc['id']}.token").read_text().strip() == doc["token"]
    assert err.strip() == f"qabench: access token written to {tokens / (doc['id'] + '.token')}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--dataset", "nope", "--builtin", "gold"], "No dataset 'nope'"),
        (["run", "--dataset", "qald-8-test", "--builtin", "nope"], "No built-in system"),
        (["run", "--dataset", "qald-8-test", "--system", "http://x"], "expects NAME=URL"),
        (["run", "--dataset", "qald-8-test", "--system", "a=ftp://x"], "not an absolute http"),
        (["run", "--dataset", "qald-8-test", "--answers", "/no/such.json"], "no such file"),
        (["run", "--dataset", "qald-8-test", "--builtin", "gold", "--profile", "x"], "profile"),
        (["show", "209901010000"], "No experiment '209901010000'"),
        (["publish", "209901010000"], "No experiment"),
        (["resume", "209901010000"], "No experiment"),
    ],
)
def test_errors_are_one_line_on_stderr(capsys, cli_config: Path, args, message) -> None:
    status, out, err = _run(capsys, cli_config, *args)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("qabench: error: ")
    assert message in err


def test_answers_file_that_does_not_fit_is_reported_before_anything_runs(
    capsys, cli_config: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"questions": [{"id": "999", "answers": []}, {"id": "999", "answers": []}]}')
    status, out, err = _run(
        capsys, cli_config, "run", "--dataset", "qald-8-test", "--answers", str(bad)
    )
    assert status == 2 and out == ""
    assert "'999'" in err and "duplicated" in err
    # a language the dataset lacks: exit 2 naming it, a JSON error for --json, nothing stored
    status, out, err = _run(
        capsys, cli_config, "run", "--dataset", "qald-8-test", "--builtin", "gold",
        "--language", "tlh", "--json",
    )  # fmt: skip
    assert status == 2 and "'tlh'" in err and "qald-8-test" in err
    assert "'tlh'" in json.loads(out)["error"]["message"]
    status, out, _ = _run(capsys, cli_config, "list", "--json")
    assert json.loads(out) == []


def test_show_reports_as_json_csv_markdown_and_latex(
    capsys, tmp_path: Path, shared_data: Path
) -> None:
    from tests import EXAMPLES

    data = ["--data-dir", str(tmp_path / "data")]
    assert main([*data, "datasets", "load", str(EXAMPLES / "example-questions.json")]) == 0
    capsys.readouterr()
    answers = EXAMPLES / "example-answers.json"
    status = main(
        [
            *data, "experiment", "run", "--dataset", "qabench-example",
            "--answers", f"mine={answers}", "--answers", f"again={answers}", "--builtin", "gold",
            "--language", "en", "--language", "de", "--profile", "qald-classic",
        ]
    )  # fmt: skip
    out, _ = capsys.readouterr()
    assert status == 0
    eid = out.splitlines()[0]
    assert main([*data, "experiment", "show", eid, "--json"]) == 0
    reports = json.loads(capsys.readouterr()[0])["reports"]
    assert reports["headline"] == {"qald-classic": ["processed_f1", "global_f1"]}
    assert reports["sanity_systems"] == ["gold"]
    (by_language,) = reports["by_language"]
    # only the languages asked (the dataset also has es and fr texts)
    assert by_language["columns"] == ["en", "de"] and by_language["measure"] == "processed_f1"
    rows = {r["system"]: r for r in by_language["rows"]}
    assert rows["gold"]["sanity_check"] and rows["gold"]["values"]["de"]["value"] == 1.0
    assert len(reports["significance"]) == 2  # en and de; gold left out
    group = reports["significance"][0]
    assert group["systems"] == ["mine", "again"] and group["friedman"]["p_value"] == 1.0
    assert group["pairwise"][0]["holm_p_value"] == 1.0

    assert main([*data, "experiment", "show", eid, "--format", "latex"]) == 0
    latex = capsys.readouterr()[0]
    assert latex.count(r"\toprule") >= 4 and r"gold (sanity check)" in latex
    assert main([*data, "experiment", "show", eid, "--format", "markdown"]) == 0
    markdown = capsys.readouterr()[0]
    assert "### QA by language (qald-classic profile)" in markdown
    assert "| System | Dataset | en | de |" in markdown
    assert main([*data, "experiment", "show", eid, "--format", "csv"]) == 0
    text = capsys.readouterr()[0]
    assert text.startswith("# Results\r\nTask,System,Dataset,Language,Profile,Type,")
    status = main([*data, "experiment", "show", eid, "--format", "csv", "--measure", "f2"])
    assert status == 2 and "unknown measure" in capsys.readouterr()[1]

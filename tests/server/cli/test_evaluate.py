"""`qabench evaluate`, `qabench kb` and `qabench datasets refresh` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.cli import main
from tests import EXAMPLES

QUESTIONS = EXAMPLES / "example-questions.json"
ANSWERS = EXAMPLES / "example-answers.json"
QA_KEYS = {
    "micro_precision",
    "micro_recall",
    "micro_f1",
    "macro_precision",
    "macro_recall",
    "macro_f1",
    "macro_f1_qald",
    "errors",
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def evaluate_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    globals_ = argv[:2] if argv[:1] == ("--data-dir",) else ()
    status, out, err = run(capsys, *globals_, "evaluate", *argv[len(globals_) :], "--json")
    assert status == 0, err
    return json.loads(out)


def test_json_shape_follows_the_contract(capsys: pytest.CaptureFixture[str]) -> None:
    doc = evaluate_json(capsys, "--dataset", str(QUESTIONS), "--answers", str(ANSWERS))
    assert (doc["profile"], doc["language"], doc["questions"]) == ("strict", "en", 8)
    assert set(doc["results"]["QA"]) >= QA_KEYS
    assert {"C2KB", "P2KB", "RE2KB"} <= set(doc["results"])
    for kind, measures in doc["results"].items():
        for name, value in measures.items():
            if name.endswith("_undefined") or value is None:
                continue
            assert 0 <= value <= 1 or name in ("errors", "avg_millis", "questions"), (kind, name)


@pytest.mark.parametrize("profile", ["strict", "gerbil", "gerbil-legacy", "qald-classic"])
def test_gold_against_itself_scores_one(capsys: pytest.CaptureFixture[str], profile: str) -> None:
    doc = evaluate_json(
        capsys, "--dataset", str(QUESTIONS), "--answers", str(QUESTIONS), "--profile", profile
    )
    qa = doc["results"]["QA"]
    for key in ("micro_f1", "macro_f1", "macro_precision", "macro_recall"):
        assert qa[key] == 1.0, (profile, key)
    if profile == "qald-classic":
        assert qa["processed"] == 8
        assert qa["global_f1"] == qa["processed_f1"] == 1.0


def test_strict_matches_more_than_gerbil_on_typed_literals(
    capsys: pytest.CaptureFixture[str],
) -> None:
    strict = evaluate_json(capsys, "--dataset", str(QUESTIONS), "--answers", str(ANSWERS))
    gerbil = evaluate_json(
        capsys, "--dataset", str(QUESTIONS), "--answers", str(ANSWERS), "--profile", "gerbil"
    )
    # 291134 vs 291134.0 and 1365-03-12 vs 1365-03-12T00:00:00Z match only under strict
    assert strict["results"]["QA"]["micro_f1"] > gerbil["results"]["QA"]["micro_f1"]


def test_fail_under_gates_the_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(
        capsys,
        "evaluate",
        "--dataset",
        str(QUESTIONS),
        "--answers",
        str(ANSWERS),
        "--fail-under",
        "micro_f1=0.99",
        "--json",
    )
    assert status == 1
    # the message goes to stderr: stdout stays one valid JSON document, which says it too
    assert "QA.micro_f1 = " in err and "< 0.99" in err
    doc = json.loads(out)
    assert doc["results"]["QA"]["micro_f1"] < 0.99
    (check,) = doc["fail_under"]
    assert check["measure"] == "QA.micro_f1" and check["threshold"] == 0.99
    assert check["passed"] is False and check["value"] == doc["results"]["QA"]["micro_f1"]
    status, _, _ = run(
        capsys,
        "evaluate",
        "--dataset",
        str(QUESTIONS),
        "--answers",
        str(QUESTIONS),
        "--fail-under",
        "QA.micro_f1=0.99",
    )
    assert status == 0
    status, _, err = run(
        capsys,
        "evaluate",
        "--dataset",
        str(QUESTIONS),
        "--answers",
        str(ANSWERS),
        "--fail-under",
        "f2=0.5",
    )
    assert status == 2 and "unknown measure" in err


def test_unknown_answer_ids_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(ANSWERS.read_text("utf-8"))
    doc["questions"][0]["id"] = "404"
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(doc), "utf-8")
    result = evaluate_json(capsys, "--dataset", str(QUESTIONS), "--answers", str(path))
    assert result["unknown_ids"] == ["404"]
    # the readable table keeps stdout for results; the warning goes to stderr
    status, out, err = run(capsys, "evaluate", "--dataset", str(QUESTIONS), "--answers", str(path))
    assert status == 0 and "404" not in out and "Micro F1" in out
    assert "1 answer id(s) not in the dataset were ignored: '404'" in err
    # an experiment applies the same rule: the id is ignored, listed and recorded, and the
    # numbers are those of evaluate; --strict-ids (or evaluation.strict_ids) refuses the file
    data = ("--data-dir", str(tmp_path / "data"))
    assert run(capsys, *data, "datasets", "load", str(QUESTIONS), "--name", "ex")[0] == 0
    status, out, err = run(capsys, *data, "experiment", "run", "--dataset", "ex", "--answers",
                           f"mine={path}", "--json")  # fmt: skip
    assert status == 0, err
    ran = json.loads(out)
    assert "answers file answers.json: 1 id(s) not in ex@1 were ignored: '404'" in err
    assert ran["warnings"] == ["answers file answers.json: 1 id(s) not in ex@1 were ignored: '404'"]
    assert ran["tasks"][0]["results"] == result["results"]
    # and under the GERBIL profiles (the 2018 counter among them) alike
    status, out, err = run(capsys, *data, "experiment", "run", "--dataset", "ex", "--answers",
                           f"mine={path}", "--profile", "gerbil-2018", "--profile", "gerbil",
                           "--json")  # fmt: skip
    tasks = json.loads(out)["tasks"]
    assert status == 0 and [t["profile"] for t in tasks] == ["gerbil-2018", "gerbil"]
    for task in tasks:
        evaluated = evaluate_json(capsys, *data, "--dataset", "ex", "--answers", str(path),
                                  "--profile", task["profile"])  # fmt: skip
        assert task["results"] == evaluated["results"] and evaluated["unknown_ids"] == ["404"]
    for command in (("evaluate", "--dataset", "ex", "--answers", str(path), "--json"),
                    ("experiment", "run", "--dataset", "ex", "--answers", str(path), "--json")):  # fmt: skip
        status, out, err = run(capsys, *data, *command, "--strict-ids")
        assert (
            status == 2
            and "1 id(s) not in the dataset: '404'" in json.loads(out)["error"]["message"]
        )
    config = tmp_path / "strict.toml"
    config.write_text(
        f'[store]\ndata_dir = "{tmp_path / "data"}"\n[evaluation]\nstrict_ids = true\n'
    )
    status, out, err = run(capsys, "--config", str(config), "evaluate", "--dataset", "ex",
                           "--answers", str(path))  # fmt: skip
    assert status == 2 and "not in the dataset: '404'" in err
    status, out, _ = run(capsys, *data, "experiment", "list", "--json")
    assert len(json.loads(out)) == 2  # the refused ones stored nothing


def test_stored_dataset_and_kb_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = str(tmp_path)
    assert run(capsys, "--data-dir", d, "datasets", "load", str(QUESTIONS), "--name", "ex")[0] == 0
    without = evaluate_json(capsys, "--data-dir", d, "--dataset", "ex", "--answers", str(ANSWERS))
    status, out, _ = run(
        capsys,
        "--data-dir",
        d,
        "kb",
        "load",
        str(EXAMPLES / "example-kb.ttl"),
        "--name",
        "example",
        "--json",
    )
    # the load states no count: `qabench serve` counts the graph when it lays it out
    assert status == 0 and json.loads(out)["triples"] is None
    _, out, _ = run(capsys, "--data-dir", d, "kb", "list", "--json")
    assert [(k["name"], k["triples"]) for k in json.loads(out)] == [("example", None)]
    with_kb = evaluate_json(
        capsys, "--data-dir", d, "--dataset", "ex", "--answers", str(ANSWERS), "--kb", "example"
    )
    # question 7: the system answers Vienna's Wikidata page; only the KB's owl:sameAs links it
    assert with_kb["results"]["QA"]["micro_f1"] > without["results"]["QA"]["micro_f1"]
    status, _, err = run(
        capsys,
        "--data-dir",
        d,
        "evaluate",
        "--dataset",
        "ex",
        "--answers",
        str(ANSWERS),
        "--kb",
        "nope",
    )
    assert status == 2 and "kb load" in err


def test_bioasq_gold_against_itself(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = next((shared_data / "bioasq").rglob("BioASQ-trainingDataset2b.json"))
    doc = json.loads(source.read_text("utf-8"))
    doc["questions"] = doc["questions"][:40]
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(doc), "utf-8")
    result = evaluate_json(capsys, "--dataset", str(gold), "--answers", str(gold))
    assert result["profile"] == "bioasq"
    docs = result["results"]["documents"]
    assert docs["mean_precision"] == docs["mean_recall"] == pytest.approx(1.0)
    # The official AP divides by min(10, |gold|) and does not cut responses to 10 documents,
    # so a gold list longer than 10 used as a response scores MAP above 1 (bioasq.md, quirk 2).
    assert docs["map"] >= 1.0
    assert result["results"]["snippets"]["mean_f1"] == pytest.approx(1.0)
    assert set(result["results"]) >= {"documents", "snippets", "yesno", "factoid", "list", "ideal"}


def test_refresh_stores_a_new_version_with_provenance(
    tmp_path: Path, example_endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(QUESTIONS.read_text("utf-8"))
    # stale gold: Graz's population from an older KB; and a query the endpoint rejects
    doc["questions"][1]["answers"][0]["results"]["bindings"][0]["num"]["value"] = "250000"
    doc["questions"][4]["query"]["sparql"] = "SELECT ?x WHERE { ?x"
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps(doc), "utf-8")
    d = str(tmp_path / "d")
    run(capsys, "--data-dir", d, "datasets", "load", str(stale), "--name", "ex")
    status, out, err = run(
        capsys,
        "--data-dir",
        d,
        "datasets",
        "refresh",
        "ex",
        "--endpoint",
        example_endpoint,
        "--json",
    )
    assert status == 0, err
    result = json.loads(out)
    assert (result["version"], result["created"]) == (2, True)
    assert [f["question_id"] for f in result["failures"]] == ["5"]
    fresh = evaluate_json(
        capsys,
        "--data-dir",
        d,
        "--dataset",
        "ex@2",
        "--answers",
        str(QUESTIONS),
        "--profile",
        "gerbil",
    )
    old = evaluate_json(
        capsys,
        "--data-dir",
        d,
        "--dataset",
        "ex@1",
        "--answers",
        str(QUESTIONS),
        "--profile",
        "gerbil",
    )
    assert fresh["results"]["QA"]["micro_f1"] > old["results"]["QA"]["micro_f1"]


QALD8_ANSWERS = "systems/AKSW_NLIWOD/qa.ml/src/main/resources/QALD8Answers"
QALD8_TRAIN = "qald/ag-sc_QALD/8/data/qald-8-train-multilingual.json"


def _answer_variants(shared_data: Path, folder: Path) -> dict[str, Path]:
    """Real QALD-8 train outputs, plus two shapes derived from one of them: a file without
    every third question (unprocessed questions) and one that writes a default
    ``"boolean": true`` next to every result's bindings (as real systems do)."""
    source = shared_data / QALD8_ANSWERS / "GANSWER2_QALD8_Train.json"
    doc = json.loads(source.read_text())
    partial = dict(doc, questions=[q for i, q in enumerate(doc["questions"]) if i % 3])
    flagged = json.loads(source.read_text())
    for question in flagged["questions"]:
        for result in question.get("answers", []):
            if "bindings" in result.get("results", {}):
                result["boolean"] = True
    files = {"qakis": shared_data / QALD8_ANSWERS / "QAKIS_QALD8_Train.json", "ganswer": source}
    for name, content in (("partial", partial), ("flagged", flagged)):
        files[name] = folder / f"{name}.json"
        files[name].write_text(json.dumps(content))
    return files


@pytest.mark.parametrize(
    "profile",
    [
        "qald-classic",
        # the same comparison under the profiles that score sub-experiments: slow lane
        *(pytest.param(p, marks=pytest.mark.slow) for p in ("strict", "gerbil", "gerbil-legacy")),
    ],
)
def test_evaluate_and_experiment_give_the_same_numbers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, shared_data: Path, profile: str
) -> None:
    data = tmp_path / "data"
    gold = shared_data / QALD8_TRAIN
    files = _answer_variants(shared_data, tmp_path)
    status, _, err = run(capsys, "--data-dir", str(data), "datasets", "load", str(gold))
    assert status == 0, err
    argv = ["--data-dir", str(data), "experiment", "run", "--dataset", "qald-8-train-multilingual"]
    for name, path in files.items():
        argv += ["--answers", f"{name}={path}"]
    status, out, err = run(capsys, *argv, "--profile", profile, "--json")
    assert status == 0, err
    tasks = {t["system"]: t for t in json.loads(out)["tasks"]}
    assert len(tasks) == 4
    for name, path in files.items():
        for dataset in (str(gold), "qald-8-train-multilingual"):
            evaluated = evaluate_json(
                capsys, "--data-dir", str(data), "--dataset", dataset, "--answers", str(path),
                "--profile", profile,
            )  # fmt: skip
            assert evaluated["results"] == tasks[name]["results"], (name, dataset)
        qa = tasks[name]["results"]["QA"]
        assert qa["questions"] == 219
        if profile == "qald-classic":
            # questions absent from the answers file are not processed
            assert qa["processed"] == (146 if name == "partial" else 219)
    if profile == "qald-classic":
        flagged, plain = tasks["flagged"]["results"]["QA"], tasks["ganswer"]["results"]["QA"]
        # the classic script reads the bindings whenever the key is there: the default
        # boolean next to them changes nothing
        assert flagged == plain
    if profile == "gerbil":
        flagged, plain = tasks["flagged"]["results"]["QA"], tasks["ganswer"]["results"]["QA"]
        assert flagged["micro_precision"] < plain["micro_precision"]


def test_zero_questions_is_an_error_naming_the_language(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(
        capsys, "evaluate", "--dataset", str(QUESTIONS), "--answers", str(ANSWERS),
        "--language", "xx", "--json", "--fail-under", "micro_f1=0.5",
    )  # fmt: skip
    # not micro F1 1.0 over nothing: exit 2, one line on stderr, and as --json asked, a JSON
    # error document (not the results) on stdout
    assert status == 2 and err.count("\n") == 1
    assert "'xx'" in err and "nothing to evaluate" in err and "en" in err
    error = json.loads(out)["error"]
    assert error["status"] == 2 and "'xx'" in error["message"] and "results" not in out


def test_json_is_valid_even_for_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "evaluate", "--dataset", str(QUESTIONS), "--json")
    assert status == 2 and "--answers" in err
    assert "--answers" in json.loads(out)["error"]["message"]
    # without --json nothing but the usage and the message, on stderr
    status, out, err = run(capsys, "evaluate", "--dataset", str(QUESTIONS))
    assert status == 2 and out == "" and err.startswith("usage: qabench evaluate")


def test_sparql_only_answers_are_run_on_the_kb_unless_no_execute(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pyoxigraph import NamedNode

    from store.triplestore import TripleStore
    from vocab.project import QAB

    d = str(tmp_path / "data")
    kb = str(EXAMPLES / "example-kb.ttl")
    assert run(capsys, "--data-dir", d, "kb", "load", kb, "--name", "example")[0] == 0
    gold = json.loads(QUESTIONS.read_text("utf-8"))["questions"]
    # a text-to-SPARQL system: queries only, in the simple JSON list format
    only = [{"id": q["id"], "sparql": q["query"]["sparql"]} for q in gold]
    path = tmp_path / "queries.json"
    path.write_text(json.dumps(only), "utf-8")
    base = ("--data-dir", d, "--dataset", str(QUESTIONS), "--answers", str(path), "--kb", "example")
    ran = evaluate_json(capsys, *base)
    assert ran["results"]["QA"]["macro_f1"] == 1.0 and ran["results"]["QA"]["questions"] == 8
    assert any("8 SPARQL-only answer(s)" in note for note in ran["notes"])
    off = evaluate_json(capsys, *base, "--no-execute")
    assert off["results"]["QA"]["macro_f1"] == 0.0
    assert not any("SPARQL-only" in note for note in off.get("notes", []))

    # the experiment path runs them too (evaluation.kb) and records it on each stored reply
    config = tmp_path / "config.toml"
    config.write_text(f'[store]\ndata_dir = "{d}"\n[evaluation]\nkb = "example"\n')
    status, out, err = run(
        capsys, "--config", str(config), "datasets", "load", str(QUESTIONS), "--name", "ex"
    )
    assert status == 0, err
    status, out, err = run(
        capsys, "--config", str(config), "experiment", "run", "--dataset", "ex",
        "--answers", f"t2s={path}", "--json",
    )  # fmt: skip
    assert status == 0, err
    (task,) = json.loads(out)["tasks"]
    assert task["results"]["QA"]["macro_f1"] == 1.0
    store = TripleStore.open(tmp_path / "data" / "store")
    try:
        executed = list(store.quads(None, QAB.executedQuery, None, None))
        assert len(executed) == 8
        assert all(q.object.value.endswith("/kb/example") for q in executed)
        assert all(isinstance(q.subject, NamedNode) for q in executed)
    finally:
        store.close()


def test_experiment_run_takes_the_kb_as_evaluate_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = str(tmp_path / "data")
    assert run(capsys, "--data-dir", d, "kb", "load", str(EXAMPLES / "example-kb.ttl"),
               "--name", "example")[0] == 0  # fmt: skip
    assert run(capsys, "--data-dir", d, "datasets", "load", str(QUESTIONS), "--name", "ex")[0] == 0
    gold = json.loads(QUESTIONS.read_text("utf-8"))["questions"]
    path = tmp_path / "queries.json"
    path.write_text(json.dumps([{"id": q["id"], "sparql": q["query"]["sparql"]} for q in gold]))
    experiment = ("--data-dir", d, "experiment", "run", "--dataset", "ex", "--answers",
                  f"t2s={path}", "--json")  # fmt: skip
    # no evaluation.kb configured: --kb alone makes the queries run, and is recorded
    status, out, err = run(capsys, *experiment, "--kb", "example")
    assert status == 0, err
    document = json.loads(out)
    (task,) = document["tasks"]
    evaluated = evaluate_json(
        capsys, "--data-dir", d, "--dataset", "ex", "--answers", str(path), "--kb", "example"
    )
    assert task["results"] == evaluated["results"]
    assert task["results"]["QA"]["macro_f1"] == 1.0
    from evaluators.experiments.read import experiment_facts
    from server.config import Config
    from store.triplestore import TripleStore

    store = TripleStore.open(tmp_path / "data" / "store")
    try:
        facts = experiment_facts(store, Config().base_iri, document["id"])
        assert facts.knowledge_base == "example"
    finally:
        store.close()
    # without it nothing runs; an unknown KB or a bad URL is refused before anything is stored
    status, out, err = run(capsys, *experiment)
    assert status == 0 and json.loads(out)["tasks"][0]["results"]["QA"]["macro_f1"] == 0.0
    for spec, message in (("no-such-kb", "No knowledge base 'no-such-kb'"),
                          ("http://", "not an absolute http(s)")):  # fmt: skip
        status, out, err = run(capsys, *experiment, "--kb", spec)
        assert status == 2 and message in json.loads(out)["error"]["message"]
    status, out, _ = run(capsys, "--data-dir", d, "experiment", "list", "--json")
    assert len(json.loads(out)) == 2


def test_malformed_tsv_answers_name_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "answers.tsv"
    path.write_text("1\thttp://dbpedia.org/resource/Danube\n2 291134\n", "utf-8")
    status, out, err = run(
        capsys, "evaluate", "--dataset", str(QUESTIONS), "--answers", str(path), "--json"
    )
    assert status == 2 and "at line 2" in err and "no tab" in err
    assert "at line 2" in json.loads(out)["error"]["message"]


@pytest.mark.parametrize("spec", ["http://127.0.0.1:9/sparql", "HTTPS://127.0.0.1:9/sparql"])
def test_an_endpoint_kb_never_opens_the_store(tmp_path: Path, spec: str) -> None:
    # An endpoint needs no store: a store held by `qabench serve` must not stop the command.
    # The scheme's case does not matter (evaluators.knowledge.endpoint.is_endpoint decides).
    from evaluators.knowledge.execution import EndpointExecutor
    from server.cli.context import Context
    from server.config import load_config

    with Context(load_config(None, data_dir=tmp_path / "data")) as ctx:
        executor = ctx.executor(spec)
        assert isinstance(executor, EndpointExecutor)
        assert ctx._store is None

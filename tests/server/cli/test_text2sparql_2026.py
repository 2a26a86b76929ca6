"""TEXT2SPARQL'26 from the command line: the 2026 shape, the official files, the ask protocol."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyoxigraph import NamedNode, RdfFormat

from evaluators.experiments.answers import stored_replies
from evaluators.experiments.model import AskingUnit
from server.cli import main
from store.triplestore import TripleStore
from tests.evaluators.systems.test_text2sparql_protocol import QUERY, FailingEndpoint
from tests.plugins.formats import T2s26Files, T2sFiles
from tests.store.engines import serving_virtuoso


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_a_2025_result_set_in_the_2026_shape_with_the_official_files(
    capsys: pytest.CaptureFixture[str], t2s_files: T2sFiles, tmp_path: Path
) -> None:
    pred = t2s_files.result("IIS-Q", "db25", "system_result_set")
    argv = (
        "--data-dir", str(tmp_path / "data"), "evaluate",
        "--dataset", str(t2s_files.questions("db25")),
        "--gold-results", str(t2s_files.reference("db25")),
        "--answers", str(pred), "--profile", "text2sparql-2026",
        "--official-dir", str(tmp_path / "official"), "--json",
    )  # fmt: skip
    status, out, err = _run(capsys, *argv)
    assert status == 0, err
    doc = json.loads(out)["text2sparql_eval"]
    published = json.loads(t2s_files.result("IIS-Q", "db25", "eval").read_text())
    qnames = [q for q in published if q != "average"]
    assert len(qnames) == 200 and all(doc[q] == published[q] for q in qnames)
    assert sorted(k for k in doc if k.startswith("average")) == [
        "average", "average-en", "average-es"
    ]  # fmt: skip
    assert doc["average"]["set_F_ndcg"] == published["average"]["set_F_ndcg"]
    assert doc["average-es"]["set_F"] == published["average"]["set_F-es"]
    assert "set_F-es" not in doc["average"]
    written = sorted(p.name for p in (tmp_path / "official").iterdir())
    assert written == [
        "db25_pred_result_set.json", "db25_results.json", "db25_true_result_set.json"
    ]  # fmt: skip
    assert json.loads((tmp_path / "official" / "db25_results.json").read_text()) == doc
    pred_written = json.loads((tmp_path / "official" / "db25_pred_result_set.json").read_text())
    assert pred_written == json.loads(pred.read_text())  # what was scored, value for value
    true_written = json.loads((tmp_path / "official" / "db25_true_result_set.json").read_text())
    reference = json.loads(t2s_files.reference("db25").read_text())
    assert {k: v for k, v in true_written.items() if k != "order_required"} == reference
    assert true_written["order_required"] and "ordered" not in err
    # the files are never overwritten: a second run refuses before it scores
    status, out, err = _run(capsys, *argv)
    assert status == 2 and "db25_results.json exists" in json.loads(out)["error"]["message"]


def test_official_files_are_only_for_text2sparql_profiles(
    capsys: pytest.CaptureFixture[str], t2s_files: T2sFiles, tmp_path: Path
) -> None:
    status, out, _ = _run(
        capsys, "--data-dir", str(tmp_path / "data"), "evaluate",
        "--dataset", str(t2s_files.questions("ck25")),
        "--gold-results", str(t2s_files.reference("ck25")),
        "--answers", str(t2s_files.result("WSE", "ck25", "system_result_set")),
        "--profile", "strict", "--official-dir", str(tmp_path / "o"), "--json",
    )  # fmt: skip
    assert status == 2 and "for the TEXT2SPARQL profiles" in json.loads(out)["error"]["message"]
    assert not (tmp_path / "o").exists()


def test_an_experiment_retries_a_failing_endpoint_and_records_the_log(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    questions = tmp_path / "ex.yml"
    questions.write_text(
        "dataset: {id: 'https://ex.org/c/', prefix: ex}\nquestions:\n"
        + "".join(
            f"  - {{id: {n}, question: {{en: 'Q{n}?'}}, query: {{sparql: '{QUERY}'}}}}\n"
            for n in (1, 2)
        )
    )
    reference = tmp_path / "ex_true_result_set.json"
    reference.write_text(
        json.dumps({"ex:1-en": {"http://ex.org/a": 1}, "ex:2-en": {"http://ex.org/a": 1}})
    )
    graph = tmp_path / "kb.ttl"
    graph.write_text("<http://ex.org/a> a <http://ex.org/C> .\n")
    config = tmp_path / "fast.toml"
    config.write_text(
        f'[store]\ndata_dir = "{tmp_path / "data"}"\n[evaluation]\n'
        "text2sparql_timeout_seconds = 0.5\ntext2sparql_retries = 2\n"
        "text2sparql_retry_sleep_seconds = 0.01\n"
    )
    cfg = ("--config", str(config))
    endpoint = FailingEndpoint({"Q1?": ["503"], "Q2?": ["500"] * 9})
    try:
        for argv in (("kb", "load", str(graph), "--name", "tiny"),
                     ("datasets", "load", str(questions), "--gold-results", str(reference))):  # fmt: skip
            status, _, err = _run(capsys, *cfg, *argv)
            assert status == 0, err
        status, out, err = _run(capsys, *cfg, "experiment", "run", "--dataset", "ex", "--kb", "tiny",
                                "--text2sparql", f"sys={endpoint.url}",
                                "--profile", "text2sparql-2026", "--json")  # fmt: skip
    finally:
        endpoint.close()
    assert status == 0, err
    doc = json.loads(out)
    (task,) = doc["tasks"]
    assert task["errors"] == 1 and task["state"] == "finished"
    evaluation = task["text2sparql_eval"]
    assert evaluation["ex:1-en"]["set_F"] == 1.0 and evaluation["ex:2-en"]["set_F"] == 0.0
    assert len(endpoint.requests) == 2 + 3  # Q1 twice, Q2 once and twice more
    store = TripleStore.open(tmp_path / "data" / "store")
    try:
        base = "http://localhost:8080"
        replies = stored_replies(store, base, doc["id"], AskingUnit("sys", "ex", 1, "en"))
    finally:
        store.close()
    assert replies["ex:1-en"].retries == (
        "ex:1-en | HTTP 503",
        "ex:1-en | Retrying (1/2) after 0.01 seconds...",
    )
    assert (
        replies["ex:2-en"]
        .retries[-1]
        .endswith("Maximum number of retries reached. Skipping question.")
    )
    assert replies["ex:2-en"].error == "http-status: HTTP 500"


@pytest.mark.slow
def test_engine_differences_of_ck26_between_oxigraph_and_virtuoso(
    capsys: pytest.CaptureFixture[str], t2s_files: T2sFiles, t2s26: T2s26Files, tmp_path: Path
) -> None:
    data = ("--data-dir", str(tmp_path / "data"))
    status, _, err = _run(capsys, *data, "kb", "load", *map(str, t2s_files.graph), "--name", "ck25")
    assert status == 0, err
    with serving_virtuoso(tmp_path / "virtuoso") as engine:
        remote = engine.store()
        graph = NamedNode("http://example.org/ck25")
        try:
            for path in t2s_files.graph:
                remote.load(path.read_bytes(), RdfFormat.TURTLE, graph=graph)
        finally:
            remote.close()
        # anonymous readers may read that graph (the suite's Virtuoso denies them every graph)
        engine.sql(f"DB.DBA.RDF_GRAPH_USER_PERMS_SET ('{graph.value}', 'nobody', 1);")
        endpoint = engine.query_url.replace("/sparql-auth", "/sparql")
        status, out, err = _run(capsys, *data, "datasets", "engines",
                                str(t2s26.questions("ck26")), "--kb", "ck25",
                                "--versus", endpoint, "--json")  # fmt: skip
        # the extra measures of a published 2025 system's queries, run on both engines
        extra = {}
        for kb in ("ck25", endpoint):
            status2, out2, err2 = _run(capsys, *data, "evaluate",
                                       "--dataset", str(t2s_files.questions("ck25")),
                                       "--answers", str(t2s_files.result("WSE", "ck25", "answers")),
                                       "--kb", kb, "--profile", "text2sparql-2026", "--json")  # fmt: skip
            assert status2 == 0, err2
            extra[kb] = json.loads(out2)["extra_measures"]
    assert status == 0, err
    for measures in extra.values():
        assert measures["defined"]["execution_valid"] == 50  # every answer carries a query
        assert 0 < measures["means"]["row_exact_match"] < measures["means"]["execution_valid"] < 1
    assert extra["ck25"]["means"]["execution_valid"] == 0.58  # 29 of WSE's 50 queries
    doc = json.loads(out)
    assert doc["questions"] == 100
    by_id = {d["question_id"]: d for d in doc["differences"]}
    questions = {int(q.split(":")[1].split("-")[0]) for q in by_id}
    assert len(by_id) == 2 * len(questions)  # a reference query differs in both languages
    # always: Oxigraph does not evaluate xsd:int(...) (37, 42), Virtuoso fails on 25; and LIMIT
    # keeps other rows among ties (29, 46, 50: which of them differ varies from run to run)
    assert {25, 37, 42} <= questions <= {25, 29, 37, 42, 46, 50}
    ties = [d for q, d in by_id.items() if int(q.split(":")[1].split("-")[0]) in (29, 46, 50)]
    assert all(d["first"] and d["second"] for d in ties)
    assert (
        by_id["ck26:37-en"]["first"] is None
        and "XMLSchema#int" in by_id["ck26:37-en"]["description"]
    )
    assert (
        by_id["ck26:25-de"]["second"] is None and "HTTP 500" in by_id["ck26:25-de"]["description"]
    )

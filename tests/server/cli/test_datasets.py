"""The datasets command line as a user runs it: JSON contracts, errors, isolation, fetch."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from server.cli import main
from tests import REPO

EXAMPLE = REPO / "server" / "examples" / "example-questions.json"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_load_prints_id_and_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--data-dir", str(tmp_path), "datasets", "load", str(EXAMPLE))
    assert status == 0
    assert out.startswith("qabench-example/v1\t8 questions")


def test_load_json_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys,
        "--data-dir",
        str(tmp_path),
        "datasets",
        "load",
        str(EXAMPLE),
        "--name",
        "demo",
        "--json",
    )
    doc = json.loads(out)
    assert status == 0
    assert doc["id"] == "demo/v1"
    assert (doc["name"], doc["version"], doc["questions"], doc["created"]) == ("demo", 1, 8, True)
    status, out, _ = run(
        capsys,
        "--data-dir",
        str(tmp_path),
        "datasets",
        "load",
        str(EXAMPLE),
        "--name",
        "demo",
        "--json",
    )
    assert json.loads(out)["created"] is False
    status, out, _ = run(capsys, "--data-dir", str(tmp_path), "datasets", "list", "--json")
    listed = json.loads(out)
    assert [(d["name"], d["version"], d["questions"]) for d in listed] == [("demo", 1, 8)]


def test_data_dirs_are_isolated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "--data-dir", str(tmp_path / "a"), "datasets", "load", str(EXAMPLE))
    _, out, _ = run(capsys, "--data-dir", str(tmp_path / "b"), "datasets", "list", "--json")
    assert json.loads(out) == []


def test_an_empty_dataset_is_refused_and_listing_survives_a_bad_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from server.config import load_config
    from store.triplestore import TripleStore
    from tests.evaluators.datasets.test_library import poison_store

    empty = tmp_path / "empty.json"
    empty.write_text('{"questions": []}', "utf-8")
    data = tmp_path / "data"
    status, _, err = run(capsys, "--data-dir", str(data), "datasets", "load", str(empty))
    assert status != 0 and "holds no questions" in err
    store = TripleStore.open(load_config(data_dir=data).store_path)
    try:
        poison_store(store)
    finally:
        store.close()
    status, out, _ = run(capsys, "--data-dir", str(data), "datasets", "list", "--json")
    assert status == 0
    assert [v["name"] for v in json.loads(out)] == ["empty", "good"]


def test_errors_are_one_line_on_stderr_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"questions": [', "utf-8")
    env = {**os.environ, "QABENCH_DATA_DIR": str(tmp_path / "d")}
    result = subprocess.run(
        [sys.executable, "-m", "server", "datasets", "load", str(bad)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode != 0
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "bad.json" in lines[0]
    assert "Traceback" not in result.stderr
    assert (tmp_path / "d").exists()  # QABENCH_DATA_DIR was honoured


def test_check_reports_findings_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(EXAMPLE.read_text("utf-8"))
    doc["questions"][1]["query"]["sparql"] = "SELECT ?x WHERE { ?x <p> "
    doc["questions"][2]["id"] = "1"
    doc["questions"][3]["answertype"] = "uri"
    path = tmp_path / "flawed.json"
    path.write_text(json.dumps(doc), "utf-8")
    status, out, _ = run(
        capsys,
        "--data-dir",
        str(tmp_path),
        "datasets",
        "check",
        str(path),
        "--json",
        "--fail-on",
        "error",
    )
    report = json.loads(out)
    assert status == 1
    codes = {f["code"] for f in report["findings"]}
    assert {"sparql-syntax", "duplicate-id", "unknown-answer-type"} <= codes
    syntax = next(f for f in report["findings"] if f["code"] == "sparql-syntax")
    assert syntax["question_id"] == "2"
    assert syntax["line"] == 1 and syntax["column"] is not None


def test_unrelated_files_with_one_name_are_not_made_versions_of_each_other(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # regression: QALD-3's dbpedia-test.xml became dbpedia-test/v2 of QALD-1's
    data = ["--data-dir", str(tmp_path), "datasets", "load"]
    qald1 = shared_data / "qald/ag-sc_QALD/1/data/dbpedia-test.xml"
    qald3 = shared_data / "qald/ag-sc_QALD/3/data/dbpedia-test-answers.xml"
    status, out, _ = run(capsys, *data, str(qald1))
    assert status == 0 and out.startswith("dbpedia-test/v1\t50 questions")  # its <dataset id>
    status, out, err = run(capsys, *data, str(qald3))
    assert status == 2 and out == ""
    assert "'dbpedia-test' already exists" in err and "--name" in err and "--new-version" in err
    status, out, _ = run(capsys, *data, str(qald3), "--name", "qald-3-dbpedia-test")
    assert status == 0 and out.startswith("qald-3-dbpedia-test/v1\t99 questions")
    status, out, _ = run(capsys, *data, str(qald3), "--new-version")
    assert status == 0 and out.startswith("dbpedia-test/v2\t99 questions")
    # the same file again is still a no-op, whatever the flags
    status, out, _ = run(capsys, *data, str(qald1))
    assert status == 0 and "unchanged" in out


def test_check_of_qald5_train_reports_the_query_it_cannot_evaluate(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # regression: `datasets check qald-5_train` ended in a traceback (a query calling
    # <http://w.w3.org/201/XMLSchema#integer>, which Oxigraph parses but cannot evaluate)
    path = shared_data / "qald/ag-sc_QALD/5/data/qald-5_train.json"
    data = ["--data-dir", str(tmp_path)]
    assert run(capsys, *data, "datasets", "load", str(path))[0] == 0
    status, out, err = run(capsys, *data, "datasets", "check", "qald-5_train", "--json")
    assert status == 0, err
    report = json.loads(out)
    assert report["questions"] == 340
    found = [f for f in report["findings"] if "cannot be evaluated" in f["message"]]
    assert len(found) == 1 and "XMLSchema#integer" in found[0]["message"]
    assert found[0]["code"] == "sparql-unsupported" and found[0]["question_id"]


@pytest.mark.slow
def test_check_never_crashes_on_any_shared_file(shared_data: Path) -> None:
    from evaluators.datasets.checks import check_dataset
    from evaluators.datasets.library import sparql_syntax_problem
    from evaluators.errors import DatasetFormatError
    from evaluators.formats import parse_file

    checked = 0
    for path in sorted((shared_data / "qald").rglob("*")) + sorted(
        (shared_data / "systems").rglob("*")
    ):
        if path.suffix not in (".json", ".xml"):
            continue
        try:
            dataset = parse_file(path)
        except DatasetFormatError:
            continue  # refused files are the format tests' business
        report = check_dataset(dataset, sparql_syntax_problem)
        assert report.questions == len(dataset.questions), path
        checked += 1
    assert checked >= 130


@pytest.fixture
def mirror(shared_data: Path) -> Iterator[str]:
    """A real HTTP server on loopback serving the shared data directory."""
    handler = partial(QuietHandler, directory=str(shared_data))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def test_fetch_downloads_verifies_and_loads(
    tmp_path: Path, mirror: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(
        capsys,
        "--data-dir",
        str(tmp_path),
        "datasets",
        "fetch",
        "qald-9-test-multilingual",
        "--mirror",
        mirror,
        "--json",
    )
    assert status == 0, err
    doc = json.loads(out)
    assert (doc["name"], doc["questions"], doc["created"]) == (
        "qald-9-test-multilingual",
        150,
        True,
    )
    assert doc["source"].startswith(mirror)
    assert doc["knowledge_base"] == "dbpedia-2016-10"


def test_fetch_refuses_a_checksum_mismatch(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = tmp_path / "mirror" / "qald" / "ag-sc_QALD" / "8" / "data"
    fake.mkdir(parents=True)
    original = shared_data / "qald/ag-sc_QALD/8/data/qald-8-test-multilingual.json"
    (fake / "qald-8-test-multilingual.json").write_bytes(original.read_bytes() + b"\n")
    status, _, err = run(
        capsys,
        "--data-dir",
        str(tmp_path / "d"),
        "datasets",
        "fetch",
        "qald-8-test-multilingual",
        "--mirror",
        str(tmp_path / "mirror"),
    )
    assert status == 2
    assert "checksum mismatch" in err
    _, out, _ = run(capsys, "--data-dir", str(tmp_path / "d"), "datasets", "list", "--json")
    assert json.loads(out) == []
    status, _, _ = run(
        capsys,
        "--data-dir",
        str(tmp_path / "d"),
        "datasets",
        "fetch",
        "qald-8-test-multilingual",
        "--mirror",
        str(tmp_path / "mirror"),
        "--no-verify",
    )
    assert status == 0


def test_fetch_of_an_unknown_name_lists_the_catalog(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run(capsys, "--data-dir", str(tmp_path), "datasets", "fetch", "qald-99")
    assert status == 2
    assert "qald-9-test-multilingual" in err


def test_catalog_lists_at_least_the_well_known_datasets(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "datasets", "catalog", "--json")
    names = {e["name"] for e in json.loads(out)}
    expected = {f"qald-{n}" for n in range(1, 11)}
    assert all(any(name.startswith(e + "-") for name in names) for e in expected)
    assert {"nlq", "lcquad-1-train", "lcquad-1-test"} <= names


def test_catalog_has_the_wikidata_era_benchmarks_and_says_which_are_unverified(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], formats_data: Path
) -> None:
    from evaluators.datasets.catalog import catalog

    entries = catalog()
    wanted = {
        f"qald-9-plus-{split}-{kb}" for split in ("train", "test") for kb in ("dbpedia", "wikidata")
    } | {"qald-10-train", "qald-10-test", "lcquad-2-train", "lcquad-2-test"}
    assert wanted <= set(entries)
    # published files not among the reference files nor in a stored snapshot: no checksum
    unverified = {name for name, e in entries.items() if not e.checked}
    assert unverified == {
        "qald-9-plus-train-dbpedia",
        "qald-9-plus-train-wikidata",
        "qald-9-plus-test-wikidata",
        "qald-10-train",
        "lcquad-2-train",
        "lcquad-2-test",
    }
    for name in ("qald-10-test", "qald-9-plus-test-dbpedia"):
        assert entries[name].verified and entries[name].size, name
    _, out, _ = run(capsys, "datasets", "catalog")
    assert len([line for line in out.splitlines() if " unverified " in line]) == 6
    # an unverified entry loads (here LC-QuAD 2.0 from a local mirror) and says so
    mirror = tmp_path / "mirror"
    target = mirror / entries["lcquad-2-test"].mirror_path
    target.parent.mkdir(parents=True)
    target.write_bytes((formats_data / "lcquad2-edge.json").read_bytes())
    data = ["--data-dir", str(tmp_path / "d")]
    status, out, err = run(
        capsys, *data, "datasets", "fetch", "lcquad-2-test", "--mirror", str(mirror), "--json"
    )
    assert status == 0, err
    doc = json.loads(out)
    assert (doc["name"], doc["questions"], doc["format"]) == ("lcquad-2-test", 3, "lcquad2")
    assert "no checksum" in doc["warnings"][0] and doc["sha256"] in doc["warnings"][0]


def test_catalog_checksums_match_the_reference_files(shared_data: Path) -> None:
    import hashlib

    from evaluators.datasets.catalog import catalog

    checked = 0
    for entry in catalog().values():
        path = shared_data / entry.mirror_path
        if path.is_file() and entry.sha256:
            assert hashlib.sha256(path.read_bytes()).hexdigest() == entry.sha256, entry.name
            checked += 1
    assert checked >= 40


@pytest.mark.slow
def test_a_running_server_is_named_when_it_holds_the_store(tmp_path: Path) -> None:
    import signal
    import time

    env = {**os.environ, "QABENCH_DATA_DIR": str(tmp_path)}
    cfg = tmp_path / "c.toml"
    cfg.write_text("[server]\nport = 0\ndemo = false\n")
    server = subprocess.Popen(
        [sys.executable, "-m", "server", "--config", str(cfg), "serve", "--port", "0"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "server.json").exists():
            assert time.monotonic() < deadline and server.poll() is None, "server did not start"
            time.sleep(0.2)
        result = subprocess.run(
            [sys.executable, "-m", "server", "datasets", "load", str(EXAMPLE)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 2
        assert f"pid {server.pid}" in result.stderr
        assert "Traceback" not in result.stderr
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)

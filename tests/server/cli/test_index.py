"""``qabench index build|info`` and ``qabench retrieve`` through ``server.cli.main``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.cli import main
from tests.plugins.rag import CORPUS_SIZE

Run = tuple[int, str, str]


def run(capsys: pytest.CaptureFixture[str], data_dir: Path, *args: str) -> Run:
    status = main(["--data-dir", str(data_dir), *args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def built(rag_corpus_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    data = tmp_path / "data"
    status, _, err = run(capsys, data, "index", "build", str(rag_corpus_file))
    assert status == 0, err
    return data


def test_build_reports_counts_as_json(
    rag_corpus_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, tmp_path, "index", "build", str(rag_corpus_file), "--json")
    assert status == 0
    report = json.loads(out)
    assert report["added"] == report["documents"] == CORPUS_SIZE
    assert (report["replaced"], report["duplicates"]) == (0, 0)
    assert (tmp_path / "index").is_dir()  # the index lives under --data-dir


def test_build_text_output_and_incremental_rebuild(
    built: Path, rag_corpus_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, built, "index", "build", str(rag_corpus_file))
    assert status == 0
    assert f"0 new, {CORPUS_SIZE} replaced" in out
    assert f"the index holds {CORPUS_SIZE}" in out


def test_info_json_and_text(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, built, "index", "info", "--json")
    assert status == 0
    info = json.loads(out)
    assert info["documents"] == CORPUS_SIZE
    assert info["directory"] == str(built / "index")
    assert sorted(info["fields"]) == ["abstract", "mesh", "pmid", "text", "title", "year"]
    assert info["size_bytes"] > 0 and info["last_modified"]
    status, out, _ = run(capsys, built, "index", "info")
    assert status == 0 and f"documents      {CORPUS_SIZE}" in out


def test_retrieve_json_shape(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(
        capsys,
        built,
        "retrieve",
        "Which drug reduced anthracycline cardiotoxicity?",
        "--k",
        "5",
        "--json",
    )
    assert status == 0, err
    result = json.loads(out)
    assert result["query"] == "drug reduced anthracycline cardiotoxicity"
    assert result["fallback"] == "none"
    documents = result["documents"]
    assert 1 <= len(documents) <= 5
    assert [d["rank"] for d in documents] == list(range(1, len(documents) + 1))
    assert documents[0]["pmid"] == "1000006"
    assert documents[0]["title"] == "Cardiomyopathy and cardiotoxicity of anthracyclines."
    assert [d["score"] for d in documents] == sorted((d["score"] for d in documents), reverse=True)
    snippet = documents[0]["snippets"][0]
    assert set(snippet) == {
        "document",
        "text",
        "beginSection",
        "endSection",
        "offsetInBeginSection",
        "offsetInEndSection",
        "score",
    }
    assert snippet["offsetInEndSection"] - snippet["offsetInBeginSection"] + 1 == len(
        snippet["text"]
    )


def test_retrieve_with_query_reports_the_fallback(
    built: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(
        capsys, built, "retrieve", "aspirin", "--query", '"aspirin famotidine"', "--json"
    )
    assert status == 0
    result = json.loads(out)
    assert result["fallback"] == "broadened"
    assert result["query"] == "aspirin famotidine"
    assert result["attempts"] == ['"aspirin famotidine"', "aspirin famotidine"]


def test_retrieve_text_output(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, built, "retrieve", "Can famotidine cause delirium?", "--k", "3")
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "query: famotidine cause delirium"
    assert lines[1].split()[:2] == ["1.", "1000005"]
    assert any(line.strip().startswith("[abstract 0-") for line in lines)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["retrieve", "heart", "--query", "(heart"], "column 1: unclosed '('"),
        (["retrieve", "heart", "--query", "titel:heart"], "unknown field 'titel'"),
        (["retrieve", "What is it?"], "no content words"),
        (["retrieve", "heart", "--k", "0"], "--k must be between 1 and 1000"),
        (["retrieve", "   "], "1 to 2000 characters"),
    ],
)
def test_retrieve_errors_exit_2_with_a_message(
    built: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    status, out, err = run(capsys, built, *args)
    assert status == 2
    assert out == ""
    assert err.startswith("qabench: error: ") and message in err


def test_retrieve_without_an_index_says_how_to_build(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run(capsys, tmp_path, "retrieve", "heart")
    assert status == 2
    assert "no literature index" in err and "qabench index build" in err


def test_malformed_corpus_fails_and_leaves_the_index_unchanged(
    built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"pmid": "9", "title": "t", "abstract": "zebrafish"}\n{"pmid": "10"\n', "utf-8")
    status, _, err = run(capsys, built, "index", "build", str(bad))
    assert status == 2
    assert f"{bad}:2: not JSON" in err
    status, out, _ = run(capsys, built, "index", "info", "--json")
    assert json.loads(out)["documents"] == CORPUS_SIZE
    status, out, _ = run(capsys, built, "retrieve", "zebrafish", "--json")
    assert json.loads(out)["documents"] == []


def test_build_rejects_missing_files_and_unknown_suffixes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run(capsys, tmp_path, "index", "build", str(tmp_path / "absent.jsonl"))
    assert status == 2 and "no such file" in err
    odd = tmp_path / "corpus.csv"
    odd.write_text("1,t,a\n", "utf-8")
    status, _, err = run(capsys, tmp_path, "index", "build", str(odd))
    assert status == 2 and "--format" in err
    assert not (tmp_path / "index").exists()


def test_build_with_explicit_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "corpus.txt"
    source.write_text("pmid\ttitle\tabstract\n42\tZebrafish fins\tFins regrow.\n", "utf-8")
    status, out, _ = run(
        capsys, tmp_path, "index", "build", str(source), "--format", "tsv", "--json"
    )
    assert status == 0 and json.loads(out)["documents"] == 1

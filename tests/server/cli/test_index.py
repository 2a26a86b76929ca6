"""``qabench index build|info`` and ``qabench retrieve`` through ``server.cli.main``."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rag.retrieval.index import open_index
from server.cli import main
from tests import REPO
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


def test_compile_gives_an_older_index_its_compiled_postings(
    built: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, built, "index", "info", "--json")
    info = json.loads(out)
    assert info["segments"] >= 1 and info["compiled_segments"] == info["segments"]
    shutil.rmtree(built / "index" / "compiled")  # as an index written before them
    status, out, _ = run(capsys, built, "index", "info")
    assert f"segments       {info['segments']} (0 with compiled postings)" in out
    status, out, _ = run(capsys, built, "index", "compile", "--procs", "2")
    assert status == 0
    assert f"compiled {info['segments']} segments" in out
    status, out, _ = run(capsys, built, "index", "info", "--json")
    assert json.loads(out)["compiled_segments"] == info["segments"]
    status, _, err = run(capsys, built, "index", "compile", "--procs", "0")
    assert status == 2 and "--procs must be between 1 and 64" in err


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


def pubmed_file(path: Path, articles: list[tuple[str, str, str]], deleted: list[str]) -> Path:
    """Write a gzipped PubMed XML file (baseline or update) with these articles and deletions."""
    body = "".join(
        f"<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID><Article>"
        f"<ArticleTitle>{title}</ArticleTitle><Abstract><AbstractText>{abstract}"
        "</AbstractText></Abstract></Article></MedlineCitation></PubmedArticle>"
        for pmid, title, abstract in articles
    )
    if deleted:
        body += "<DeleteCitation>" + "".join(f"<PMID>{p}</PMID>" for p in deleted)
        body += "</DeleteCitation>"
    text = (
        '<?xml version="1.0"?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, '
        '1st January 2025//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n'
        f"<PubmedArticleSet>{body}</PubmedArticleSet>\n"
    )
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(text)
    return path


def test_pubmed_updates_and_deletions_are_applied_and_builds_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = pubmed_file(
        tmp_path / "pubmed25n0001.xml.gz",
        [(str(n), f"Title {n}", f"Warfarin dosing study number {n}.") for n in range(1, 6)],
        [],
    )
    update = pubmed_file(
        tmp_path / "pubmed25n0002.xml.gz",
        [("2", "Title 2 revised", "Heparin instead of warfarin."), ("9", "New", "Apixaban.")],
        ["3", "4", "9", "777"],  # 9 is added and withdrawn in the same file; 777 was never indexed
    )
    data = tmp_path / "data"
    argv = ["index", "build", "--resume", "--json"]
    status, out, err = run(capsys, data, *argv, str(baseline), str(update))
    assert status == 0, err
    report = json.loads(out)
    assert report["documents"] == 3 and report["deleted"] == 3  # 3, 4 and 9
    with open_index(data / "index") as index:
        assert sorted(a.pmid for a in index.articles()) == ["1", "2", "5"]
        revised = index.document("2")
        assert revised is not None and revised.title == "Title 2 revised"
        assert [h.article.pmid for h in index.search("heparin", 5)] == ["2"]
    # a second run skips both committed files; a new file is added
    extra = pubmed_file(tmp_path / "pubmed25n0003.xml.gz", [("6", "Six", "Dabigatran.")], [])
    status, out, err = run(capsys, data, *argv, str(baseline), str(update), str(extra))
    assert status == 0, err
    again = json.loads(out)
    assert (again["added"], again["replaced"], again["documents"]) == (1, 0, 4)


def test_build_with_two_processes_indexes_the_same_documents(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = pubmed_file(
        tmp_path / "p.xml.gz",
        [(str(n), f"Title {n}", f"Aspirin trial {n} in cohort {n % 7}.") for n in range(1, 301)],
        [],
    )
    data = tmp_path / "data"
    status, out, err = run(capsys, data, "index", "build", "--procs", "2", "--json", str(source))
    assert status == 0, err
    assert json.loads(out)["documents"] == 300
    with open_index(data / "index") as index:
        assert len(index.search("cohort", 300)) == 300
        assert [h.article.pmid for h in index.search('"trial 17 in"', 5)] == ["17"]
    # later builds keep the segments written so far: Whoosh's default merge at commit (once
    # five or more segments are small enough) ran single-threaded for minutes per file at
    # PubMed scale
    small = tmp_path / "small"
    seen: set[str] = set()
    for build in range(6):
        pmids = range(1000 + 2 * build, 1002 + 2 * build)
        more = pubmed_file(
            tmp_path / f"m{build}.xml.gz", [(str(n), f"T {n}", "Heparin.") for n in pmids], []
        )
        status, out, err = run(capsys, small, "index", "build", "--procs", "2", str(more))
        assert status == 0, err
        now = _segment_names(small / "index")
        assert seen < now
        seen = now
    with open_index(small / "index") as index:
        assert index.info().documents == 12


def _segment_names(directory: Path) -> set[str]:
    import whoosh.index  # the index's own engine, to see its segments

    return {s.segment_id() for s in whoosh.index.open_dir(str(directory))._segments()}


def test_a_full_disk_during_a_build_is_a_clean_error_that_leaves_no_partial_files(
    tmp_path: Path,
) -> None:
    # Issue 41: disk full during `index build` printed raw tracebacks and left segment files.
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    corpus = tmp_path / "corpus.jsonl"
    words = [f"word{n}" for n in range(5000)]
    corpus.write_text(
        "\n".join(
            json.dumps(
                {
                    "pmid": str(10_000 + n),
                    "title": f"Article {n}",
                    "abstract": " ".join(words[(n * 7 + k) % 5000] for k in range(300)),
                }
            )
            for n in range(4000)
        ),
        "utf-8",
    )
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], check=True)
    try:
        # a process of its own: Whoosh's writer leaves its files open when a write fails
        command = [sys.executable, "-m", "server", "--data-dir", str(mount / "data")]
        done = subprocess.run(
            [*command, "index", "build", str(corpus)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        status, err = done.returncode, done.stderr
        assert status == 2, err
        assert "indexing failed" in err and "Traceback" not in err, err
        left = [p for p in (mount / "data" / "index").rglob("*") if p.is_file()]
        assert left == [], left  # no partial segment left behind
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)

"""Loading datasets into the store: versions, no-op reloads, atomic failures, export/import."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from evaluators.datasets import library
from evaluators.errors import DatasetFormatError, DatasetNameConflictError, UnknownDatasetError
from evaluators.formats import parse_file
from server.config import Config
from store.triplestore import TripleStore
from tests import EXAMPLES

BASE = "http://qabench.test"


def test_load_records_a_version_with_its_metadata(store: TripleStore) -> None:
    outcome = library.load_dataset(
        store, BASE, EXAMPLES / "example-questions.json", knowledge_base="example-kb"
    )
    info = outcome.info
    assert outcome.created
    # named after the file's own id (dataset.id), not its file name
    assert (info.name, info.version, info.questions) == ("qabench-example", 1, 8)
    assert info.format == "qald-json"
    assert info.languages == ("de", "en", "es", "fr")
    assert info.knowledge_base == "example-kb"
    assert len(info.sha256) == 64
    assert info.iri == f"{BASE}/dataset/qabench-example/v1"


def test_loading_the_same_file_again_is_a_no_op(store: TripleStore) -> None:
    library.load_dataset(store, BASE, EXAMPLES / "example-questions.json")
    before = store.canonical()
    again = library.load_dataset(store, BASE, EXAMPLES / "example-questions.json")
    assert not again.created
    assert again.info.version == 1
    assert store.canonical() == before


def test_a_changed_file_becomes_a_new_version(store: TripleStore, tmp_path: Path) -> None:
    library.load_dataset(store, BASE, EXAMPLES / "example-questions.json", name="ex")
    doc = json.loads((EXAMPLES / "example-questions.json").read_text("utf-8"))
    doc["questions"] = doc["questions"][:3]
    changed = tmp_path / "ex.json"
    changed.write_text(json.dumps(doc), "utf-8")
    with pytest.raises(DatasetNameConflictError, match="--new-version"):
        library.load_dataset(store, BASE, changed, name="ex")
    assert [v.version for v in library.list_versions(store, BASE, "ex")] == [1]
    outcome = library.load_dataset(store, BASE, changed, name="ex", new_version=True)
    assert (outcome.created, outcome.info.version, outcome.info.questions) == (True, 2, 3)
    assert [v.version for v in library.list_versions(store, BASE, "ex")] == [1, 2]
    assert library.resolve_version(store, BASE, "ex").version == 2
    assert library.resolve_version(store, BASE, "ex@1").questions == 8
    assert store.ask(
        "ASK { ?v2 <http://www.w3.org/ns/dcat#previousVersion> ?v1 }",
        v2=NamedNode(outcome.info.iri),
    )


def test_read_back_dataset_matches_the_file(store: TripleStore) -> None:
    path = EXAMPLES / "example-questions.json"
    info = library.load_dataset(store, BASE, path).info
    parsed = parse_file(path)
    stored = library.read_dataset(store, info)
    assert [q.id for q in stored.questions] == [q.id for q in parsed.questions]
    for a, b in zip(parsed.questions, stored.questions, strict=True):
        assert a.answer_type == b.answer_type
        assert a.sparql == b.sparql
        assert [set(s.values) for s in a.answers or ()] == [set(s.values) for s in b.answers or ()]
        assert [s.boolean for s in a.answers or ()] == [s.boolean for s in b.answers or ()]
        assert a.text("en") == b.text("en")


def test_large_versions_go_through_the_bulk_writer_with_the_same_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small versions are one transaction, large ones bulk-written; both store the same graph.
    path = EXAMPLES / "example-questions.json"
    graphs_of, read = {}, {}
    for mode, threshold in (("transaction", library.BULK_QUESTIONS), ("bulk", 1)):
        monkeypatch.setattr(library, "BULK_QUESTIONS", threshold)
        store = TripleStore.open(tmp_path / mode)
        info = library.load_dataset(store, BASE, path).info
        graphs_of[mode] = {str(q) for q in store.quads(graph=NamedNode(info.graph))}
        read[mode] = library.read_dataset(store, info).questions
        store.close()
    assert graphs_of["bulk"] == graphs_of["transaction"] and len(graphs_of["bulk"]) > 100
    assert read["bulk"] == read["transaction"] and len(read["bulk"]) == 8


def test_unknown_dataset_lists_what_is_loaded(store: TripleStore) -> None:
    library.load_dataset(store, BASE, EXAMPLES / "example-questions.json")
    with pytest.raises(UnknownDatasetError, match="qabench-example"):
        library.resolve_version(store, BASE, "qald-99")


BAD_FILES = {
    "malformed.json": b'{"questions": [ {"id": "1", ',
    "truncated.json": (EXAMPLES / "example-questions.json").read_bytes()[:900],
    "doctype.xml": b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaa">]><dataset>&a;</dataset>',
    "not-a-dataset.json": b'{"hello": "world"}',
    "latin1.json": '{"questions": [{"id": "1", "question": [{"language": "de", "string": "Fl\u00fcsse"}]}]}'.encode(
        "latin-1"
    ),
    "wrong-root.xml": b"<html><body>no</body></html>",
    "empty.json": b"",
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_a_failed_load_leaves_the_store_unchanged(
    store: TripleStore, tmp_path: Path, name: str
) -> None:
    library.load_dataset(store, BASE, EXAMPLES / "example-questions.json")
    before = store.canonical()
    path = tmp_path / name
    path.write_bytes(BAD_FILES[name])
    with pytest.raises(DatasetFormatError) as info:
        library.load_dataset(store, BASE, path)
    assert name in str(info.value)
    assert store.canonical() == before


def test_oversized_file_is_refused_before_reading(store: TripleStore) -> None:
    before = store.canonical()
    with pytest.raises(DatasetFormatError, match="more than the limit"):
        library.load_dataset(store, BASE, EXAMPLES / "example-questions.json", max_bytes=100)
    assert store.canonical() == before


def test_export_then_import_gives_an_isomorphic_store(
    store: TripleStore, config: Config, tmp_path: Path
) -> None:
    from server.cli import main

    library.load_dataset(store, BASE, EXAMPLES / "example-questions.json")
    library.check_version(store, BASE, library.resolve_version(store, BASE, "qabench-example"))
    original = store.canonical()
    store.close()
    dump = tmp_path / "all.nq"
    assert main(["--data-dir", str(config.data_dir), "export", str(dump)]) == 0
    other = tmp_path / "other"
    assert main(["--data-dir", str(other), "import", str(dump)]) == 0
    copy = TripleStore.open(other / "store")
    try:
        assert len(copy) == len(original) > 100
        assert copy.canonical() == original
    finally:
        copy.close()


def test_check_report_is_stored_and_replaced(store: TripleStore) -> None:
    info = library.load_dataset(store, BASE, EXAMPLES / "example-questions.json").info
    report = library.check_version(store, BASE, info)
    assert report.questions == 8
    assert report.count("error") == 0
    library.check_version(store, BASE, info)
    rows = store.select(
        "SELECT ?v ?r WHERE { ?v <https://w3id.org/qabench/vocab#checkReport> ?r }",
        v=NamedNode(info.iri),
    )
    assert len(rows) == 1


# ------------------------------------------------------------ unusable files and bad records

UNUSABLE = [
    (b'{"questions": []}', "no questions"),
    (
        b'{"questions": [{"id": "1", "question": [{"language": "en", "string": "  "}],'
        b' "answers": []}]}',
        "no question text",
    ),
    (
        b'{"questions": [{"id": "1", "question": [{"language": "en", "string": "Who?"}],'
        b' "answers": []}, {"id": "2", "question": [], "answers": []}]}',
        "1 of 2 questions have no question text",
    ),
]


@pytest.mark.parametrize(("data", "expected"), UNUSABLE)
def test_an_unusable_dataset_is_refused_and_nothing_is_stored(
    store: TripleStore, data: bytes, expected: str
) -> None:
    before = store.canonical()
    with pytest.raises(DatasetFormatError) as caught:
        library.load_dataset_bytes(store, BASE, data, source="bad.json", name="bad")
    assert expected in str(caught.value) and "bad.json" in str(caught.value)
    assert store.canonical() == before
    assert library.list_versions(store, BASE) == []


def test_unusable_case_count() -> None:
    assert len(UNUSABLE) == 3


def poison_store(store: TripleStore) -> None:
    """Store what an older release stored for ``{"questions": []}`` and a malformed record."""
    from pyoxigraph import Literal, Quad

    from vocab.standard import XSD

    library.load_dataset(store, BASE, EXAMPLES / "example-questions.json", name="good")
    info = library.version_info(store, BASE, "good", 1)
    quads = [q for q in store.quads(graph=None) if q.subject.value == info.iri]
    for name, count, number in (("empty", "0", "1"), ("broken", "3", "one")):
        iri = info.iri.replace("/good/v1", f"/{name}/v1")
        for quad in quads:
            obj = quad.object
            predicate = quad.predicate.value
            if predicate.endswith(("/language", "#inLanguage")):
                continue  # a version without questions has no languages
            if predicate.endswith("#questionCount"):
                obj = Literal(count, datatype=XSD.integer)
            if predicate.endswith("#versionNumber"):
                obj = Literal(number, datatype=XSD.integer)
            store.add([Quad(NamedNode(iri), quad.predicate, obj, quad.graph_name)])
        dataset = NamedNode(f"{BASE}/dataset/{name}")
        store.add(
            [
                Quad(dataset, q.predicate, q.object, q.graph_name)
                for q in store.quads(subject=NamedNode(f"{BASE}/dataset/good"))
                if not q.predicate.value.endswith(("identifier", "version"))
            ]
            + [
                Quad(
                    dataset,
                    NamedNode("http://purl.org/dc/terms/identifier"),
                    Literal(name),
                    library.graphs.catalog_graph(BASE),
                ),
                Quad(
                    dataset,
                    NamedNode("https://w3id.org/qabench/vocab#version"),
                    NamedNode(iri),
                    library.graphs.catalog_graph(BASE),
                ),
            ]
        )


def test_listing_skips_a_bad_stored_record_with_a_warning(
    store: TripleStore, caplog: pytest.LogCaptureFixture
) -> None:
    poison_store(store)
    with caplog.at_level("WARNING", logger="evaluators.datasets.library"):
        names = [v.name for v in library.list_versions(store, BASE)]
    # The empty version (an older release stored it) is listed without languages; the one
    # whose version number is not a number is skipped and named in the log.
    assert names == ["empty", "good"]
    assert library.version_info(store, BASE, "empty", 1).languages == ()
    assert any("broken" in r.getMessage() for r in caplog.records)
    assert library.resolve_version(store, BASE, "good").questions == 8

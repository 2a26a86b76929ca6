"""MIRAGE's benchmark.json: rebuilt from the raw datasets, read as questions; its stored
predictions read as an answers document (tests/data/mirage, SOURCE.md there)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from bench.snapshot import Snapshot
from evaluators.datasets.catalog import catalog
from evaluators.errors import DatasetFormatError, DatasetTooLargeError
from evaluators.formats import parse_bytes
from evaluators.formats.mirage.benchmark import PARTS, select, split_id
from evaluators.formats.mirage.build import build_benchmark
from evaluators.formats.mirage.predictions import pack
from evaluators.model import SourceFormat
from tests import TEST_DATA

MIRAGE = TEST_DATA / "mirage"
EXCERPT = MIRAGE / "benchmark-excerpt.json"
GPT35_COT = "cot/OpenAI/gpt-35-turbo-16k"


def test_the_build_makes_the_published_entries_byte_for_byte() -> None:
    built = build_benchmark(MIRAGE / "rawdata")
    assert built == EXCERPT.read_bytes()
    doc = json.loads(built)
    assert list(doc) == ["medqa", "medmcqa", "pubmedqa", "bioasq", "mmlu"]
    assert [len(v) for v in doc.values()] == [3, 3, 3, 6, 13]
    # non-ASCII is escaped as MIRAGE's file has it
    assert b"Sj\\u00f6gren" in built and "ö".encode() not in built


def test_the_bioasq_part_follows_the_build_rules() -> None:
    bioasq = json.loads(build_benchmark(MIRAGE / "rawdata"))["bioasq"]
    # 2023's copy keeps its place but takes 2022's later text; the factoid is left out
    assert list(bioasq) == ["y11a", "y11c", "y10a", "y9a", "y8a", "y7a"]
    assert bioasq["y11a"]["question"].endswith("of mice?") and bioasq["y11a"]["PMID"] == [102]
    assert bioasq["y11c"]["answer"] == "B"  # "No"
    assert bioasq["y7a"]["PMID"] == [71, 72]


def test_the_benchmark_reads_as_multiple_choice_questions() -> None:
    dataset = parse_bytes(EXCERPT.read_bytes(), source="benchmark.json")
    assert dataset.format is SourceFormat.MIRAGE and len(dataset.questions) == 28
    q = dataset.by_id()["pubmedqa:18284441"]
    assert q.text("en") and q.choices is not None
    assert q.choices.options == (("A", "yes"), ("B", "no"), ("C", "maybe"))
    assert q.choices.pmids == ("18284441",) and q.answers is not None
    assert q.answers[0].values[0].value == "C"
    mmlu = dataset.by_id()["mmlu:medical_genetics-002"]
    assert mmlu.choices is not None and mmlu.choices.options[0] == ("A", "0.01")
    assert [split_id(q.id)[0] for q in select(dataset, ("bioasq",)).questions] == ["bioasq"] * 6


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"medqa": {"1": {"question": "Q", "options": {"A": "a"}, "answer": "B"}}}, "names no"),
        ({"medqa": {"1": {"question": "Q", "options": {"A": 1}, "answer": "A"}}}, "options.A"),
        ({"medqa": {"1": {"options": {"A": "a"}, "answer": "A"}}}, "question"),
        ({"bioasq": {"1": {"question": "Q", "options": {"A": "yes"}, "answer": "A",
                           "PMID": [None]}}}, "PubMed id"),
    ],
)  # fmt: skip
def test_a_malformed_entry_is_refused_with_its_path(doc: object, message: str) -> None:
    with pytest.raises(DatasetFormatError, match=message) as caught:
        parse_bytes(json.dumps(doc).encode(), source="b.json", format=SourceFormat.MIRAGE)
    assert "$." in str(caught.value)


def test_an_unknown_part_is_refused() -> None:
    doc = {"medqa": {}, "medqa2": {}}
    with pytest.raises(DatasetFormatError, match="unknown dataset 'medqa2'"):
        parse_bytes(json.dumps(doc).encode(), source="b.json", format=SourceFormat.MIRAGE)


def test_a_missing_raw_file_or_too_many_bytes_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DatasetFormatError, match="medqa"):
        build_benchmark(tmp_path)
    with pytest.raises(DatasetTooLargeError):
        build_benchmark(MIRAGE / "rawdata", max_bytes=10_000)


def test_one_folder_of_predictions_packs_into_answers() -> None:
    data = pack(MIRAGE / "prediction" / "bioasq" / GPT35_COT, max_bytes=1_000_000)
    answers = parse_bytes(data, source="predictions")
    assert answers.format is SourceFormat.MIRAGE_PREDICTIONS
    # five test_ files; dev_y7a.json is of another split, which MIRAGE never reads
    assert sorted(q.id for q in answers.questions) == [
        "bioasq:y10a", "bioasq:y11a", "bioasq:y11c", "bioasq:y8a", "bioasq:y9a",
    ]  # fmt: skip
    assert answers.by_id()["bioasq:y11c"].reply == "[]"


def test_a_dataset_placeholder_packs_every_part() -> None:
    data = pack(MIRAGE / "prediction" / "{dataset}" / GPT35_COT, max_bytes=1_000_000)
    answers = parse_bytes(data, source="predictions")
    parts = sorted({split_id(q.id)[0] for q in answers.questions})
    assert parts == sorted(PARTS) and len(answers.questions) == 27


def test_predictions_that_cannot_be_read_are_refused(tmp_path: Path) -> None:
    with pytest.raises(DatasetFormatError, match="no MIRAGE dataset"):
        pack(tmp_path, max_bytes=1000)
    folder = tmp_path / "medqa"
    folder.mkdir()
    (folder / "test_0001.json").write_text("{not json")
    with pytest.raises(DatasetFormatError, match="not a JSON prediction"):
        pack(folder, max_bytes=1000)
    with pytest.raises(DatasetTooLargeError):
        pack(MIRAGE / "prediction" / "mmlu" / GPT35_COT, max_bytes=1000)
    doc = {"mirage_predictions": {"medqa:1": {"answer_choice": "A"}}}
    with pytest.raises(DatasetFormatError, match="list of model outputs"):
        parse_bytes(json.dumps(doc).encode(), source="p.json")


@pytest.mark.slow
def test_the_whole_benchmark_is_rebuilt_byte_for_byte(snapshot: Snapshot) -> None:
    raw = snapshot("Teddy-XiongGZ/MIRAGE", "rawdata") / "rawdata"
    built = build_benchmark(raw)
    entry = catalog()["mirage"]
    assert (len(built), hashlib.sha256(built).hexdigest()) == (entry.size, entry.sha256)
    # the git blob id of benchmark.json in the repository (the file itself is not stored there)
    blob = hashlib.sha1(b"blob %d\0" % len(built) + built).hexdigest()
    assert blob == "85bdd2857e62723921a81b6560b98937e5238776"
    dataset = parse_bytes(built, source="benchmark.json")
    sizes = {p: len(select(dataset, (p,)).questions) for p in PARTS}
    assert sizes == {p.name: p.size for p in PARTS.values()}

"""Acceptance test: every public QALD, LC-QuAD, NLQ, BioASQ and system answer file parses.

Question counts are computed independently of our parsers (``json``, ElementTree after checking
for a DOCTYPE, distinct NLQ ids) and cross-checked against ``shared/data/SOURCES.md``.
"""

from __future__ import annotations

import codecs
import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from evaluators.errors import DatasetFormatError
from evaluators.formats import detect_format, parse_file
from evaluators.model import AnswerType, Dataset, SourceFormat
from tests.plugins.formats import RealFiles

# Published with a missing </answers> (twice); our parser repairs it, ElementTree cannot.
KNOWN_MALFORMED_XML = {"qald-5_train_raw.xml"}
# Not valid JSON as published (raw quotes inside a string).
KNOWN_INVALID_JSON = {"QALD_Boolean.json"}


def independent_count(path: Path) -> tuple[int, SourceFormat]:
    """Count the questions of a file and tell its format without our parsers."""
    raw = path.read_bytes().removeprefix(codecs.BOM_UTF8)  # QALD-3 musicbrainz-test.xml has one
    if raw.lstrip()[:1] == b"<":
        assert b"<!DOCTYPE" not in raw.upper(), path
        try:
            root = ET.fromstring(raw)
        except ET.ParseError:
            assert path.name in KNOWN_MALFORMED_XML, path
            text = re.sub(r"<!--.*?-->", "", raw.decode("utf-8"), flags=re.DOTALL)
            return len(re.findall(r"<question[\s>]", text)), SourceFormat.QALD_XML
        assert root.tag == "dataset", path
        return len(root.findall("question")), SourceFormat.QALD_XML
    doc = json.loads(raw)
    if isinstance(doc, list):
        if "_id" in doc[0]:
            return len(doc), SourceFormat.LCQUAD
        return len({str(e["id"]) for e in doc if str(e["id"]).strip()}), SourceFormat.NLQ
    questions = doc["questions"]
    if questions and isinstance(questions[0].get("question"), dict):
        return len(questions), SourceFormat.EQALD
    if questions and (
        ("body" in questions[0] and isinstance(questions[0]["body"], str))
        or "documents" in questions[0]
    ):
        return len(questions), SourceFormat.BIOASQ
    return len(questions), SourceFormat.QALD_JSON


@pytest.fixture(scope="module")
def parsed_qald(formats_real_files: RealFiles) -> dict[Path, Dataset]:
    """Parse every QALD-area file once for the tests of this module."""
    return {p: parse_file(p) for p in formats_real_files.qald}


def test_every_qald_area_file_parses_with_its_question_count(
    formats_real_files: RealFiles, parsed_qald: dict[Path, Dataset]
) -> None:
    files = formats_real_files.qald
    assert len(files) > 60
    assert len(parsed_qald) == len(files)
    mismatches = []
    for path in files:
        expected, fmt = independent_count(path)
        dataset = parsed_qald[path]
        if (len(dataset.questions), dataset.format) != (expected, fmt):
            mismatches.append((path.name, expected, fmt, len(dataset.questions), dataset.format))
        assert detect_format(path.read_bytes(), path.name) is fmt
    assert mismatches == []
    formats = Counter(d.format for d in parsed_qald.values())
    assert set(formats) == {
        SourceFormat.QALD_XML,
        SourceFormat.QALD_JSON,
        SourceFormat.EQALD,
        SourceFormat.NLQ,
        SourceFormat.LCQUAD,
    }


def test_question_counts_agree_with_sources_md(
    shared_data: Path, parsed_qald: dict[Path, Dataset]
) -> None:
    table = (shared_data / "SOURCES.md").read_text(encoding="utf-8")
    rows = re.findall(
        r"^\| `(qald/[^`]+)` \|[^\n]*?\| (?:QALD-XML|QALD-JSON|LC-QuAD 1\.0:?),? (\d+) questions",
        table,
        re.MULTILINE,
    )
    assert len(rows) > 80
    for rel, count in rows:
        assert len(parsed_qald[shared_data / rel].questions) == int(count), rel


def test_qald9_facts_from_the_reference_hold(shared_data: Path) -> None:
    # shared/reference/gerbil-qa.md §4.1 "Real data facts"
    test = parse_file(shared_data / "qald/ag-sc_QALD/9/data/qald-9-test-multilingual.json")
    assert Counter(q.answer_type_label for q in test.questions) == {
        "resource": 102,
        "number": 18,
        "string": 14,
        "date": 12,
        "boolean": 4,
    }
    languages = Counter(lang for q in test.questions for lang in q.languages)
    assert languages["pt_BR"] == 20
    assert all(
        languages[lang] == 150
        for lang in ("de", "ru", "pt", "en", "hi_IN", "fa", "it", "fr", "ro", "es", "nl")
    )
    train = parse_file(shared_data / "qald/ag-sc_QALD/9/data/qald-9-train-multilingual.json")
    assert Counter(q.answer_type_label for q in train.questions) == {
        "resource": 292,
        "number": 52,
        "boolean": 37,
        "date": 15,
        "string": 11,
        "uri": 1,
    }
    boolean = [q for q in train.questions if q.answer_type is AnswerType.BOOLEAN]
    assert len(boolean) == 37
    assert all(q.answers and q.answers[0].boolean is not None for q in boolean)


def test_question_only_and_sparql_only_files_have_no_answers(
    parsed_qald: dict[Path, Dataset],
) -> None:
    lcquad = [d for d in parsed_qald.values() if d.format is SourceFormat.LCQUAD]
    assert sum(len(d.questions) for d in lcquad) == 5000
    assert all(q.answers is None and q.sparql for d in lcquad for q in d.questions)
    no_answers = [d for p, d in parsed_qald.items() if p.name.endswith("-questions.json")]
    assert len(no_answers) == 3
    assert all(q.answers is None for d in no_answers for q in d.questions)


def test_bioasq_files_parse_with_their_question_counts(
    formats_real_files: RealFiles,
) -> None:
    files = formats_real_files.bioasq
    assert len(files) >= 13
    parsed = {p: parse_file(p) for p in files}
    assert len(parsed) == len(files)
    for path, dataset in parsed.items():
        assert dataset.format is SourceFormat.BIOASQ, path
        assert len(dataset.questions) == len(json.loads(path.read_bytes())["questions"]), path
    training = next(d for p, d in parsed.items() if p.name == "BioASQ-trainingDataset2b.json")
    # SOURCES.md: 310 questions; factoid 59 / list 92 / summary 74 / yesno 85; 5781 snippets
    assert Counter(q.bioasq.question_type for q in training.questions if q.bioasq) == {
        "factoid": 59,
        "list": 92,
        "summary": 74,
        "yesno": 85,
    }
    assert sum(len(q.bioasq.snippets) for q in training.questions if q.bioasq) == 5781
    assert sum(len(q.bioasq.documents) for q in training.questions if q.bioasq) == 4427
    assert all(q.text("en") for q in training.questions)


def test_system_answer_files_parse_with_their_question_counts(
    formats_real_files: RealFiles,
) -> None:
    candidates = formats_real_files.systems_json + formats_real_files.systems_xml
    answer_files = []
    for path in candidates:
        if path.name in KNOWN_INVALID_JSON:
            continue
        raw = path.read_bytes()
        if path.suffix == ".xml" or "questions" in json.loads(raw):
            answer_files.append(path)
    assert len(answer_files) >= 35
    for path in answer_files:
        expected, fmt = independent_count(path)
        dataset = parse_file(path)
        assert (len(dataset.questions), dataset.format) == (expected, fmt), path
    qald8 = [p for p in answer_files if p.parent.name == "QALD8Answers"]
    assert len(qald8) == 6
    assert all(len(parse_file(p).questions) == 219 for p in qald8)


def test_system_files_that_are_not_datasets_are_refused_with_a_reason(
    formats_real_files: RealFiles,
) -> None:
    summaries = [p for p in formats_real_files.systems_json if p.name.endswith(".summary.json")]
    assert len(summaries) == 7
    for path in summaries:
        with pytest.raises(DatasetFormatError, match="without 'questions'"):
            parse_file(path)
    broken = [p for p in formats_real_files.systems_json if p.name in KNOWN_INVALID_JSON]
    assert len(broken) == 1
    with pytest.raises(DatasetFormatError) as caught:
        parse_file(broken[0])
    assert (caught.value.line, caught.value.column) == (42, 149)
    assert "QALD_Boolean.json:42:149: invalid JSON" in str(caught.value)

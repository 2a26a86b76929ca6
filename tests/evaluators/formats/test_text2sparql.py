"""TEXT2SPARQL files: the questions YAML, the client's answers and result sets, detection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyoxigraph import Literal

from evaluators.errors import DatasetFormatError
from evaluators.formats import detect_format, parse_bytes, parse_file
from evaluators.formats.text2sparql.gold import with_gold_results
from evaluators.formats.text2sparql.writer import AskedQuestion, answers_document, result_set
from evaluators.model import AnswerSet, SourceFormat
from tests.plugins.formats import T2sFiles

HEAD = b"dataset:\n  id: https://ex.org/2025/c/\n  prefix: ex\nquestions:\n"


def test_ck25_and_db25_become_one_question_per_entry_and_language(t2s_files: T2sFiles) -> None:
    ck25 = parse_file(t2s_files.questions("ck25"))
    db25 = parse_file(t2s_files.questions("db25"))
    assert (ck25.format, len(ck25.questions), ck25.source_id) == (
        SourceFormat.TEXT2SPARQL,
        50,
        "ck25",
    )
    assert len(db25.questions) == 200 and not ck25.warnings and not db25.warnings
    assert [q.id for q in db25.questions[:3]] == ["db25:1-en", "db25:1-es", "db25:2-en"]
    first = ck25.questions[0]
    assert first.text("en") == "In which department is Ms. Brant?" and first.answers is None
    parts = first.text2sparql
    assert parts is not None and parts.dataset == "https://text2sparql.aksw.org/2025/corporate/"
    assert parts.classes == (":Department", ":Employee") and parts.properties == (":memberOf",)
    assert parts.default_namespace == "http://ld.company.org/prod-vocab/"
    assert parts.uri(first.id) == "https://text2sparql.aksw.org/2025/corporate/1-en"
    ordered = [q.id for q in ck25.questions if q.text2sparql and q.text2sparql.order_matters]
    assert ordered == ["ck25:27-en", "ck25:37-en"]
    assert "pv:memberOf" in (first.sparql or "")


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        (
            b"  - question: {en: Who?}\n    query: {sparql: 'ASK {}'}\n",
            "question entry 1: the id is missing",
        ),
        (
            b"  - id: 7\n    query: {sparql: 'ASK {}'}\n",
            "question entry 1 (id 7): the question is missing",
        ),
        (
            b"  - id: 7\n    question: {en: Who?}\n",
            "question entry 1 (id 7): the reference query is missing",
        ),
        (
            b"  - id: 7\n    question: {en: Who?}\n    query: {sparql: 'ASK {}'}\n"
            b"  - id: 7\n    question: {en: Who?}\n    query: {sparql: 'ASK {}'}\n",
            "question entry 2 (id 7): id '7' is used twice (first by question entry 1)",
        ),
        (
            b"  - id: 7\n    question: Who?\n    query: {sparql: 'ASK {}'}\n",
            "expected one text per language",
        ),
        (b"  - id: 7\n    question: {en: [1]\n", "invalid YAML"),
        (
            b"  - &a {id: 7, question: {en: Who?}, query: {sparql: 'ASK {}'}}\n  - *a\n",
            "aliases are not accepted",
        ),
    ],
)
def test_bad_entries_are_refused_naming_the_entry(entries: bytes, expected: str) -> None:
    with pytest.raises(DatasetFormatError) as caught:
        parse_bytes(HEAD + entries, source="q.yml")
    assert expected in str(caught.value) and "q.yml" in str(caught.value)


def test_entry_errors_name_the_line_and_the_dataset_needs_a_prefix() -> None:
    entries = b"  - id: 1\n    question: {en: A?}\n    query: {sparql: 'ASK {}'}\n  - id: 2\n"
    with pytest.raises(DatasetFormatError) as caught:
        parse_bytes(HEAD + entries, source="q.yml")
    assert caught.value.line == 8
    with pytest.raises(DatasetFormatError, match="prefix is missing"):
        parse_bytes(b"dataset:\n  id: https://ex.org/\nquestions: []\n", source="q.yml")


def test_detection_of_the_three_text2sparql_files(t2s_files: T2sFiles) -> None:
    found = [
        detect_format(path.read_bytes(), path.name)
        for path in (
            t2s_files.questions("db25"),
            t2s_files.reference("db25"),
            t2s_files.result("WSE", "ck25", "answers"),
        )
    ]
    assert found == [
        SourceFormat.TEXT2SPARQL,
        SourceFormat.TEXT2SPARQL_RESULTS,
        SourceFormat.TEXT2SPARQL_ANSWERS,
    ]


def test_result_sets_keep_lexical_forms_booleans_and_order(t2s_files: T2sFiles) -> None:
    reference = parse_file(t2s_files.reference("ck25")).by_id()
    assert reference["ck25:33-en"].answers == (AnswerSet(boolean=False, lexical=True),)
    assert reference["ck25:16-en"].answers == (AnswerSet(boolean=True, lexical=True),)
    assert reference["ck25:25-en"].answers == (AnswerSet(has_bindings=True, lexical=True),)
    two = reference["ck25:2-en"].answers
    assert two == (AnswerSet((Literal("+49-6200-33069465"),), has_bindings=True, lexical=True),)
    data = json.dumps({"x:1-en": {"b": 1, "a": 1}, "order_required": ["x:1-en"]}).encode()
    parsed = parse_bytes(data, source="r.json")
    assert [v.value for v in parsed.questions[0].answers[0].values] == ["b", "a"]  # type: ignore[index]
    with pytest.raises(DatasetFormatError, match="relevance 1"):
        parse_bytes(b'{"x:1-en": {"a": 2}}', source="r.json")


def test_answers_files_are_sparql_only_answers(t2s_files: T2sFiles) -> None:
    answers = parse_file(t2s_files.result("WSE", "ck25", "answers"))
    assert len(answers.questions) == 50
    first = answers.questions[0]
    assert (
        first.id == "ck25:1-en" and first.answers is None and "pv:memberOf" in (first.sparql or "")
    )
    empty = parse_bytes(b'[{"qname": "x:1-en", "query": ""}]', source="a.json").questions[0]
    assert empty.answers == (AnswerSet(has_bindings=True),) and empty.sparql is None


def test_gold_results_must_fit_the_questions(t2s_files: T2sFiles, tmp_path: Path) -> None:
    questions = parse_file(t2s_files.questions("ck25"))
    wrong = parse_file(t2s_files.reference("db25"))
    with pytest.raises(DatasetFormatError) as caught:
        with_gold_results(questions, wrong, source="db25.json")
    assert "no entry for 50 question(s): ck25:1-en" in str(caught.value)
    assert "200 entr(y/ies) for no question" in str(caught.value)


def test_writer_gives_the_clients_shapes(ck25_gold: object) -> None:
    from evaluators.model import Dataset

    assert isinstance(ck25_gold, Dataset)
    first = ck25_gold.questions[0]
    (entry,) = answers_document([AskedQuestion(first, "SELECT ?x {}", "http://sys/")])
    assert entry == {
        "dataset": "https://text2sparql.aksw.org/2025/corporate/",
        "question": "In which department is Ms. Brant?",
        "query": "SELECT ?x {}",
        "endpoint": "http://sys/",
        "qname": "ck25:1-en",
        "uri": "https://text2sparql.aksw.org/2025/corporate/1-en",
    }
    assert result_set(first.answers or ()) == {"http://ld.company.org/prod-instances/dept-73191": 1}


def test_questions_and_gold_survive_the_rdf_of_a_version(ck25_gold: object) -> None:
    from datetime import UTC, datetime

    from evaluators.datasets.rdf import VersionMeta, version_quads
    from evaluators.datasets.rdf_read import questions_from_quads
    from evaluators.model import Dataset

    assert isinstance(ck25_gold, Dataset)
    meta = VersionMeta("ck25", 1, "CK25", "0" * 64, 1, "q.yml", datetime.now(UTC))
    back = questions_from_quads(version_quads("http://qabench.test", ck25_gold, meta))
    assert back == ck25_gold.questions  # TEXT2SPARQL parts, lexical gold, booleans included

"""SciQA's questions and gold, FIRESPARQL's runs (tests/data/sciqa, SOURCE.md there)."""

from __future__ import annotations

import pytest

from evaluators.errors import DatasetFormatError
from evaluators.formats import detect_format, parse_bytes
from evaluators.formats.sciqa.firesparql import csv_records, parse_run
from evaluators.formats.sciqa.gold import with_gold
from evaluators.model import ERROR, NULL, SUCCESS, Dataset, Execution, SourceFormat
from tests import TEST_DATA

SCIQA = TEST_DATA / "sciqa"
IDS = ["AQ1475", "AQ0176", "AQ0392", "AQ1059", "AQ0021", "HQ0038", "HQ0022"]


@pytest.fixture
def questions() -> Dataset:
    return parse_bytes((SCIQA / "questions.json").read_bytes(), source="questions.json")


def test_questions_are_read_with_their_queries(questions: Dataset) -> None:
    assert questions.format is SourceFormat.SCIQA and questions.source_id == "sciqa"
    assert [q.id for q in questions.questions] == IDS
    first = questions.questions[0]
    assert first.text("en").startswith("Which model has achieved the highest Accuracy")
    assert first.sparql and "orkgp:HAS_DATASET" in first.sparql and first.answers is None
    assert not questions.warnings  # SciQA's descriptive fields are known


def test_answers_json_gives_values_and_a_table(questions: Dataset) -> None:
    gold = with_gold(questions, (SCIQA / "answers.json").read_bytes(), source="answers.json")
    by_id = gold.by_id()
    aq0176 = by_id["AQ0176"]
    assert aq0176.answers and len(aq0176.answers[0].values) == 4  # 2 rows x 2 variables
    assert aq0176.execution is not None and aq0176.execution.status == SUCCESS
    assert aq0176.execution.result == (
        "?model\t?model_lbl\n"
        '<http://orkg.org/orkg/resource/R122343>\t"SB-CNN aug"\n'
        '<http://orkg.org/orkg/resource/R122344>\t"SB-CNN noaug"'
    )
    hq0038 = by_id["HQ0038"].execution
    assert hq0038 and hq0038.result == (
        '?mean\n"2857.3636363636365e0"^^<http://www.w3.org/2001/XMLSchema#double>'
    )
    # an empty result is its header alone
    assert by_id["AQ1059"].execution == Execution(SUCCESS, "?metric\t?metric_lbl\t?score")
    ask = by_id["HQ0022"]
    assert ask.execution and ask.execution.result == "true" and ask.answers
    assert ask.answers[0].boolean is True


def test_a_run_gives_answers_and_the_gold_it_recorded(questions: Dataset) -> None:
    data = (SCIQA / "firesparql-run.csv").read_bytes()
    assert detect_format(data, "run.csv") is SourceFormat.FIRESPARQL_RUN
    run = parse_run(data.decode(), "run.csv")
    answers = run.answers.by_id()
    assert list(answers) == IDS and run.answers.format is SourceFormat.FIRESPARQL_RUN
    statuses = {qid: a.execution.status for qid, a in answers.items() if a.execution}
    assert statuses == {
        "AQ1475": SUCCESS, "AQ0176": SUCCESS, "AQ0392": ERROR, "AQ1059": SUCCESS,
        "AQ0021": NULL, "HQ0038": SUCCESS, "HQ0022": ERROR,
    }  # fmt: skip
    # a "null" cell is no result, as pandas reads it; an error keeps its text (quotes, commas)
    assert answers["AQ0021"].execution and answers["AQ0021"].execution.result is None
    error = answers["AQ0392"].execution
    assert error and error.result == (
        "Invalid SPARQL query: Token \",\": mismatched input ',' expecting '}'"
    )
    # a table's values where it parses as TSV
    table = answers["AQ1475"].answers
    assert table and [v.value for v in table[0].values] == [
        "http://orkg.org/orkg/resource/R117327", "GPT-3 175B (Few-Shot)",
    ]  # fmt: skip
    gold = with_gold(questions, data, source="run.csv").by_id()
    assert gold["AQ1059"].execution and gold["AQ1059"].execution.status == NULL
    assert gold["HQ0022"].execution and gold["HQ0022"].execution.status == ERROR
    assert gold["HQ0022"].answers is None and gold["AQ0176"].answers


def test_csv_records_follow_rfc_4180() -> None:
    assert csv_records('a,b\r\n"c\nd","e""f"\n,\n', "x") == [
        ["a", "b"], ["c\nd", 'e"f'], ["", ""],
    ]  # fmt: skip
    with pytest.raises(DatasetFormatError, match="never ends"):
        csv_records('a,"b\n', "x")
    with pytest.raises(DatasetFormatError, match="after a closing quote"):
        csv_records('"a"b,c\n', "x")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("id,status\nAQ1,SUCCESS\n", "header"),
        ("question_id,status,message,gt_message\nAQ1,SUCCESS,x\n", "4 fields"),
        ("question_id,status,message,gt_message\n,SUCCESS,x,y\n", "question id"),
    ],
)
def test_a_malformed_run_is_refused(text: str, message: str) -> None:
    with pytest.raises(DatasetFormatError, match=message):
        parse_run(text, "run.csv")


def test_gold_that_does_not_fit_is_refused(questions: Dataset) -> None:
    run = b"question_id,status,message,gt_message\nAQ9999,NULL,null,null\n"
    with pytest.raises(DatasetFormatError, match="AQ9999"):
        with_gold(questions, run, source="run.csv")
    stray = b'{"answers": [{"id": "AQ9999", "answer": {"head": {}, "boolean": true}}]}'
    with pytest.raises(DatasetFormatError, match="AQ9999"):
        with_gold(questions, stray, source="answers.json")
    qald = parse_bytes(b'{"questions": []}', source="q.json")
    with pytest.raises(DatasetFormatError, match="SciQA questions"):
        with_gold(qald, run, source="run.csv")

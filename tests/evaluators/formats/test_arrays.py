"""NLQ (OKBQA), LC-QuAD 1.0 and LC-QuAD 2.0: JSON arrays of flat question entries."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pyoxigraph import Literal

from evaluators.errors import DatasetFormatError
from evaluators.formats import parse_bytes
from evaluators.model import AnswerSet, Dataset, QuestionText, SourceFormat


def test_nlq_entries_with_one_id_merge_into_one_question(
    formats_parse: Callable[[str], Dataset],
) -> None:
    dataset = formats_parse("nlq-edge.json")
    assert dataset.format is SourceFormat.NLQ
    assert [q.id for q in dataset.questions] == ["1", "2", "3"]
    first = dataset.questions[0]
    assert first.texts == (QuestionText("ko", "질문 하나?"), QuestionText("en", "Question one?"))
    # the English entry's label and SPARQL win over the Korean ones that come first
    assert first.answers == (AnswerSet((Literal("Answer one"),)),)
    assert first.sparql == 'select ?x where { ?x ?p "en" }'


def test_nlq_empty_answer_out_of_scope_and_non_english_only(
    formats_parse: Callable[[str], Dataset],
) -> None:
    by_id = formats_parse("nlq-edge.json").by_id()
    assert by_id["2"].answers == (AnswerSet(),)
    assert by_id["2"].out_of_scope
    assert by_id["3"].answers == (AnswerSet((Literal("셋"),)),)
    assert by_id["3"].languages == ("ko",)


def test_nlq_blank_ids_are_skipped_and_unknown_keys_warned(
    formats_parse: Callable[[str], Dataset],
) -> None:
    messages = [w.message for w in formats_parse("nlq-edge.json").warnings]
    assert "skipped entries with a blank id (first at $[3])" in messages
    assert any("'level'" in m and "$[4].level" in m for m in messages)


def test_lcquad_questions_and_sparql_without_answers(
    formats_parse: Callable[[str], Dataset],
) -> None:
    dataset = formats_parse("lcquad-edge.json")
    assert dataset.format is SourceFormat.LCQUAD
    first, second = dataset.questions
    assert first.id == "1701"
    assert first.text("en") == "Which architect of the station was also tenant of the hotel?"
    assert first.sparql == (
        "SELECT DISTINCT ?uri WHERE { <http://ex.org/station> <http://ex.org/architect> ?uri }"
    )
    assert first.answers is None and second.answers is None
    # no corrected question: the intermediary one is used, with a warning
    assert second.id == "2"
    assert second.text("en") == "What is the <capital> of <France>"
    assert any("intermediary_question" in w.message for w in dataset.warnings)


def test_lcquad2_questions_fall_back_to_the_paraphrase_then_the_template_text(
    formats_parse: Callable[[str], Dataset],
) -> None:
    dataset = formats_parse("lcquad2-edge.json")
    assert dataset.format is SourceFormat.LCQUAD2
    first, second, third = dataset.questions
    assert (first.id, second.id, third.id) == ("901", "902", "903")
    assert first.text("en") == "Which river flows through the capital of Moldova?"
    # the Wikidata query is the gold query (trimmed); no answers are published
    assert first.sparql == "select distinct ?river where { wd:Q21197 wdt:P206 ?river }"
    assert all(q.answers is None for q in dataset.questions)
    # null question: the paraphrase; placeholder question and a list paraphrase: the template
    assert second.text("en") == "How many people live in Chișinău?"
    assert third.text("en") == "Is {Chișinău} {instance of} {city} ?"
    messages = [w.message for w in dataset.warnings]
    assert any("'paraphrased_question'" in m for m in messages)
    assert any("'NNQT_question'" in m for m in messages)
    assert any("'reviewer'" in m and "$[2].reviewer" in m for m in messages)
    assert len(messages) == 3


@pytest.mark.parametrize(
    ("data", "fmt", "where"),
    [
        (b'[{"_id": "1", "corrected_question": 3}]', None, "$[0].corrected_question"),
        (b'[{"_id": null, "corrected_question": "q"}]', None, "$[0]._id"),
        (b'[{"_id": "1", "corrected_question": "q"}, 7]', None, "$[1]: expected an object"),
        (b'[{"id": "1", "lang": "en", "question": ["q"]}]', None, "$[0].question"),
        (b'[{"id": "1", "lang": "en", "question": "q", "answer": 5}]', None, "$[0].answer"),
        (b'{"questions": []}', SourceFormat.NLQ, "$: expected a list"),
        (b'{"questions": []}', SourceFormat.LCQUAD, "$: expected a list"),
        (b'[{"uid": null, "sparql_wikidata": "q"}]', None, "$[0].uid"),
        (b'[{"uid": 1, "sparql_wikidata": 5}]', None, "$[0].sparql_wikidata"),
        (b'[{"uid": 1, "sparql_wikidata": "q"}, []]', None, "$[1]: expected an object"),
    ],
)
def test_array_formats_report_wrong_types_with_their_path(
    data: bytes, fmt: SourceFormat | None, where: str
) -> None:
    with pytest.raises(DatasetFormatError, match=r"^a\.json: at ") as caught:
        parse_bytes(data, source="a.json", format=fmt)
    assert where in str(caught.value)

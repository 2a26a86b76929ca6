"""Simple answers files: a JSON list of ``{id, answers}`` and TSV ``id<TAB>answer`` lines."""

from __future__ import annotations

import pytest
from pyoxigraph import Literal, NamedNode

from evaluators.errors import AnswerFileError
from evaluators.formats import parse_bytes
from evaluators.model import AnswerSet, SourceFormat
from evaluators.systems.answer_files import parse_answer_file
from vocab.standard import XSD

DANUBE = NamedNode("http://dbpedia.org/resource/Danube")


def test_json_list_values_booleans_and_sparql_only_entries() -> None:
    data = b"""[{"id": 1, "answers": ["http://dbpedia.org/resource/Danube", "Wien", 2]},
                {"id": "4", "answers": [true]}, {"id": "6", "answers": []},
                {"id": "7", "sparql": "SELECT ?x WHERE { ?x a dbo:City }"}]"""
    dataset = parse_answer_file(data, source="mine.json")
    assert dataset.format is SourceFormat.ANSWERS_JSON
    one, four, six, seven = dataset.questions
    assert one.answers == (
        AnswerSet((DANUBE, Literal("Wien"), Literal("2", datatype=XSD.integer)), has_bindings=True),
    )
    assert four.answers == (AnswerSet(boolean=True),)
    assert six.answers == (AnswerSet(has_bindings=True),)
    # a query and no answers: a SPARQL-only answer (run on the KB when one is configured)
    assert seven.answers is None and seven.sparql == "SELECT ?x WHERE { ?x a dbo:City }"


def test_tsv_lines_group_by_id_with_header_empty_answers_and_booleans() -> None:
    data = b"id\tanswer\n1\thttp://dbpedia.org/resource/Danube\n\n1\tWien\n4\tTRUE\n6\t\n"
    dataset = parse_answer_file(data, source="mine.tsv")
    assert dataset.format is SourceFormat.ANSWERS_TSV
    assert [q.id for q in dataset.questions] == ["1", "4", "6"]
    one, four, six = dataset.questions
    assert one.answers == (AnswerSet((DANUBE, Literal("Wien")), has_bindings=True),)
    assert four.answers == (AnswerSet(boolean=True),)
    assert six.answers == (AnswerSet(has_bindings=True),)


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b"1\tWien\n2 Wien\n", "at line 2: expected 'id<TAB>answer', found no tab"),
        (b"1\tWien\tVienna\n", "at line 1: expected 'id<TAB>answer', found 3 tab-separated"),
        (b"1\tWien\n\n\tWien\n", "at line 3: the question id is empty"),
        (b'[{"id": 1, "answers": [{"v": 1}]}]', "at $[0].answers[0]: expected a string or a"),
        (b'[{"id": 1, "answers": [true, "x"]}]', "at $[0].answers[0]: a boolean answer must"),
        (b'[{"id": 1, "sparql": 5}]', "at $[0].sparql: expected a SPARQL string"),
        (b'[{"answers": []}]', "first entry is an object with keys (answers)"),
    ],
)
def test_malformed_answers_are_refused_naming_the_line_or_path(data: bytes, where: str) -> None:
    with pytest.raises(AnswerFileError) as caught:
        parse_answer_file(data, source="mine")
    assert str(caught.value).startswith("Answers file mine cannot be read")
    assert where in str(caught.value)


def test_simple_answer_formats_are_detected_but_never_datasets() -> None:
    assert parse_bytes(b"7\tx\n", source="a").format is SourceFormat.ANSWERS_TSV
    assert parse_bytes(b'[{"id": 7, "answers": []}]', source="a").format is (
        SourceFormat.ANSWERS_JSON
    )
    assert SourceFormat.ANSWERS_JSON.answers_only and not SourceFormat.LCQUAD2.answers_only

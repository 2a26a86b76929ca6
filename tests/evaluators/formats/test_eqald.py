"""Extended QALD JSON (eQALD) parsing: every language kept, query choice, annotations."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from pyoxigraph import Literal, NamedNode

from evaluators.errors import DatasetFormatError
from evaluators.formats import parse_bytes
from evaluators.model import Annotation, AnswerSet, AnswerType, Dataset, QuestionText, SourceFormat
from vocab.standard import XSD


@pytest.fixture
def edge(formats_parse: Callable[[str], Dataset]) -> Dataset:
    return formats_parse("eqald-edge.json")


def eqald(question: dict[str, object]) -> bytes:
    return json.dumps({"questions": [{"question": question}]}).encode()


def test_every_language_is_kept_and_english_sparql_wins(edge: Dataset) -> None:
    assert edge.format is SourceFormat.EQALD
    q = edge.by_id()["0"]
    assert q.texts == (
        QuestionText("de", "Wann war die Schlacht von Gettysburg?", ("Schlacht", "Gettysburg")),
        QuestionText("en", "When was the Battle of Gettysburg?", ("Battle of Gettysburg",)),
        QuestionText("fr", "Quand a eu lieu la bataille de Gettysburg ?"),
    )
    assert q.sparql == "SELECT ?en WHERE {}"
    assert q.schemaless_query == 'SELECT ?s WHERE { ?s ?p "Gettysburg" }'
    assert (q.answer_type, q.answer_item_types, q.confidence) == (AnswerType.DATE, ("date",), 0.75)
    assert (q.aggregation, q.only_dbo, q.hybrid) == (False, True, False)


def test_without_english_the_last_entry_with_a_query_wins(edge: Dataset) -> None:
    q = edge.by_id()["1"]
    assert q.pseudo_query == "OUT OF SCOPE"
    assert q.out_of_scope
    assert q.sparql is None
    assert q.hybrid is True and q.aggregation is None


def test_answers_given_as_a_json_string_or_object(edge: Dataset) -> None:
    assert edge.by_id()["0"].answers == (
        AnswerSet(
            (Literal("1863-07-03", datatype=XSD.date),), variables=("date",), has_bindings=True
        ),
    )
    assert edge.by_id()["1"].answers == (
        AnswerSet((NamedNode("http://ex.org/Somebody"),), variables=("uri",), has_bindings=True),
    )
    assert edge.by_id()["2"].answers is None


def test_annotations_keep_offsets_and_skip_what_does_not_fit(edge: Dataset) -> None:
    assert edge.by_id()["0"].annotations == (
        Annotation(
            "en", 13, 33, "Battle of Gettysburg", "http://ex.org/Battle_of_Gettysburg", "entity"
        ),
        Annotation("en", 0, 4, "When"),
        Annotation("en", 13, 19, "Battle"),
    )
    messages = " | ".join(w.message for w in edge.warnings)
    assert "has no span inside the question (begin=30, end=99" in messages
    assert "'not in the question'" in messages


def test_annotation_offsets_must_be_integers() -> None:
    doc = eqald(
        {
            "id": "1",
            "language": [
                {"language": "en", "question": "abc", "annotations": [{"begin": "0", "end": 1}]}
            ],
        }
    )
    with pytest.raises(DatasetFormatError, match=r"language\[0\]\.annotations\[0\]\.begin"):
        parse_bytes(doc, source="a.json")


def test_embedded_answers_string_that_is_not_json_names_its_path() -> None:
    doc = eqald({"id": "1", "language": [], "answers": '{"head": '})
    with pytest.raises(DatasetFormatError) as caught:
        parse_bytes(doc, source="s.json")
    message = str(caught.value)
    assert "$.questions[0].question.answers" in message
    assert "of the string" in message


def test_missing_id_and_wrong_metadata_are_errors() -> None:
    with pytest.raises(DatasetFormatError, match=r"\$\.questions\[0\]\.question: missing"):
        parse_bytes(eqald({"language": []}), source="e.json")
    with pytest.raises(DatasetFormatError, match=r"question\.metadata: expected an object"):
        parse_bytes(eqald({"id": "1", "language": [], "metadata": "none"}), source="e.json")

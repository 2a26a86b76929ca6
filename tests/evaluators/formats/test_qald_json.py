"""QALD JSON parsing: fields, answer values, warnings (hand-written fixtures)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pyoxigraph import Literal, NamedNode

from evaluators.errors import DatasetFormatError
from evaluators.formats import parse_bytes
from evaluators.model import AnswerSet, AnswerType, Dataset, QuestionText, SourceFormat
from tests.plugins.formats import qald_json
from vocab.standard import XSD


@pytest.fixture
def edge(formats_parse: Callable[[str], Dataset]) -> Dataset:
    return formats_parse("qald-edge.json")


def test_header_and_question_fields_are_read(edge: Dataset) -> None:
    assert edge.format is SourceFormat.QALD_JSON
    assert edge.source_id == "edge-cases"
    assert edge.metadata == '{"note": "hand-written"}'
    assert [q.id for q in edge.questions] == ["7", "8", "9", "10"]
    q = edge.questions[0]
    assert (q.answer_type, q.answer_type_label) == (AnswerType.RESOURCE, "resource")
    assert (q.aggregation, q.only_dbo, q.hybrid) == (True, False, False)
    assert q.texts == (
        QuestionText("en", "Which rivers flow into the Rhine?", ("rivers", "Rhine", "flow")),
        QuestionText("de", "Welche Flüsse münden in den Rhein?", ("Flüsse", "Rhein")),
    )
    assert q.sparql == "SELECT ?uri WHERE { ?uri <http://ex.org/flowsInto> <http://ex.org/Rhine> }"
    assert q.pseudo_query is None
    assert not q.out_of_scope


def test_bindings_become_terms_in_file_order_without_duplicates(edge: Dataset) -> None:
    (answer,) = edge.questions[0].answers or ()
    assert answer.variables == ("uri", "label")
    assert answer.boolean is None
    assert answer.values == (
        NamedNode("http://ex.org/Aare"),
        Literal("Aare", language="de"),
        Literal("not an iri", datatype=XSD.anyURI),
        Literal("12", datatype=XSD.integer),
        Literal("plain", datatype=XSD.string),
        Literal("_:b0"),
    )


def test_boolean_empty_and_missing_answers_are_distinguished(edge: Dataset) -> None:
    by_id = edge.by_id()
    assert by_id["8"].answers == (AnswerSet(boolean=False),)
    assert by_id["8"].answer_type is AnswerType.BOOLEAN
    assert by_id["9"].answers == ()
    assert by_id["9"].has_answers
    assert by_id["10"].answers is None
    assert not by_id["10"].has_answers
    assert by_id["10"].answer_type is None and by_id["10"].aggregation is None


def test_out_of_scope_pseudo_query_sets_the_flag(edge: Dataset) -> None:
    q = edge.by_id()["9"]
    assert q.pseudo_query == "OUT OF SCOPE"
    assert q.out_of_scope


def test_unknown_fields_warn_once_per_distinct_key(edge: Dataset) -> None:
    messages = [w.message for w in edge.warnings]
    rating = [m for m in messages if "'rating'" in m]
    assert len(rating) == 1
    assert "[2 occurrences]" in rating[0]
    assert "$.questions[0].rating" in rating[0]
    assert any("not valid IRIs" in m and "'not an iri'" in m for m in messages)
    assert any("blank-node" in m for m in messages)
    # link, distinct and ordered are known SPARQL JSON members
    assert not any("'link'" in m or "'distinct'" in m or "'ordered'" in m for m in messages)


def test_qald5_flat_answers_and_body_texts(formats_parse: Callable[[str], Dataset]) -> None:
    dataset = formats_parse("qald5-flat.json")
    assert dataset.format is SourceFormat.QALD_JSON
    moons, is_moon, count = dataset.questions
    assert moons.texts == (QuestionText("en", "Give me all moons of Mars.", ("moons", "Mars")),)
    assert moons.sparql == "SELECT ?uri WHERE { ?uri <http://ex.org/orbits> <http://ex.org/Mars> }"
    assert moons.answers == (
        AnswerSet(
            (
                NamedNode("http://ex.org/Phobos"),
                NamedNode("http://ex.org/Deimos"),
                Literal("no iri here"),
            )
        ),
    )
    assert is_moon.answers == (AnswerSet(boolean=True),)
    assert count.answers == (AnswerSet((Literal("2"),)),)


@pytest.mark.parametrize(
    ("binding", "expected"),
    [
        ({"type": "uri", "value": "http://ex.org/a"}, NamedNode("http://ex.org/a")),
        ({"type": "resource", "value": "http://ex.org/a"}, NamedNode("http://ex.org/a")),
        ({"type": "uri", "value": "<http://ex.org/a>"}, NamedNode("http://ex.org/a")),
        ({"type": "uri", "value": "ex.org/a"}, Literal("ex.org/a", datatype=XSD.anyURI)),
        ({"type": "literal", "value": "x"}, Literal("x")),
        ({"type": "literal", "value": "x", "xml:lang": "en"}, Literal("x", language="en")),
        ({"type": "literal", "value": "x", "xml:lang": "not a tag"}, Literal("x")),
        (
            {"type": "typed-literal", "value": "1", "datatype": str(XSD.integer.value)},
            Literal("1", datatype=XSD.integer),
        ),
        ({"type": "literal", "value": "1", "datatype": "bad iri"}, Literal("1")),
        ({"value": "1", "datatype": str(XSD.decimal.value)}, Literal("1", datatype=XSD.decimal)),
        ({"type": "number", "value": "6"}, Literal("6")),
        ({"type": "list", "value": "http://ex.org/a"}, NamedNode("http://ex.org/a")),
        ({"type": "literal", "value": 6}, Literal("6")),
    ],
)
def test_binding_table(binding: dict[str, object], expected: object) -> None:
    doc = qald_json({"id": "1", "answers": [{"results": {"bindings": [{"v": binding}]}}]})
    (question,) = parse_bytes(doc, source="t.json").questions
    assert question.answers == (AnswerSet((expected,), variables=("v",), has_bindings=True),)  # type: ignore[arg-type]


def test_answers_given_as_one_object_or_json_string_are_accepted() -> None:
    result = {
        "head": {"vars": ["x"]},
        "results": {"bindings": [{"x": {"type": "literal", "value": "a"}}]},
    }
    import json

    for answers in (result, json.dumps(result)):
        (q,) = parse_bytes(qald_json({"id": 1, "answers": answers}), source="t").questions
        assert q.answers == (AnswerSet((Literal("a"),), variables=("x",), has_bindings=True),)


@pytest.mark.parametrize(
    ("question", "path"),
    [
        ({"question": []}, "$.questions[0]: missing required field 'id'"),
        ({"id": None}, "$.questions[0].id"),
        ({"id": True}, "$.questions[0].id"),
        ({"id": "  "}, "$.questions[0].id"),
        ({"id": "1", "question": "x", "answertype": 3}, "$.questions[0].answertype"),
        ({"id": "1", "aggregation": 1}, "$.questions[0].aggregation"),
        (
            {"id": "1", "question": [{"language": "en", "string": 5}]},
            "$.questions[0].question[0].string",
        ),
        ({"id": "1", "question": {"en": "x"}}, "$.questions[0].question"),
        ({"id": "1", "query": ["SELECT"]}, "$.questions[0].query"),
        (
            {"id": "1", "answers": [{"results": {"bindings": {"x": 1}}}]},
            "$.questions[0].answers[0].results.bindings",
        ),
        ({"id": "1", "answers": [{"boolean": "maybe"}]}, "$.questions[0].answers[0].boolean"),
        (
            {"id": "1", "answers": [{"results": {"bindings": [{"x": "http://a"}]}}]},
            "$.questions[0].answers[0].results.bindings[0].x",
        ),
        ({"id": "1", "answers": "{not json"}, "$.questions[0].answers"),
        ({"id": "1", "answers": 3}, "$.questions[0].answers"),
    ],
)
def test_wrong_field_types_name_the_json_path(question: dict[str, object], path: str) -> None:
    with pytest.raises(DatasetFormatError) as caught:
        parse_bytes(qald_json(question), source="answers.json")
    assert str(caught.value).startswith("answers.json: at ")
    assert path in str(caught.value)


def test_questions_that_is_not_a_list_is_refused() -> None:
    with pytest.raises(DatasetFormatError, match=r"\$\.questions: expected a list of questions"):
        parse_bytes(b'{"questions": {"id": "1"}}', source="q.json")


def test_flags_with_other_values_warn_and_stay_unset() -> None:
    doc = qald_json({"id": "1", "aggregation": "union", "onlydbo": "True", "answertype": "text"})
    dataset = parse_bytes(doc, source="f.json")
    (q,) = dataset.questions
    assert (q.aggregation, q.only_dbo) == (None, True)
    assert (q.answer_type, q.answer_type_label) == (None, "text")
    messages = " | ".join(w.message for w in dataset.warnings)
    assert "aggregation should be true or false, found 'union'" in messages
    assert "unknown answertype 'text'" in messages

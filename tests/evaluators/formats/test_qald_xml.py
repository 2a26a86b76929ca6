"""QALD XML parsing: answer shapes, languages, DOCTYPE refusal, encodings and repairs."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pyoxigraph import Literal, NamedNode

from evaluators.errors import DatasetFormatError
from evaluators.formats import parse_bytes
from evaluators.model import AnswerSet, AnswerType, Dataset, QuestionText, SourceFormat
from vocab.standard import XSD


@pytest.fixture
def edge(formats_parse: Callable[[str], Dataset]) -> Dataset:
    return formats_parse("qald-edge.xml")


def test_dataset_attributes_and_question_count(edge: Dataset) -> None:
    assert edge.format is SourceFormat.QALD_XML
    assert edge.source_id == "edge-xml"
    assert edge.metadata == "shapes seen in QALD-1 to QALD-7 files"
    assert [q.id for q in edge.questions] == ["1", "2", "3", "4", "5", "6", "7"]


def test_string_without_lang_is_english_and_cdata_is_text(edge: Dataset) -> None:
    q = edge.by_id()["1"]
    assert q.texts == (
        QuestionText("en", "Which rivers flow into the Rhine?", ("rivers", "Rhine")),
        QuestionText("de", "Welche Flüsse münden in den Rhein?"),
    )
    assert q.sparql == (
        "SELECT ?uri WHERE { ?uri <http://ex.org/flowsInto> <http://ex.org/Rhine> . "
        "FILTER(?x < 3) }"
    )
    assert (q.answer_type, q.aggregation, q.only_dbo, q.hybrid) == (
        AnswerType.RESOURCE,
        False,
        True,
        False,
    )
    assert edge.by_id()["7"].text("en") == "Where is Bonn?"


def test_answer_shapes_of_a_resource_question(edge: Dataset) -> None:
    # plain IRI text, <uri> + <string> pair (one answer: the label is not a second answer),
    # plain non-IRI text, and an empty <answer/>
    assert edge.by_id()["1"].answers == (
        AnswerSet(
            (
                NamedNode("http://ex.org/Aare"),
                NamedNode("http://ex.org/Main"),
                Literal("Not an IRI"),
            )
        ),
    )


def test_boolean_answers_in_element_or_text(edge: Dataset) -> None:
    assert edge.by_id()["2"].answers == (AnswerSet(boolean=True),)
    assert edge.by_id()["3"].answers == (AnswerSet(boolean=False),)


def test_number_directly_under_answers_and_pseudoquery(edge: Dataset) -> None:
    q = edge.by_id()["4"]
    assert q.answers == (AnswerSet((Literal("42"),)),)
    assert q.pseudo_query == 'SELECT (COUNT(?b) AS ?n) WHERE { ?b text:"crosses" text:"Rhine" . }'
    assert q.sparql is None and q.hybrid is True


def test_out_of_scope_query_and_no_answers(edge: Dataset) -> None:
    q = edge.by_id()["5"]
    assert q.out_of_scope and q.sparql == "OUT OF SCOPE"
    assert q.answers is None


def test_qbench_answers_nested_in_query_with_variable_elements(edge: Dataset) -> None:
    q = edge.by_id()["6"]
    assert q.sparql == "SELECT ?sector ?sum WHERE { }"
    assert q.answers == (
        AnswerSet(
            (NamedNode("http://ex.org/sector/1"), Literal("100.5"), Literal("7")),
            variables=("sector", "sum"),
        ),
    )


def test_invalid_iri_in_uri_element_is_kept_as_anyuri_with_warning(edge: Dataset) -> None:
    assert edge.by_id()["7"].answers == (AnswerSet((Literal("ex.org/Bonn", datatype=XSD.anyURI),)),)
    assert any("'ex.org/Bonn'" in w.message for w in edge.warnings)


def test_unknown_attributes_warn_once_per_name(edge: Dataset) -> None:
    messages = [w.message for w in edge.warnings if "unknown field" in w.message]
    assert len(messages) == 2
    cube = next(m for m in messages if "'cubeuri'" in m)
    assert "[2 occurrences]" in cube and "line 4" in cube
    assert any("'statistical'" in m for m in messages)


@pytest.mark.parametrize("name", ["entity-bomb.xml", "external-entity.xml"])
def test_doctype_is_refused_before_parsing(
    name: str, formats_parse: Callable[[str], Dataset]
) -> None:
    with pytest.raises(DatasetFormatError, match="DOCTYPE declaration, which is refused") as e:
        formats_parse(name)
    assert e.value.source == name
    assert e.value.line == 2


def test_doctype_is_refused_when_parsing_is_forced() -> None:
    data = b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x "y">]><dataset/>'
    with pytest.raises(DatasetFormatError, match="DOCTYPE"):
        parse_bytes(data, source="d.xml", format=SourceFormat.QALD_XML)


def test_unclosed_answers_is_repaired_with_a_warning(
    formats_parse: Callable[[str], Dataset],
) -> None:
    dataset = formats_parse("unclosed-answers.xml")
    assert [q.answers for q in dataset.questions] == [
        (AnswerSet((NamedNode("http://ex.org/A"),)),),
        (AnswerSet((NamedNode("http://ex.org/B"),)),),
    ]
    assert [w.message for w in dataset.warnings] == [
        "closed an unclosed <answers> element at line 7, column 1"
    ]


@pytest.mark.parametrize(
    ("name", "line", "column", "text"),
    [
        ("truncated.xml", 4, 1, "no element found"),
        ("wrong-root.xml", 2, None, "the XML root element is <sparql>"),
    ],
)
def test_malformed_xml_names_file_and_position(
    name: str,
    line: int,
    column: int | None,
    text: str,
    formats_parse: Callable[[str], Dataset],
) -> None:
    with pytest.raises(DatasetFormatError) as caught:
        formats_parse(name)
    assert (caught.value.line, caught.value.column) == (line, column)
    assert text in str(caught.value) and str(caught.value).startswith(name)


def test_question_without_id_names_its_line() -> None:
    data = b'<dataset id="x">\n<question id="1"/>\n<question answertype="date"/>\n</dataset>'
    with pytest.raises(DatasetFormatError, match="has no id attribute") as caught:
        parse_bytes(data, source="ids.xml")
    assert caught.value.line == 3


@pytest.mark.parametrize("name", ["latin1-declared.xml", "utf16-bom.xml"])
def test_declared_and_marked_encodings_are_honoured(
    name: str, formats_parse: Callable[[str], Dataset]
) -> None:
    (q,) = formats_parse(name).questions
    assert q.text("de") == "Wo liegt Köln?"


def test_undeclared_latin1_is_refused_with_the_byte_position(
    formats_parse: Callable[[str], Dataset],
) -> None:
    with pytest.raises(DatasetFormatError, match=r"invalid utf-8 byte\(s\) f6") as caught:
        formats_parse("latin1-undeclared.xml")
    assert (caught.value.line, caught.value.column) == (2, 63)


def test_unknown_declared_encoding_is_refused() -> None:
    data = b'<?xml version="1.0" encoding="klingon-8"?><dataset/>'
    with pytest.raises(DatasetFormatError, match="unknown encoding 'klingon-8'"):
        parse_bytes(data, source="k.xml")


def test_undefined_entity_is_a_format_error() -> None:
    data = b'<dataset><question id="1"><string>&nbsp;</string></question></dataset>'
    with pytest.raises(DatasetFormatError, match="undefined entity") as caught:
        parse_bytes(data, source="e.xml")
    assert caught.value.line == 1

"""Format detection, forced formats and GERBIL QA web-service replies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from evaluators.errors import DatasetFormatError
from evaluators.formats import detect_format, parse_bytes, parse_system_response
from evaluators.model import AnswerSet, AnswerType, SourceFormat


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("qald-edge.xml", SourceFormat.QALD_XML),
        ("utf16-bom.xml", SourceFormat.QALD_XML),
        ("qald-edge.json", SourceFormat.QALD_JSON),
        ("qald5-flat.json", SourceFormat.QALD_JSON),
        ("utf8-bom.json", SourceFormat.QALD_JSON),
        ("utf16-bom.json", SourceFormat.QALD_JSON),
        ("eqald-edge.json", SourceFormat.EQALD),
        ("nlq-edge.json", SourceFormat.NLQ),
        ("lcquad-edge.json", SourceFormat.LCQUAD),
        ("lcquad2-edge.json", SourceFormat.LCQUAD2),
        ("bioasq-edge.json", SourceFormat.BIOASQ),
    ],
)
def test_fixture_formats_are_detected(
    name: str, expected: SourceFormat, formats_data: Path
) -> None:
    data = (formats_data / name).read_bytes()
    assert detect_format(data, name) is expected
    assert parse_bytes(data, source=name).format is expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"questions": []}', SourceFormat.QALD_JSON),
        (b'{"questions": [{"documents": []}]}', SourceFormat.BIOASQ),
        (b'{"questions": [{"id": "1", "body": "text"}]}', SourceFormat.BIOASQ),
        (b'{"questions": [{"id": "1", "body": [{"language": "en"}]}]}', SourceFormat.QALD_JSON),
        (b'{"questions": [{"question": {"language": []}}]}', SourceFormat.EQALD),
        (b'[{"_id": 1, "corrected_question": "q"}]', SourceFormat.LCQUAD),
        (b'[{"id": 1, "lang": "en", "question": "q"}]', SourceFormat.NLQ),
        (b"  \n<dataset/>", SourceFormat.QALD_XML),
    ],
)
def test_detection_table(data: bytes, expected: SourceFormat) -> None:
    assert detect_format(data, "t") is expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "the content is empty"),
        (b" \n\t", "the content is empty"),
        (b"id,question\n1,Who?\n", "invalid JSON"),
        (b"[]", "a JSON array whose first entry is a list of 0 items; expected NLQ"),
        (b'[{"x": 1}]', "first entry is an object with keys (x); expected NLQ entries"),
        (b"[1, 2]", "expected NLQ entries"),
        (b'"questions"', "the JSON document is the string 'questions'; expected QALD XML"),
        (b'{"head": {}, "boolean": true}', "without 'questions' (its keys: 'head', 'boolean')"),
        (b'{"questions": 3}', "$.questions: expected a list of questions, found the number 3"),
        (b"<sparql/>", "the XML root element is <sparql>; expected QALD XML"),
        (b"<!-- only a comment -->", "the XML has no root element"),
    ],
)
def test_unrecognised_content_says_what_it_looks_like(data: bytes, message: str) -> None:
    with pytest.raises(DatasetFormatError) as caught:
        detect_format(data, "upload.bin")
    assert str(caught.value).startswith("upload.bin")
    assert message in str(caught.value)
    with pytest.raises(DatasetFormatError):
        parse_bytes(data, source="upload.bin")


def test_a_forced_format_overrides_detection() -> None:
    data = b'{"questions": [{"id": "1", "body": "Is it?", "type": "yesno"}]}'
    assert parse_bytes(data, source="t").format is SourceFormat.BIOASQ
    forced = parse_bytes(data, source="t", format=SourceFormat.QALD_JSON)
    assert forced.format is SourceFormat.QALD_JSON
    with pytest.raises(DatasetFormatError, match="invalid JSON"):
        parse_bytes(b"<dataset/>", source="t", format=SourceFormat.QALD_JSON)
    with pytest.raises(DatasetFormatError, match="malformed XML"):
        parse_bytes(data, source="t", format=SourceFormat.QALD_XML)


def test_template_server_reply_uses_the_first_question(formats_data: Path) -> None:
    data = (formats_data / "system-reply-template.json").read_bytes()
    question = parse_system_response(data, source="http://qa.example/gerbil")
    assert question.id == ""
    assert question.answer_type is AnswerType.RESOURCE
    assert question.sparql == "SELECT ?resource WHERE { }"
    assert question.answers == (
        AnswerSet((NamedNode("http://ex.org/Goethe"),), variables=("resource",), has_bindings=True),
    )


def test_eqald_reply_is_read_as_eqald() -> None:
    reply = {
        "questions": [
            {
                "question": {
                    "answertype": "boolean",
                    "language": [{"language": "en", "question": "Is it?"}],
                    "answers": json.dumps({"head": {}, "boolean": True}),
                }
            }
        ]
    }
    question = parse_system_response(json.dumps(reply).encode(), source="sys")
    assert question.answers == (AnswerSet(boolean=True),)
    assert question.text("en") == "Is it?"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"questions": []}', "the reply has no question"),
        (b"[]", "the reply is a list of 0 items; expected a QALD JSON object"),
        (b"<dataset/>", "invalid JSON"),
        (b'{"questions": [{"answers": [{"boolean": 1}]}]}', "expected true or false"),
        (b"\xff\xfe\xfa", "invalid utf-16-le"),
    ],
)
def test_bad_replies_are_format_errors(data: bytes, message: str) -> None:
    with pytest.raises(DatasetFormatError) as caught:
        parse_system_response(data, source="http://qa.example/gerbil")
    assert str(caught.value).startswith("http://qa.example/gerbil")
    assert message in str(caught.value)

"""Reading bytes: size limits, encodings, JSON syntax errors with positions, odd content."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from evaluators.errors import DatasetFormatError, DatasetTooLargeError
from evaluators.formats import parse_bytes, parse_file
from evaluators.model import Dataset


@pytest.mark.parametrize("name", ["utf8-bom.json", "utf16-bom.json"])
def test_byte_order_marks_are_accepted(name: str, formats_parse: Callable[[str], Dataset]) -> None:
    (q,) = formats_parse(name).questions
    assert q.text("de") == "Wo liegt Köln?"


def test_latin1_json_is_refused_with_the_byte_position(
    formats_parse: Callable[[str], Dataset],
) -> None:
    with pytest.raises(DatasetFormatError) as caught:
        formats_parse("latin1.json")
    assert (caught.value.line, caught.value.column) == (1, 81)
    assert "invalid utf-8 byte(s) f6" in str(caught.value)
    assert "re-save the file as UTF-8" in str(caught.value)


def test_utf16_without_a_mark_gets_a_hint() -> None:
    data = '{"questions": []}'.encode("utf-16-le")
    with pytest.raises(DatasetFormatError, match="without a byte order mark"):
        parse_bytes(data + b"\x00\xd8", source="u.json")


def test_truncated_json_names_the_end(formats_parse: Callable[[str], Dataset]) -> None:
    with pytest.raises(DatasetFormatError) as caught:
        formats_parse("truncated.json")
    assert caught.value.source == "truncated.json"
    assert caught.value.line == 1
    assert "Unterminated string" in str(caught.value)


@pytest.mark.parametrize(
    ("data", "line", "column", "text"),
    [
        (b'{"questions": [}', 1, 16, "Expecting value"),
        (b'{\n  "questions": [\n    {"id": "1",}\n  ]\n}', 3, 16, "Expecting property name"),
        (b'{"questions": []} trailing', 1, 19, "Extra data"),
        (b'{"questions": [], "questions": 1', 1, 33, "Expecting ',' delimiter"),
    ],
)
def test_json_syntax_errors_carry_line_and_column(
    data: bytes, line: int, column: int, text: str
) -> None:
    with pytest.raises(DatasetFormatError) as caught:
        parse_bytes(data, source="s.json")
    assert (caught.value.line, caught.value.column) == (line, column)
    assert str(caught.value).startswith(f"s.json:{line}:{column}: invalid JSON: {text}")


def test_raw_control_characters_in_strings_are_accepted_with_a_warning() -> None:
    data = b'{"questions": [{"id": "1", "query": {"sparql": "SELECT\t?x\nWHERE {}"}}]}'
    dataset = parse_bytes(data, source="c.json")
    assert dataset.questions[0].sparql == "SELECT\t?x\nWHERE {}"
    assert any(
        "raw control characters" in w.message and "column 55" in w.message for w in dataset.warnings
    )


def test_lone_surrogates_are_refused_with_their_path() -> None:
    data = b'{"questions": [{"id": "1", "question": [{"language": "en", "string": "\\ud800"}]}]}'
    with pytest.raises(DatasetFormatError, match=r"\$\.questions\[0\]\.question\[0\]\.string"):
        parse_bytes(data, source="x.json")
    paired = b'{"questions": [{"id": "1", "question": [{"string": "\\ud83d\\ude00"}]}]}'
    assert parse_bytes(paired, source="x.json").questions[0].text("en") == "\U0001f600"


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nests too deeply"),
        (b'{"questions": [{"id": ' + b"9" * 5000 + b"}]}", "cannot be decoded"),
    ],
)
def test_pathological_json_is_a_format_error(data: bytes, text: str) -> None:
    with pytest.raises(DatasetFormatError, match=text):
        parse_bytes(data, source="p.json")


def test_deep_xml_is_a_format_error_or_parses() -> None:
    data = b"<dataset>" + b"<a>" * 50_000 + b"</a>" * 50_000 + b"</dataset>"
    try:
        dataset = parse_bytes(data, source="deep.xml")
    except DatasetFormatError:
        return
    assert dataset.questions == ()


def test_size_limit_is_checked_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b'{"questions": []}' + b" " * 100)
    with pytest.raises(DatasetTooLargeError, match="has 117 bytes, more than the limit of 50"):
        parse_file(path, max_bytes=50)
    assert parse_file(path, max_bytes=117).questions == ()


def test_unreadable_paths_are_format_errors(tmp_path: Path) -> None:
    with pytest.raises(DatasetFormatError, match="cannot read the file") as caught:
        parse_file(tmp_path / "missing.json")
    assert caught.value.source == str(tmp_path / "missing.json")
    with pytest.raises(DatasetFormatError, match="cannot read the file"):
        parse_file(tmp_path)


def test_parse_file_names_the_path_in_errors(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_bytes(b'{"questions": [{"id": null}]}')
    with pytest.raises(DatasetFormatError) as caught:
        parse_file(path)
    assert str(caught.value).startswith(f"{path}: at $.questions[0].id: expected a question id")

"""Turtle and TriG as readers take them: no prefixed name with a backslash escape."""

from __future__ import annotations

import pytest
from pyoxigraph import Literal, NamedNode, Quad, RdfFormat, parse, serialize

from server.linked_data.serialisation import plain_prefixed_names
from vocab.prefixes import PUBLISHED

GERBIL = PUBLISHED["gerbil"]
S = NamedNode("https://example.org/s")

# Literals a line-by-line reading could mistake: escapes, quotes, newlines, a prefixed name
# with an escape written inside a string, and strings that look like the start of a long one.
LITERALS = [
    "plain",
    'a "quoted" word',
    "back\\slash and gerbil:avg_millis\\/doc inside a string",
    "two\nlines\nof text",
    "ends with a backslash \\",
    '"""triple quotes"""',
    "tab\tand carriage\rreturn",
]


def _document() -> list[Quad]:
    quads = [
        Quad(S, NamedNode(GERBIL + "avg_millis/doc"), Literal("12.5")),
        Quad(S, NamedNode(GERBIL + "micro/F1"), NamedNode(GERBIL + "a/b")),
    ]
    quads += [
        Quad(S, NamedNode(f"https://example.org/p{n}"), Literal(t)) for n, t in enumerate(LITERALS)
    ]
    return quads


@pytest.mark.parametrize("rdf_format", [RdfFormat.TURTLE, RdfFormat.TRIG])
def test_escaped_names_are_written_in_full_and_literals_are_kept(rdf_format: RdfFormat) -> None:
    quads = _document()
    written = (serialize(quads, format=rdf_format, prefixes=PUBLISHED) or b"").decode()
    assert "gerbil:avg_millis\\/doc" in written  # the serialiser does escape it
    plain = plain_prefixed_names(written)
    # (inside the string literal the serialiser doubles the backslash: that text stays)
    assert "gerbil:avg_millis\\/doc" not in plain
    assert "gerbil:avg_millis\\\\/doc inside" in plain
    assert f"<{GERBIL}avg_millis/doc>" in plain
    assert f"<{GERBIL}a/b>" in plain
    # The same triples, whatever the text looks like.
    assert set(parse(plain.encode(), format=rdf_format)) == set(quads)


def test_a_long_string_spanning_lines_is_read_as_one_token() -> None:
    text = '<s> <p> """first line\ngerbil:x\\/y stays\n""" ; gerbil:avg_millis\\/doc "1" .\n'
    plain = plain_prefixed_names(text)
    assert "gerbil:x\\/y stays" in plain
    assert f"<{GERBIL}avg_millis/doc>" in plain


def test_text_without_backslashes_is_returned_unchanged() -> None:
    text = '<s> gerbil:name "x" .\n'
    assert plain_prefixed_names(text) is text

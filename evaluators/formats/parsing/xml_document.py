"""Decode and parse an XML benchmark file safely, keeping element line numbers.

Documents with a DOCTYPE (and so any entity declaration) are rejected before parsing, which
rules out entity-expansion bombs and external entities; ``defusedxml`` enforces the same during
parsing. One repair is made, for a slip in a published QALD-5 file: an ``<answers>`` element left
open when its parent closes is closed there, with a warning. Other malformed input becomes a
``DatasetFormatError`` with the line and column that expat reports.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Protocol

# Only the stdlib tree builder (no parser) is used; parsing goes through defusedxml.
from xml.etree.ElementTree import Element, TreeBuilder

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser, ParseError

from evaluators.formats.parsing.diagnostics import Diagnostics, quote
from evaluators.formats.parsing.source import decode_text, split_bom

# The prolog may hold an XML declaration, processing instructions, comments and blanks.
_PROLOG = re.compile(r"\A\s*(?:<\?.*?\?>\s*|<!--.*?-->\s*)*", re.DOTALL)
_ROOT_NAME = re.compile(r"<([A-Za-z_:][-\w.:]*)")
_DECLARED_ENCODING = re.compile(rb"\A\s*<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9._-]+)[\"']")
# Bounds the number of re-parses spent on repairing unclosed <answers> elements.
MAX_REPAIRS = 50
REPAIRABLE = "answers"


class _Expat(Protocol):
    CurrentLineNumber: int


@dataclass(frozen=True, slots=True)
class XmlDocument:
    """A parsed XML document with the start line of every element."""

    root: Element
    lines: dict[int, int]

    def line(self, element: Element) -> int | None:
        """Return the line where ``element`` starts (``None`` if unknown)."""
        return self.lines.get(id(element))


def local_name(tag: str) -> str:
    """Return a tag without its ``{namespace}`` part.

    >>> local_name("{http://example.org/}dataset")
    'dataset'
    """
    return tag.rsplit("}", 1)[-1] if tag.startswith("{") else tag


def decode_xml(data: bytes, source: str) -> str:
    """Decode an XML file: byte-order mark, else the declared encoding, else UTF-8.

    Args:
        data: the raw bytes.
        source: the file name, for messages.

    Returns:
        The document text.

    Raises:
        DatasetFormatError: unknown declared encoding, or bytes invalid in the encoding.
    """
    bom_encoding, body = split_bom(data)
    declared = None
    match = _DECLARED_ENCODING.match(body) if bom_encoding is None else None
    if match:
        name = match.group(1).decode("ascii")
        try:
            codec = codecs.lookup(name).name
        except LookupError:
            diag = Diagnostics(source)
            raise diag.error(
                f"the XML declaration names the unknown encoding {quote(name)}; expected UTF-8",
                line=1,
            ) from None
        # An ASCII-readable declaration cannot belong to a UTF-16/32 file without a mark.
        if not codec.startswith(("utf-16", "utf-32")):
            declared = codec
    return decode_text(data, source, encoding=declared)


def root_name(text: str, diag: Diagnostics) -> str | None:
    """Return the root element's name, looking only at the start of the text.

    Args:
        text: the decoded document.
        diag: the file's diagnostics.

    Returns:
        The name as written, or ``None`` when no start tag follows the prolog.

    Raises:
        DatasetFormatError: the document has a DOCTYPE declaration.
    """
    end = _reject_doctype(text, diag)
    match = _ROOT_NAME.match(text, end)
    return match.group(1) if match else None


def _reject_doctype(text: str, diag: Diagnostics) -> int:
    end = _PROLOG.match(text).end()  # type: ignore[union-attr]  # the pattern always matches
    if text[end : end + 9].upper() == "<!DOCTYPE":
        raise diag.error(
            "the XML document has a DOCTYPE declaration, which is refused (DTDs and entities "
            "enable entity-expansion attacks); expected QALD XML without a DOCTYPE",
            line=text.count("\n", 0, end) + 1,
        )
    return end


def load_xml(text: str, diag: Diagnostics) -> XmlDocument:
    """Parse XML text with DTDs forbidden, repairing unclosed ``<answers>`` elements.

    Args:
        text: the decoded document.
        diag: receives a warning per repair; names the file in errors.

    Returns:
        The parsed document.

    Raises:
        DatasetFormatError: the document has a DOCTYPE or is not well-formed XML.
    """
    _reject_doctype(text, diag)
    for _ in range(MAX_REPAIRS + 1):
        tracker = _Tracker()
        parser = DefusedXMLParser(target=tracker, forbid_dtd=True)
        tracker.expat = parser.parser
        try:
            parser.feed(text)
            root = parser.close()
        except ParseError as exc:
            line, column = exc.position
            repaired = _repair(text, tracker.stack, line, column)
            if repaired is None:
                reason = str(exc).split(": line", 1)[0]
                raise diag.error(
                    f"malformed XML ({reason}); expected a well-formed QALD XML document",
                    line=line,
                    column=column + 1,
                ) from exc
            text, at_column = repaired
            diag.warn(
                f"closed an unclosed <{REPAIRABLE}> element at line {line}, column {at_column}",
                key=("repair", line),
            )
            continue
        except DefusedXmlException as exc:
            raise diag.error(f"refused XML construct ({exc}); expected plain QALD XML") from exc
        return XmlDocument(root, tracker.lines)
    raise diag.error(
        f"more than {MAX_REPAIRS} unclosed <{REPAIRABLE}> elements; "
        "expected a well-formed QALD XML document"
    )


def _repair(text: str, stack: list[str], line: int, column: int) -> tuple[str, int] | None:
    """Insert a closing tag when an end tag of the parent meets an open ``<answers>``.

    Returns the repaired text and the 1-based column of the insertion, or ``None``.
    """
    if len(stack) < 2 or local_name(stack[-1]) != REPAIRABLE:
        return None
    line_start = 0
    for _ in range(line - 1):
        line_start = text.find("\n", line_start) + 1
        if line_start == 0:
            return None
    line_end = text.find("\n", line_start)
    line_text = text[line_start : line_end if line_end >= 0 else len(text)]
    encoded = line_text.encode("utf-8")
    closing = ("</" + stack[-2]).encode("utf-8")
    at = encoded.find(closing, max(0, column - 2))
    if at < 0 or at > column:
        return None
    prefix = len(encoded[:at].decode("utf-8", errors="replace"))
    offset = line_start + prefix
    return f"{text[:offset]}</{stack[-1]}>{text[offset:]}", prefix + 1


class _Tracker:
    """Parser target: builds the tree, tracks open elements and their start lines."""

    def __init__(self) -> None:
        self.builder = TreeBuilder()
        self.stack: list[str] = []
        self.lines: dict[int, int] = {}
        self.expat: _Expat | None = None

    def start(self, tag: str, attrib: dict[str, str]) -> Element:
        element = self.builder.start(tag, attrib)
        self.stack.append(tag)
        if self.expat is not None:
            self.lines[id(element)] = self.expat.CurrentLineNumber
        return element

    def end(self, tag: str) -> Element:
        self.stack.pop()
        return self.builder.end(tag)

    def data(self, data: str) -> None:
        self.builder.data(data)

    def close(self) -> Element:
        return self.builder.close()

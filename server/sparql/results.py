"""Query results as the engine writes them, cut to the row and byte caps.

Runs in the query workers (no Flask here). pyoxigraph's own serialisers write every result; no
row passes through Python on the way:

- **Solutions** (SELECT) are written first as SPARQL TSV into a ``Sink`` that stops the engine
  once it holds ``max_rows + 1`` rows or its byte budget. TSV puts one solution per line (its
  terms escape tabs and line breaks), so rows are counted and cut by counting line ends, which
  is exact by the format's definition. The kept lines are then read back by pyoxigraph's TSV
  parser and written in the asked format (JSON, XML, CSV; TSV as it is).
- **Triples** (CONSTRUCT, DESCRIBE) stream from the engine into the serialiser, at most
  ``max_rows`` of them, into a sink that stops at the byte cap; a cut result is written again
  from the triples it kept, fewer until it fits.

A truncated JSON or XML result carries a ``link`` in its head to the note explaining the cut
(both formats define one): it is inserted after the head the engine wrote, once the head is
verified to be byte for byte what the engine writes for these variables; otherwise the result
is written again by the small writers at the end of this module. The byte cap counts the bytes
of the body sent: a body never exceeds it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple
from xml.sax.saxutils import escape, quoteattr

from pyoxigraph import (
    BlankNode,
    Literal,
    NamedNode,
    QueryResultsFormat,
    QuerySolutions,
    RdfFormat,
    Triple,
    parse_query_results,
    serialize,
)

Value = NamedNode | BlankNode | Literal | Triple
Row = Sequence[Value | None]

_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
_RESULTS_NS = "http://www.w3.org/2005/sparql-results#"
TSV = QueryResultsFormat.TSV
# How much larger than the byte cap the intermediate TSV may grow: a term's TSV form is at most
# about twice its JSON or XML form (escaped characters), and larger still than its CSV form.
TSV_BUDGET = {QueryResultsFormat.CSV: 4}
_DEFAULT_BUDGET = 2


class Written(NamedTuple):
    """A serialised result: its bytes, the rows (or triples) in it, and which cap cut it."""

    body: bytes
    rows: int
    cut: str = ""  # "", "rows" or "bytes"


class _Full(Exception):
    """Raised by a ``Sink`` to stop the engine's serialiser."""


class Sink:
    r"""A binary writer that stops the serialiser at a byte budget or a number of line ends.

    >>> sink = Sink(max_lines=2)
    >>> sink.write(b"?x\n"), sink.full
    (3, '')
    >>> try:
    ...     sink.write(b"<a>\n<b>\n")
    ... except Exception as exc:
    ...     print(type(exc).__name__, sink.full, sink.lines)
    _Full rows 3
    """

    def __init__(self, max_bytes: int | None = None, max_lines: int | None = None) -> None:
        self._parts: list[bytes] = []
        self.size = 0
        self.lines = 0
        self._max_bytes = max_bytes
        self._max_lines = max_lines
        self.full = ""

    def write(self, data: bytes) -> int:
        """Keep ``data``; raise ``_Full`` once a limit is passed (what came is still kept).

        Once full, writes are dropped: the engine's buffered writer hands its buffer over again
        when it is dropped after the error.
        """
        if self.full:
            return len(data)
        self._parts.append(bytes(data))
        self.size += len(data)
        if self._max_lines is not None:
            self.lines += data.count(b"\n")
            if self.lines >= self._max_lines:
                self.full = "rows"
                raise _Full
        if self._max_bytes is not None and self.size > self._max_bytes:
            self.full = "bytes"
            raise _Full
        return len(data)

    def flush(self) -> None:
        """Nothing to flush: the parts stay in memory."""

    def value(self) -> bytes:
        """Return everything written."""
        return b"".join(self._parts)


def _lines(tsv: bytes, keep: int) -> bytes:
    """Return the header and the first ``keep`` rows of a TSV result."""
    parts = tsv.split(b"\n", keep + 1)
    return b"\n".join(parts[: keep + 1]) + b"\n"


def _from_tsv(tsv: bytes, fmt: QueryResultsFormat) -> bytes:
    if fmt == TSV:
        return tsv
    solutions = parse_query_results(tsv, TSV)
    assert isinstance(solutions, QuerySolutions)
    return solutions.serialize(format=fmt) or b""


def capped_solutions(
    solutions: QuerySolutions,
    fmt: QueryResultsFormat,
    max_rows: int,
    max_bytes: int = 0,
    link: str | None = None,
) -> Written:
    """Write at most ``max_rows`` solutions in ``fmt``, in at most ``max_bytes`` (0: no cap).

    ``link`` goes into the head of a truncated JSON or XML result.
    """
    budget = max_bytes * TSV_BUDGET.get(fmt, _DEFAULT_BUDGET) if max_bytes else None
    sink = Sink(budget, max_lines=max_rows + 2)  # the header, and one row past the cap
    with contextlib.suppress(_Full):
        solutions.serialize(sink, TSV)  # type: ignore[arg-type]
    tsv = sink.value()
    tsv = tsv[: tsv.rfind(b"\n") + 1]  # complete lines only
    if not tsv:  # not even the header fitted
        tsv = "\t".join(f"?{v.value}" for v in solutions.variables).encode("utf-8") + b"\n"
    rows = max(0, tsv.count(b"\n") - 1)
    cut = "bytes" if sink.full == "bytes" else ""
    if rows > max_rows:
        tsv, rows, cut = _lines(tsv, max_rows), max_rows, "rows"
    body = _from_tsv(tsv, fmt)
    if not cut and not (max_bytes and len(body) > max_bytes):
        return Written(body, rows, cut)
    variables = [v.value for v in solutions.variables]
    if cut:
        body = with_link(body, fmt, variables, link)
    while max_bytes and len(body) > max_bytes and rows:
        rows = min(rows - 1, rows * max_bytes // len(body))
        tsv, cut = _lines(tsv, rows), "bytes"
        body = with_link(_from_tsv(tsv, fmt), fmt, variables, link)
    return Written(body, rows, cut)


def capped_triples(
    triples: Iterable[Triple],
    fmt: RdfFormat,
    max_rows: int,
    max_bytes: int = 0,
    prefixes: dict[str, str] | None = None,
) -> Written:
    """Write at most ``max_rows`` triples in ``fmt``, in at most ``max_bytes`` (0: no cap)."""
    kept: list[Triple] = []
    more = [False]

    def feed() -> Iterator[Triple]:
        for triple in triples:
            if len(kept) == max_rows:
                more[0] = True
                return
            kept.append(triple)
            yield triple

    sink = Sink(max_bytes or None)
    with contextlib.suppress(_Full):
        serialize(feed(), sink, fmt, prefixes=prefixes)  # type: ignore[arg-type]
    if not sink.full:
        return Written(sink.value(), len(kept), "rows" if more[0] else "")
    rows, size = len(kept), sink.size
    while rows:
        rows = min(rows - 1, rows * max_bytes // size)
        body = serialize(kept[:rows], format=fmt, prefixes=prefixes) or b""
        if len(body) <= max_bytes:
            return Written(body, rows, "bytes")
        size = len(body)
    return Written(serialize([], format=fmt, prefixes=prefixes) or b"", 0, "bytes")


def _engine_head(fmt: QueryResultsFormat, variables: Sequence[str]) -> bytes:
    """Return the head pyoxigraph writes for ``variables`` in JSON or XML (b"": other formats)."""
    if fmt == QueryResultsFormat.JSON:
        names = json.dumps(list(variables), ensure_ascii=False, separators=(",", ":"))
        return b'{"head":{"vars":' + names.encode("utf-8") + b"}"
    if fmt == QueryResultsFormat.XML:
        names = "".join(f'<variable name="{name}"/>' for name in variables)
        return f'<?xml version="1.0"?><sparql xmlns="{_RESULTS_NS}"><head>{names}</head>'.encode()
    return b""


def with_link(
    body: bytes, fmt: QueryResultsFormat, variables: Sequence[str], link: str | None
) -> bytes:
    """Return a JSON or XML result with ``link`` in its head (other formats: unchanged).

    >>> with_link(b'{"head":{"vars":["x"]},"results":{"bindings":[]}}',
    ...           QueryResultsFormat.JSON, ["x"], "http://e/#cut")
    b'{"head":{"vars":["x"],"link":["http://e/#cut"]},"results":{"bindings":[]}}'
    """
    head = _engine_head(fmt, variables)
    if not link or not head:
        return body
    if body.startswith(head):
        if fmt == QueryResultsFormat.JSON:
            extra = b',"link":' + json.dumps([link]).encode("utf-8") + b"}"
        else:
            extra = f"<link href={quoteattr(link)}/></head>".encode()
        end = len(head) - (1 if fmt == QueryResultsFormat.JSON else len(b"</head>"))
        return body[:end] + extra + body[len(head) :]
    # Not the head this module knows (another pyoxigraph release): write the result here.
    parsed = parse_query_results(body, fmt)
    assert isinstance(parsed, QuerySolutions)
    rows = [[solution[name] for name in variables] for solution in parsed]
    return write_solutions(variables, rows, fmt, link)


# ---------------------------------------------------------------- writers of last resort


def _json_term(term: Value) -> dict[str, Any]:
    # JSON values are built as plain dicts here only to hand them to json.dumps.
    if isinstance(term, NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, Triple):
        return {
            "type": "triple",
            "value": {
                "subject": _json_term(term.subject),
                "predicate": _json_term(term.predicate),
                "object": _json_term(term.object),
            },
        }
    out: dict[str, Any] = {"type": "literal", "value": term.value}
    if term.language:
        out["xml:lang"] = term.language
    elif term.datatype.value != _XSD_STRING:
        out["datatype"] = term.datatype.value
    return out


def _json(variables: Sequence[str], rows: Sequence[Row], link: str | None) -> bytes:
    head: dict[str, Any] = {"vars": list(variables)}
    if link:
        head["link"] = [link]
    bindings = [
        {name: _json_term(value) for name, value in zip(variables, row, strict=True) if value}
        for row in rows
    ]
    document = {"head": head, "results": {"bindings": bindings}}
    return json.dumps(document, ensure_ascii=False).encode("utf-8")


def _text(value: str) -> str:
    # XML parsers turn a raw CR into LF (XML 1.0, section 2.11) and some drop whitespace-only
    # text; character references keep every whitespace character as it was.
    escaped = escape(value, {"\r": "&#13;", "\n": "&#10;", "\t": "&#9;"})
    # Readers may also trim leading and trailing spaces (pyoxigraph's does); references keep them.
    core = escaped.strip(" ")
    if core == escaped:
        return escaped
    lead = len(escaped) - len(escaped.lstrip(" "))
    trail = len(escaped) - len(escaped.rstrip(" ")) if core else 0
    return "&#32;" * lead + core + "&#32;" * trail


def _xml_term(term: Value) -> str:
    if isinstance(term, NamedNode):
        return f"<uri>{_text(term.value)}</uri>"
    if isinstance(term, BlankNode):
        return f"<bnode>{_text(term.value)}</bnode>"
    if isinstance(term, Triple):
        parts = "".join(
            f"<{part}>{_xml_term(getattr(term, part))}</{part}>"
            for part in ("subject", "predicate", "object")
        )
        return f"<triple>{parts}</triple>"
    attributes = ""
    if term.language:
        attributes = f" xml:lang={quoteattr(term.language)}"
    elif term.datatype.value != _XSD_STRING:
        attributes = f" datatype={quoteattr(term.datatype.value)}"
    return f"<literal{attributes}>{_text(term.value)}</literal>"


def _xml(variables: Sequence[str], rows: Sequence[Row], link: str | None) -> bytes:
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n', f'<sparql xmlns="{_RESULTS_NS}"><head>']
    out += [f"<variable name={quoteattr(name)}/>" for name in variables]
    if link:
        out.append(f"<link href={quoteattr(link)}/>")
    out.append("</head><results>")
    for row in rows:
        out.append("<result>")
        for name, value in zip(variables, row, strict=True):
            if value is not None:
                out.append(f"<binding name={quoteattr(name)}>{_xml_term(value)}</binding>")
        out.append("</result>")
    out.append("</results></sparql>\n")
    return "".join(out).encode("utf-8")


def write_solutions(
    variables: Sequence[str],
    rows: Sequence[Row],
    results_format: QueryResultsFormat,
    link: str | None = None,
) -> bytes:
    """Serialise SELECT solutions as JSON or XML with a ``link`` in the head (Python writers).

    Used only when the engine's head is not the one ``with_link`` expects.

    Raises:
        ValueError: for a results format other than JSON and XML.
    """
    if results_format == QueryResultsFormat.JSON:
        return _json(variables, rows, link)
    if results_format == QueryResultsFormat.XML:
        return _xml(variables, rows, link)
    raise ValueError(f"Unsupported SPARQL results format {results_format!r}")

"""Write SPARQL SELECT results (JSON, XML, CSV, TSV) for a bounded list of rows.

pyoxigraph serialises a whole ``QuerySolutions`` iterator and cannot stop after N rows, so the
endpoint collects at most ``max_result_rows`` solutions and writes them here. JSON and XML carry
an optional ``link`` in their head (both formats define one) that points at the note explaining a
truncation. Output is checked against pyoxigraph's own parser in the tests. No Flask here: the
query workers import this module.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from pyoxigraph import BlankNode, Literal, NamedNode, QueryResultsFormat, Triple

Value = NamedNode | BlankNode | Literal | Triple
Row = Sequence[Value | None]

_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
_RESULTS_NS = "http://www.w3.org/2005/sparql-results#"


# Bytes a term costs beyond its strings in the most verbose writer (XML/JSON markup).
TERM_OVERHEAD = 64


def row_size(row: Row) -> int:
    """Return an estimate of the bytes one row (or triple) adds to a serialised result.

    Used to stop collecting before the byte cap is reached; the cap itself is checked on the
    real serialisation.

    >>> row_size([NamedNode("http://e/x"), None])
    74
    """
    size = 0
    for term in row:
        if term is None:
            continue
        if isinstance(term, Triple):
            size += len(str(term).encode("utf-8")) + TERM_OVERHEAD
        elif isinstance(term, Literal):
            extra = term.language or term.datatype.value
            size += len(term.value.encode("utf-8")) + len(extra) + TERM_OVERHEAD
        else:
            size += len(term.value.encode("utf-8")) + TERM_OVERHEAD
    return size


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


def _csv_value(term: Value | None) -> str:
    if term is None:
        return ""
    if isinstance(term, BlankNode):
        return f"_:{term.value}"
    if isinstance(term, Triple):
        return str(term)
    return term.value


def _csv(variables: Sequence[str], rows: Sequence[Row]) -> bytes:
    # SPARQL 1.1 CSV results: RFC 4180 quoting, CRLF line ends, plain lexical values.
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(variables)
    for row in rows:
        writer.writerow([_csv_value(v) for v in row])
    return buffer.getvalue().encode("utf-8")


def _tsv(variables: Sequence[str], rows: Sequence[Row]) -> bytes:
    # SPARQL 1.1 TSV results: terms in their N-Triples form (pyoxigraph's str() escapes tabs).
    lines = ["\t".join(f"?{v}" for v in variables)]
    lines.extend("\t".join("" if v is None else str(v) for v in row) for row in rows)
    return ("\n".join(lines) + "\n").encode("utf-8")


def write_solutions(
    variables: Sequence[str],
    rows: Sequence[Row],
    results_format: QueryResultsFormat,
    link: str | None = None,
) -> bytes:
    """Serialise SELECT solutions.

    Args:
        variables: the projected variable names, in order.
        rows: one value (or ``None`` when unbound) per variable, per solution.
        results_format: JSON, XML, CSV or TSV.
        link: an IRI to put in the ``head`` ``link`` of JSON and XML results (truncation note).

    Returns:
        The serialised results.

    Raises:
        ValueError: for a results format this module does not write.
    """
    if results_format == QueryResultsFormat.JSON:
        return _json(variables, rows, link)
    if results_format == QueryResultsFormat.XML:
        return _xml(variables, rows, link)
    if results_format == QueryResultsFormat.CSV:
        return _csv(variables, rows)
    if results_format == QueryResultsFormat.TSV:
        return _tsv(variables, rows)
    raise ValueError(f"Unsupported SPARQL results format {results_format!r}")

"""The one table mapping media types and file extensions to pyoxigraph formats, and the check
every RDF/XML input passes before a parser sees it (``xml_checked``).

**Entity declarations in RDF/XML are bounded.** Oxigraph's RDF/XML parser expands the entities
an XML document declares as it reads their declarations: a 1.6 KB file of nested declarations
(never used) ran 46 s and took 13.9 GB (issue 41). Ontology editors declare entities to
abbreviate namespaces (``<!ENTITY xsd "http://www.w3.org/2001/XMLSchema#">``), so they are not
refused outright: the prolog is read with expat up to the root element (never further, so the
check costs the prolog) and a declaration is refused when it could grow on expansion or reach
elsewhere: a parameter or external entity, a value that refers to another entity (``&`` or
``%``), more than ``MAX_ENTITY_BYTES`` of values in all, or a prolog longer than
``MAX_PROLOG_BYTES``. What is left expands linearly, as the text that uses it.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from xml.parsers import expat

from pyoxigraph import Quad, QueryResultsFormat, RdfFormat, serialize

from store.errors import RdfSyntaxError, UnsupportedFormatError

# Bytes of an XML prolog (declarations before the root element), and of entity values in all.
MAX_PROLOG_BYTES = 1 << 20
MAX_ENTITY_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class RdfSerialization:
    """One RDF serialisation we read and write."""

    name: str
    media_type: str
    extension: str
    rdf_format: RdfFormat
    is_dataset: bool


RDF_SERIALIZATIONS: tuple[RdfSerialization, ...] = (
    RdfSerialization("turtle", "text/turtle", "ttl", RdfFormat.TURTLE, False),
    RdfSerialization("n-triples", "application/n-triples", "nt", RdfFormat.N_TRIPLES, False),
    RdfSerialization("rdf-xml", "application/rdf+xml", "rdf", RdfFormat.RDF_XML, False),
    RdfSerialization("n-quads", "application/n-quads", "nq", RdfFormat.N_QUADS, True),
    RdfSerialization("trig", "application/trig", "trig", RdfFormat.TRIG, True),
    RdfSerialization("json-ld", "application/ld+json", "jsonld", RdfFormat.JSON_LD, True),
)

RESULTS_FORMATS: dict[str, QueryResultsFormat] = {
    "application/sparql-results+json": QueryResultsFormat.JSON,
    "application/sparql-results+xml": QueryResultsFormat.XML,
    "text/csv": QueryResultsFormat.CSV,
    "text/tab-separated-values": QueryResultsFormat.TSV,
}

# Media types that name the same serialisation as one in the table above.
_MEDIA_ALIASES = {
    "application/x-turtle": "text/turtle",
    "text/plain": "application/n-triples",
    "application/xml": "application/rdf+xml",
    "text/x-nquads": "application/n-quads",
}


def rdf_serialization(media_type_or_extension: str) -> RdfSerialization:
    """Return the serialisation for a media type (``text/turtle``) or extension (``ttl``).

    Raises:
        UnsupportedFormatError: if nothing matches; the message lists what is supported.
    """
    key = media_type_or_extension.strip().lower().lstrip(".")
    key = key.split(";")[0].strip()
    key = _MEDIA_ALIASES.get(key, key)
    for ser in RDF_SERIALIZATIONS:
        if key in (ser.media_type, ser.extension, ser.name):
            return ser
    known = ", ".join(f"{s.media_type} (.{s.extension})" for s in RDF_SERIALIZATIONS)
    raise UnsupportedFormatError(
        f"Unsupported RDF format {media_type_or_extension!r}; supported: {known}"
    )


def results_format(media_type: str) -> QueryResultsFormat:
    """Return the SPARQL results format for ``media_type``.

    Raises:
        UnsupportedFormatError: if the media type is not a SPARQL results format we write.
    """
    key = media_type.split(";")[0].strip().lower()
    if key == "application/json":
        key = "application/sparql-results+json"
    try:
        return RESULTS_FORMATS[key]
    except KeyError:
        known = ", ".join(RESULTS_FORMATS)
        raise UnsupportedFormatError(
            f"Unsupported SPARQL results format {media_type!r}; supported: {known}"
        ) from None


def write_quads(quads: Sequence[Quad], output: IO[bytes] | Path, rdf_format: RdfFormat) -> int:
    """Serialise ``quads`` to a file path or binary stream and return how many were written."""
    if isinstance(output, Path):
        with output.open("wb") as fh:
            serialize(quads, fh, rdf_format)
    else:
        serialize(quads, output, rdf_format)
    return len(quads)


class _RootReached(Exception):
    """The prolog is over: the root element starts."""


def _declaration_error(detail: str) -> RdfSyntaxError:
    return RdfSyntaxError(
        f"RDF/XML entity declarations refused: {detail} (entities that could grow on "
        "expansion or reach other files are not read; see store/formats.py)"
    )


def _read_prolog(read: Callable[[int], bytes]) -> bytes:
    """Read an XML document's prolog with expat; return the bytes read.

    Raises:
        RdfSyntaxError: a declaration that could grow on expansion, or a prolog too long.
    """
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    declared = 0

    def entity(name: str, parameter: bool, value: str | None, *_rest: object) -> None:
        nonlocal declared
        if parameter:
            raise _declaration_error(f"parameter entity %{name}")
        if value is None:
            raise _declaration_error(f"external entity &{name};")
        if "&" in value or "%" in value:
            raise _declaration_error(f"entity &{name}; refers to another entity")
        declared += len(value)
        if declared > MAX_ENTITY_BYTES:
            raise _declaration_error(f"more than {MAX_ENTITY_BYTES} bytes of entity values")

    def root(*_args: object) -> None:
        raise _RootReached

    parser.EntityDeclHandler = entity
    parser.StartElementHandler = root
    seen = bytearray()
    while True:
        chunk = read(1 << 16)
        seen += chunk
        try:
            parser.Parse(chunk, not chunk)
        except _RootReached:
            return bytes(seen)
        except expat.ExpatError:
            return bytes(seen)  # not well-formed: the RDF parser says where
        if not chunk:
            return bytes(seen)
        if len(seen) > MAX_PROLOG_BYTES:
            raise _declaration_error(f"no root element within {MAX_PROLOG_BYTES} bytes")


class _Replayed(io.RawIOBase):
    """A stream whose first bytes were read already: those again, then the rest."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self._head = memoryview(head)
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._head:
            size = min(len(buffer), len(self._head))
            buffer[:size] = self._head[:size]
            self._head = self._head[size:]
            return size
        data = self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def xml_checked(source: bytes | Path | IO[bytes]) -> bytes | Path | IO[bytes]:
    """Check an RDF/XML input's entity declarations (module docstring); return the input to
    parse (a stream comes back as one that replays what the check read).

    Raises:
        RdfSyntaxError: a declaration that could grow on expansion, or a prolog too long.
    """
    if isinstance(source, bytes):
        _read_prolog(io.BytesIO(source).read)
        return source
    if isinstance(source, Path):
        with source.open("rb") as stream:
            _read_prolog(stream.read)
        return source
    head = _read_prolog(source.read)
    return io.BufferedReader(_Replayed(head, source), 1 << 20)

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
from itertools import pairwise
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
    found = RESULTS_FORMATS.get(media_type)  # the common case: one of the table's own keys
    if found is not None:
        return found
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


# Bytes read at a time when a file is scanned, or read in parts for the bulk loader.
_CHUNK = 8 << 20
# What a piece of an N-Triples file must not hold for the pieces to load as one document: a
# blank node label (``_:``; a label names one node within one parse, and the bulk loader
# names each parse's nodes afresh) and the opening of a quoted triple (RDF 1.2 syntax that
# may stand for a node of its own).
_ONE_DOCUMENT_ONLY = (b"_:", b"<<")


def line_parts(
    path: Path, parts: int, min_bytes: int, max_bytes: int | None = None
) -> list[tuple[int, int]]:
    """Return byte ranges (start, end) that cut the N-Triples file ``path`` into ``parts``
    pieces (more when a piece would pass ``max_bytes``; fewer when it would fall under
    ``min_bytes``), each ending at a line end; one range (the whole file) when it should be
    read in one piece.

    An N-Triples statement never spans lines (a literal writes its line breaks escaped, an IRI
    holds none, a comment ends at the line's end), so every piece is a document of whole
    statements, and loading the pieces gives the triples of the file -- unless a blank node
    is written: each parse names its blank nodes anew (``_:b`` in two pieces would become two
    nodes). A file holding the bytes ``_:`` or ``<<`` anywhere (in a literal too: the check
    only ever keeps a file whole) is read in one piece.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d) / "a.nt"
    ...     _ = p.write_bytes(b"<a:x> <a:p> <a:y> .\\n" * 10)
    ...     cut = line_parts(p, 2, 50)
    ...     _ = p.write_bytes(b"_:x <a:p> <a:y> .\\n" * 10)
    ...     cut, line_parts(p, 2, 50)
    ([(0, 100), (100, 200)], [(0, 180)])
    """
    size = path.stat().st_size
    if max_bytes:
        parts = max(parts, -(-size // max_bytes))
    count = min(parts, size // max(min_bytes, 1))
    if count < 2 or _holds(path, _ONE_DOCUMENT_ONLY):
        return [(0, size)]
    bounds = [0]
    with path.open("rb") as stream:
        for index in range(1, count):
            stream.seek(max(size * index // count - 1, bounds[-1]))
            stream.readline()  # to the end of the line holding that byte
            bounds.append(stream.tell())
    bounds.append(size)
    return [(start, end) for start, end in pairwise(bounds) if end > start]


def _holds(path: Path, needles: Sequence[bytes]) -> bool:
    """Return whether the file ``path`` holds any of ``needles`` (read once, a chunk at a
    time; a needle across two chunks is found too).

    The bytes are compared as numpy arrays, a needle's bytes at once: ``bytes.find`` of a
    two-byte needle ran at about 1 GB/s (0.64 s for both needles over the 324 MB of 2.6 M
    triples, before ``kb load`` could start its loaders); this is about twice as fast.
    """
    import numpy as np  # here: only a file large enough to be cut pays for the import

    keep = max(len(needle) for needle in needles) - 1  # bytes of a chunk the next one sees
    buffer = bytearray(keep + _CHUNK)
    found = np.empty(len(buffer), dtype=np.bool_)
    match = np.empty(len(buffer), dtype=np.bool_)
    kept = 0
    with path.open("rb") as stream:
        while read := stream.readinto(memoryview(buffer)[kept:]):
            size = kept + read
            data = np.frombuffer(buffer, dtype=np.uint8, count=size)
            for needle in needles:
                width = size - len(needle) + 1
                if width <= 0:
                    continue
                np.equal(data[:width], needle[0], out=found[:width])
                for k in range(1, len(needle)):
                    np.equal(data[k : k + width], needle[k], out=match[:width])
                    np.logical_and(found[:width], match[:width], out=found[:width])
                if found[:width].any():
                    return True
            kept = min(keep, size)
            buffer[:kept] = buffer[size - kept : size]
    return False


def lines_before(path: Path, offset: int) -> int:
    """Return how many lines of the file ``path`` end before byte ``offset``."""
    lines = 0
    with path.open("rb") as stream:
        while offset > 0 and (chunk := stream.read(min(_CHUNK, offset))):
            lines += chunk.count(b"\n")
            offset -= len(chunk)
    return lines


class PartStopped(OSError):
    """Reading a part was stopped (another part of the same load failed)."""


class FileRange(io.RawIOBase):
    """Bytes ``start`` to ``end`` of the file ``path`` (to its end when ``end`` is None: a
    pipe, say): each read is reported to ``progress`` (its size), and raises ``PartStopped``
    once ``stop`` is set."""

    def __init__(
        self,
        path: Path,
        start: int,
        end: int | None,
        *,
        progress: Callable[[int], None] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> None:
        self._file = path.open("rb", buffering=0)
        if start:
            self._file.seek(start)
        self._left = end - start if end is not None else None
        self._progress = progress
        self._stop = stop

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._stop is not None and self._stop():
            raise PartStopped("stopped: another part of this load failed")
        size = len(buffer) if self._left is None else min(len(buffer), self._left)
        if size <= 0:
            return 0
        read = self._file.readinto(memoryview(buffer)[:size]) or 0
        if self._left is not None:
            self._left -= read
        if read and self._progress is not None:
            self._progress(read)
        return read

    def close(self) -> None:
        self._file.close()
        super().close()

"""The one table mapping media types and file extensions to pyoxigraph formats."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pyoxigraph import Quad, QueryResultsFormat, RdfFormat, serialize

from store.errors import UnsupportedFormatError


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

"""The forms a resource may take (HTML, the RDF serialisations, SPARQL results, CSV, ...).

A table of plain values, free of Flask, so the query workers serialise documents with it too;
``server.web.negotiation`` chooses among them for a request.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyoxigraph import RdfFormat


@dataclass(frozen=True, slots=True)
class Representation:
    """One form of a resource.

    ``key`` is unique among the forms one resource offers, ``extension`` its URL suffix,
    ``aliases`` other media types that name it in ``Accept``, and ``names`` other values of
    ``?format=`` that name it (its key, extension and media types always do).
    """

    key: str
    media_type: str
    extension: str
    label: str
    rdf_format: RdfFormat | None = None
    aliases: tuple[str, ...] = ()
    names: tuple[str, ...] = ()

    @property
    def media_types(self) -> tuple[str, ...]:
        """Return the media type and its aliases."""
        return (self.media_type, *self.aliases)

    def is_named(self, name: str) -> bool:
        """Return whether ``?format=name`` (or an extension) names this form."""
        key = name.strip().lower()
        return key in (self.key, self.extension, *self.names, *self.media_types)


HTML = Representation("html", "text/html", "html", "HTML", aliases=("application/xhtml+xml",))
TURTLE = Representation(
    "turtle",
    "text/turtle",
    "ttl",
    "Turtle",
    RdfFormat.TURTLE,
    aliases=("application/x-turtle", "application/turtle", "text/n3", "text/rdf+n3"),
    names=("n3",),
)
JSONLD = Representation(
    "jsonld",
    "application/ld+json",
    "jsonld",
    "JSON-LD",
    RdfFormat.JSON_LD,
    aliases=("application/json", "application/x-json+ld"),
    names=("json", "json-ld"),
)
NTRIPLES = Representation(
    "ntriples",
    "application/n-triples",
    "nt",
    "N-Triples",
    RdfFormat.N_TRIPLES,
    aliases=("text/plain",),
    names=("n-triples",),
)
RDFXML = Representation(
    "rdfxml",
    "application/rdf+xml",
    "rdf",
    "RDF/XML",
    RdfFormat.RDF_XML,
    aliases=("application/xml", "text/xml"),
    names=("xml", "rdf+xml", "owl"),
)
NQUADS = Representation(
    "nquads",
    "application/n-quads",
    "nq",
    "N-Quads",
    RdfFormat.N_QUADS,
    aliases=("text/x-nquads",),
    names=("n-quads",),
)
TRIG = Representation(
    "trig", "application/trig", "trig", "TriG", RdfFormat.TRIG, aliases=("application/x-trig",)
)
# SPARQL results (SELECT and ASK).
RESULTS_JSON = Representation(
    "json",
    "application/sparql-results+json",
    "srj",
    "SPARQL JSON",
    aliases=("application/json", "text/javascript", "application/javascript"),
)
RESULTS_XML = Representation(
    "xml",
    "application/sparql-results+xml",
    "srx",
    "SPARQL XML",
    aliases=("application/xml", "text/xml"),
)
CSV = Representation("csv", "text/csv", "csv", "CSV")
# Reports as plain JSON (not JSON-LD): rankings and significance for scripts.
JSON_REPORT = Representation("report-json", "application/json", "json", "JSON")
TSV = Representation("tsv", "text/tab-separated-values", "tsv", "TSV", aliases=("text/plain",))

# Linked-data documents: Turtle first (the */* default), then HTML and the other RDF forms.
# Chosen through Accept, N-Quads and TriG hold the document's triples in the default graph (a
# document is a graph); the .nq and .trig document URLs keep the graph each triple is in.
DOCUMENT_FORMATS: tuple[Representation, ...] = (
    TURTLE,
    HTML,
    JSONLD,
    NTRIPLES,
    RDFXML,
    NQUADS,
    TRIG,
)
# Pages that are mainly for people (home, lists, vocabulary): HTML first.
PAGE_FORMATS: tuple[Representation, ...] = (HTML, TURTLE, JSONLD, NTRIPLES, RDFXML, NQUADS, TRIG)
# RDF only (descriptions without a page, such as VoID).
RDF_FORMATS: tuple[Representation, ...] = (TURTLE, JSONLD, NTRIPLES, RDFXML, NQUADS, TRIG)
# /sparql: SELECT and ASK results, and CONSTRUCT and DESCRIBE graphs; HTML for browsers.
RESULT_FORMATS: tuple[Representation, ...] = (RESULTS_JSON, RESULTS_XML, CSV, TSV, HTML)
GRAPH_FORMATS: tuple[Representation, ...] = (
    TURTLE,
    NTRIPLES,
    RDFXML,
    JSONLD,
    NQUADS,
    TRIG,
    HTML,
)
# Forms that can hold named graphs.
QUAD_FORMATS = frozenset({NQUADS, TRIG})
# Every form this server knows: a ?format= value none of them answers to is a typo (406).
KNOWN: tuple[Representation, ...] = (*DOCUMENT_FORMATS, RESULTS_JSON, RESULTS_XML, CSV, TSV)

# Extensions read off resource URLs (CSV for pages that offer a table; others answer 404).
EXTENSIONS = frozenset(r.extension for r in (*DOCUMENT_FORMATS, CSV))

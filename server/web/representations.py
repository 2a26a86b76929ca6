"""The forms a resource may take (HTML, the RDF serialisations, SPARQL results, CSV, ...), and
how an ``Accept`` header (RFC 9110, section 12.5.1) ranks media types.

The forms are a table of plain values and the Accept parser a pure function, both free of
Flask, so the query workers serialise documents with them too; ``server.web.negotiation``
chooses among the forms for a request, and ``preferred`` answers the smaller question "which of
these media types does the client want most" (HTML or a problem document, a page or JSON).

Media ranges match on type and subtype only; every parameter but ``q`` is ignored
(``application/json; charset=utf-8`` is plain JSON); the most specific range that matches gives a
form its quality. This is the one Accept parser of the server: Werkzeug's compares parameters
too, so ``application/json; charset=utf-8`` matched no JSON offer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyoxigraph import RdfFormat

# Accept headers longer than this are read up to this length (hostile input stays bounded).
MAX_ACCEPT_CHARS = 4096


@dataclass(frozen=True, slots=True)
class MediaRange:
    """One entry of an ``Accept`` header: ``type/subtype`` (either may be ``*``) and its ``q``."""

    type: str
    subtype: str
    q: float

    def specificity(self, media_type: str) -> int:
        """Return 2 for an exact match, 1 for ``type/*``, 0 for ``*/*``, -1 for no match."""
        kind, _, sub = media_type.partition("/")
        if self.type == "*":
            return 0
        if self.type != kind:
            return -1
        if self.subtype == "*":
            return 1
        return 2 if self.subtype == sub else -1


def _split(header: str, separator: str) -> list[str]:
    """Split on ``separator`` outside double-quoted strings (RFC 9110 quoted-string)."""
    parts: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    for char in header:
        if escaped:
            escaped = False
        elif char == "\\" and quoted:
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == separator and not quoted:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def _quality(parameters: list[str]) -> float | None:
    q = 1.0
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "q":
            try:
                q = float(value.strip())
            except ValueError:
                return None
            if not 0.0 <= q <= 1.0:
                return None
    return q


def parse_accept(header: str) -> list[MediaRange]:
    """Return the media ranges of an ``Accept`` header; malformed entries are skipped.

    >>> parse_accept('text/turtle; charset=utf-8, application/ld+json;profile="a,b";q=0.5')
    [MediaRange(type='text', subtype='turtle', q=1.0), MediaRange(type='application', \
subtype='ld+json', q=0.5)]
    """
    ranges = []
    for entry in _split(header[:MAX_ACCEPT_CHARS], ","):
        media, *parameters = _split(entry, ";")
        kind, slash, sub = media.strip().lower().partition("/")
        q = _quality(parameters)
        if not slash or not kind or not sub or q is None or (kind == "*" and sub != "*"):
            continue
        ranges.append(MediaRange(kind, sub, q))
    return ranges


def media_quality(media_types: Sequence[str], ranges: Sequence[MediaRange]) -> tuple[float, int]:
    """Return ``(q, specificity)`` of a form named by ``media_types`` under ``ranges``.

    ``(0, -1)`` if nothing matches.

    The most specific range matching any of the form's media types decides (the highest ``q``
    among equally specific ones): ``text/turtle;q=0, */*`` refuses Turtle, whatever its aliases.
    """
    found: tuple[int, float] = (-1, 0.0)
    for media_type in media_types:
        for media_range in ranges:
            specificity = media_range.specificity(media_type)
            if specificity >= 0 and (specificity, media_range.q) > found:
                found = (specificity, media_range.q)
    return found[1], found[0]


def preferred(candidates: Sequence[Sequence[str]], header: str) -> int | None:
    """Return the index of the candidate the ``Accept`` header prefers (None: none acceptable).

    Each candidate is a form's media types (its own and its aliases); equal qualities go to the
    more specific range, then to the earlier candidate. Without a header the first candidate
    wins.

    >>> preferred([["text/html"], ["application/json"]], "application/json; charset=utf-8")
    1
    >>> preferred([["text/html"], ["application/json"]], "text/html;q=0.9, */*;q=0.8")
    0
    >>> preferred([["text/html"]], "image/png") is None
    True
    """
    ranges = parse_accept(header)
    if not ranges:
        return 0 if candidates else None
    scored = [(media_quality(c, ranges), -i) for i, c in enumerate(candidates)]
    (q, _specificity), index = max(scored)
    return -index if q > 0 else None


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

    def quality(self, ranges: Sequence[MediaRange]) -> tuple[float, int]:
        """Return ``(q, specificity)`` of this form under ``ranges`` (``media_quality``)."""
        return media_quality(self.media_types, ranges)


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
# Report tables for papers: LaTeX (booktabs) and Markdown.
LATEX = Representation("latex", "application/x-latex", "tex", "LaTeX", aliases=("text/x-tex",))
MARKDOWN = Representation("markdown", "text/markdown", "md", "Markdown", names=("md",))

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

"""Choose a representation (extension, ``?format=``, then ``Accept``) and advertise the others.

Every resource offers a list of ``Representation``s in preference order; the first one wins a
tie, which is how ``Accept: */*`` (curl's default) and a missing ``Accept`` are resolved. For
linked-data resources Turtle comes first, so scripts get data while browsers, which always
name ``text/html`` explicitly, get HTML. Responses carry ``Vary: Accept``, ``Content-Location``
and a ``Link: rel="alternate"`` entry for every other form.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from flask import Response, request
from pyoxigraph import RdfFormat

from server.web.problems import Problem
from vocab.project import QAB


@dataclass(frozen=True, slots=True)
class Representation:
    """One form of a resource: a short key, its media type and URL extension."""

    key: str
    media_type: str
    extension: str
    label: str
    rdf_format: RdfFormat | None = None


HTML = Representation("html", "text/html", "html", "HTML")
TURTLE = Representation("turtle", "text/turtle", "ttl", "Turtle", RdfFormat.TURTLE)
JSONLD = Representation("jsonld", "application/ld+json", "jsonld", "JSON-LD", RdfFormat.JSON_LD)
NTRIPLES = Representation(
    "ntriples", "application/n-triples", "nt", "N-Triples", RdfFormat.N_TRIPLES
)
RDFXML = Representation("rdfxml", "application/rdf+xml", "rdf", "RDF/XML", RdfFormat.RDF_XML)
NQUADS = Representation("nquads", "application/n-quads", "nq", "N-Quads", RdfFormat.N_QUADS)

# Linked-data documents: Turtle first (the */* default), then HTML and the other RDF forms.
DOCUMENT_FORMATS: tuple[Representation, ...] = (TURTLE, HTML, JSONLD, NTRIPLES, RDFXML, NQUADS)
# Pages that are mainly for people (home, lists): HTML first.
PAGE_FORMATS: tuple[Representation, ...] = (HTML, TURTLE, JSONLD, NTRIPLES, RDFXML, NQUADS)
# RDF only (context-free documents such as the VoID description).
RDF_FORMATS: tuple[Representation, ...] = (TURTLE, JSONLD, NTRIPLES, RDFXML, NQUADS)

# Media types that name one of the forms above.
_ALIASES = {
    "application/json": "application/ld+json",
    "application/x-turtle": "text/turtle",
    "application/xhtml+xml": "text/html",
    "text/x-nquads": "application/n-quads",
}

EXTENSIONS = frozenset(r.extension for r in DOCUMENT_FORMATS)


def split_extension(path: str) -> tuple[str, str | None]:
    """Split a format extension (``.ttl``, ``.jsonld``, ...) off the end of a path.

    >>> split_extension("experiment/42.ttl")
    ('experiment/42', 'ttl')
    >>> split_extension("dataset/qald-9.1")
    ('dataset/qald-9.1', None)
    """
    stem, dot, ext = path.rpartition(".")
    if dot and ext in EXTENSIONS and "/" not in ext:
        return stem, ext
    return path, None


def _not_acceptable(offered: Sequence[Representation], asked: str) -> Problem:
    available = [r.media_type for r in offered]
    return Problem(
        406,
        f"None of the available representations matches {asked!r}; available: "
        + ", ".join(available)
        + ". Use one of these in Accept, or add ?format= or a file extension.",
        QAB.NotAcceptable,
        extensions={"available": available},
    )


def _by_name(offered: Sequence[Representation], name: str) -> Representation | None:
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    for rep in offered:
        if key in (rep.key, rep.extension, rep.media_type):
            return rep
    return None


def negotiate(
    offered: Sequence[Representation], extension: str | None = None
) -> tuple[Representation, bool]:
    """Pick the representation for the current request.

    Args:
        offered: the forms available, in preference order (the first wins ties).
        extension: the extension from the URL, if the client asked for a document URL.

    Returns:
        The chosen representation, and whether it was chosen by ``Accept`` (negotiated).

    Raises:
        Problem: 404 for an extension the resource does not offer; 406 when neither
            ``?format=`` nor ``Accept`` matches anything offered.
    """
    if extension is not None:
        rep = _by_name(offered, extension)
        if rep is None:
            raise Problem(404, f"This resource has no .{extension} form.")
        return rep, False
    fmt = request.args.get("format")
    if fmt:
        rep = _by_name(offered, fmt)
        if rep is None:
            raise _not_acceptable(offered, f"format={fmt}")
        return rep, False
    accept = request.accept_mimetypes
    if not accept:
        return offered[0], True
    candidates = [r.media_type for r in offered]
    candidates += [alias for alias, target in _ALIASES.items() if target in candidates]
    best = accept.best_match(candidates)
    if best is None:
        raise _not_acceptable(offered, request.headers.get("Accept", ""))
    rep = _by_name(offered, best)
    assert rep is not None
    return rep, True


def alternates(stem: str, offered: Sequence[Representation]) -> list[tuple[str, Representation]]:
    """Return ``(url, representation)`` for every form of the resource at path ``stem``."""
    return [(f"{stem}.{rep.extension}", rep) for rep in offered]


def decorate(
    response: Response,
    stem: str,
    offered: Sequence[Representation],
    chosen: Representation,
    negotiated: bool,
) -> Response:
    """Add ``Vary``, ``Content-Location`` and ``Link`` alternates to a response.

    Args:
        response: the response to decorate.
        stem: the resource's path without extension (``/experiment/42``).
        offered: every form the resource has.
        chosen: the form in ``response``.
        negotiated: whether ``chosen`` came from ``Accept`` (then ``Content-Location`` is set).
    """
    response.headers.add("Vary", "Accept")
    if negotiated:
        response.headers["Content-Location"] = f"{stem}.{chosen.extension}"
    links = [
        f'<{url}>; rel="alternate"; type="{rep.media_type}"'
        for url, rep in alternates(stem, offered)
        if rep != chosen
    ]
    if links:
        response.headers.add("Link", ", ".join(links))
    return response

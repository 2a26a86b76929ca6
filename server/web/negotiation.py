"""Choose a representation (extension, ``Accept``, ``?format=``) and advertise the others.

One mechanism serves every resource, list page and ``/sparql``: the caller names the
``Representation``s it offers, in preference order, and ``negotiate`` picks one.

1. A format extension on the URL (``/experiment/42.ttl``) picks its form outright.
2. ``Accept`` (RFC 9110, section 12.5.1): media ranges match on type and subtype only; every
   parameter but ``q`` is ignored (``text/turtle; charset=utf-8`` and
   ``application/ld+json; profile="..."`` are plain Turtle and JSON-LD); the most specific range
   gives a form its quality; the highest quality wins, then a named type over a wildcard, then
   the offer order. Each form also answers to the media types clients commonly use for it
   (``text/plain`` for N-Triples, ``text/n3`` for Turtle, ``application/xml`` for RDF/XML or
   SPARQL XML results, ...).
3. ``?format=`` decides only when ``Accept`` does not: when no offered form is named by its
   type (``*/*``, no header, a browser's HTML preference), or the named value is not offered
   here. A format name nothing offers anywhere (a typo) is a 406.

A resource that adds a form (CSV, say) appends a ``Representation`` to what it offers and
renders it; nothing else changes. Responses carry ``Vary: Accept``, ``Content-Location`` when
``Accept`` chose a form that has a document URL, and a ``Link: rel="alternate"`` entry for every
other form (except on JSON-LD responses, see ``decorate``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from flask import Response, request

from server.web.problems import Problem
from server.web.representations import (
    EXTENSIONS,
    HTML,
    JSONLD,
    KNOWN,
    QUAD_FORMATS,
    Representation,
    parse_accept,
)
from vocab.project import QAB


@dataclass(frozen=True, slots=True)
class Choice:
    """The chosen form and what chose it: ``extension``, ``format``, ``accept`` or ``default``."""

    rep: Representation
    by: str

    @property
    def negotiated(self) -> bool:
        """Return whether ``Accept`` (or its absence) chose the form, not the URL."""
        return self.by in ("accept", "default")

    @property
    def as_graph(self) -> bool:
        """Return whether a quad form must hold triples only (it was not asked for by name)."""
        return self.negotiated


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


def not_acceptable(offered: Sequence[Representation], asked: str) -> Problem:
    """Return the 406 problem listing the media types of ``offered``."""
    available = [r.media_type for r in offered]
    return Problem(
        406,
        f"None of the available representations matches {asked!r}; available: "
        + ", ".join(available)
        + ". Use one of these in Accept, or add ?format= or a file extension.",
        QAB.NotAcceptable,
        extensions={"available": available},
    )


def _named(offered: Sequence[Representation], name: str) -> Representation | None:
    return next((rep for rep in offered if rep.is_named(name)), None)


def _format_values() -> list[str]:
    values = request.args.getlist("format")
    if request.method == "POST" and request.mimetype == "application/x-www-form-urlencoded":
        values += request.form.getlist("format")
    return split_formats(values)


def split_formats(values: Sequence[str]) -> list[str]:
    """Return the names in ``format`` parameter values.

    SPARQLWrapper repeats the parameter with its Accept value, a list of media types
    (``format=json-ld&format=application/ld+json,application/x-json+ld``).

    >>> split_formats(["json-ld", "application/ld+json, application/x-json+ld"])
    ['json-ld', 'application/ld+json', 'application/x-json+ld']
    """
    return [part.strip() for v in values for part in v.split(",") if part.strip()]


def negotiate(offered: Sequence[Representation], extension: str | None = None) -> Choice:
    """Pick the representation of the current request among ``offered``.

    Args:
        offered: the forms available, in preference order (the first is the default).
        extension: the format extension of the URL, if the client asked for a document URL.

    Returns:
        The chosen form and what chose it.

    Raises:
        Problem: 404 for an extension the resource does not offer; 406 when nothing offered is
            acceptable, or ``?format=`` names no form this server knows.
    """
    if extension is not None:
        rep = _named(offered, extension)
        if rep is None:
            raise Problem(404, f"This resource has no .{extension} form.")
        return Choice(rep, "extension")
    return negotiate_accept(offered, request.headers.get("Accept", ""), _format_values())


def negotiate_accept(
    offered: Sequence[Representation], header: str, formats: Sequence[str]
) -> Choice:
    """Pick among ``offered`` by ``format`` names (``split_formats``) and an ``Accept`` header.

    Raises:
        Problem: 406 when nothing offered is acceptable, or a format names no known form.
    """
    for value in formats:
        if not any(r.is_named(value) for r in (*KNOWN, *offered)):
            raise not_acceptable(offered, f"format={value}")
    by_format = next((rep for v in formats if (rep := _named(offered, v)) is not None), None)
    ranges = parse_accept(header)
    if not ranges:
        return Choice(by_format, "format") if by_format else Choice(offered[0], "default")
    scored = [(rep.quality(ranges), -i, rep) for i, rep in enumerate(offered)]
    (q, specificity), _, best = max(scored, key=lambda s: (s[0], s[1]))
    if by_format is not None and (specificity < 2 or best == HTML or q <= 0):
        return Choice(by_format, "format")
    if q <= 0:
        raise not_acceptable(offered, header)
    return Choice(best, "accept")


def alternates(stem: str, offered: Sequence[Representation]) -> list[tuple[str, Representation]]:
    """Return ``(url, representation)`` for every form of the resource at path ``stem``."""
    return [(f"{stem}.{rep.extension}", rep) for rep in offered]


def decorate(
    response: Response,
    stem: str,
    offered: Sequence[Representation],
    choice: Choice,
    page: int = 1,
) -> Response:
    """Add ``Vary``, ``Content-Location`` and ``Link`` alternates to a response.

    JSON-LD responses list no alternates in ``Link``: pyld's document loader (3.3) fails on a
    header with more than one ``rel="alternate"`` entry, and loaders that fetch JSON-LD have
    what they came for. Their HTML form still links every other form.

    Args:
        response: the response to decorate.
        stem: the resource's path without extension (``/experiment/42``); ``offered`` empty
            means it has no document URLs.
        offered: every form the resource has a document URL for.
        choice: what ``negotiate`` chose.
        page: the page of the document this response is (its URLs name the same page).
    """
    response.vary.add("Accept")
    chosen = choice.rep
    # page 2 of the Turtle form is at stem.ttl?page=2, not at the first page's URL
    at = f"?page={page}" if page > 1 else ""
    if choice.negotiated and chosen in offered and not (choice.as_graph and chosen in QUAD_FORMATS):
        response.headers["Content-Location"] = f"{stem}.{chosen.extension}{at}"
    if chosen == JSONLD:
        return response
    links = [
        f'<{url}{at}>; rel="alternate"; type="{rep.media_type}"'
        for url, rep in alternates(stem, offered)
        if rep != chosen
    ]
    if links:
        response.headers.add("Link", ", ".join(links))
    return response

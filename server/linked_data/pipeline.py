"""The one path from a request to a response, for every page and document.

A kind of page or document is described once, as a ``Resource``: the forms it offers (in
preference order), how to load its data for a reader, how to render its HTML, its RDF document
(serialised here in every RDF form) and any further forms (CSV, JSON). ``serve`` then owns
everything the forms have in common:

1. the representation, chosen by the one negotiator (``server.web.negotiation``): a URL
   extension, ``Accept`` or ``?format=``;
2. what the reader may see (``Services.visibility`` of the tokens the request presents);
3. validators: an entity tag per form, reader and query, and ``Last-Modified``; a revalidation
   that matches is a 304 before anything is loaded. Content that any anonymous reader sees
   follows the *public* generation, which a private experiment's run does not move;
4. the body, loaded and rendered once per *public* generation and URL for anonymous readers
   (``Services.public_bodies``: a private experiment's run keeps them, as it keeps their
   validators); token-opened responses are rendered for their reader alone;
5. headers: ``Cache-Control`` (``no-cache`` for public content, ``private, no-store`` and
   ``Vary: Authorization, Cookie`` for what a token opened, ``no-store`` for forms carrying a
   session's CSRF token), ``Vary: Accept``, ``Content-Location``, ``Link`` alternates and any
   ``Link`` entries the resource adds (pages of a list), and the token cookie.

Resources raise ``Problem`` (404 when the reader may see nothing, 400 for bad parameters) from
``load``; nothing else here knows what a resource is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from flask import Response, request
from pyoxigraph import Quad

from server.linked_data.serialisation import serialize_document
from server.services import Services, Visibility, services
from server.web import caching
from server.web.auth import remember_tokens, request_tokens
from server.web.negotiation import Choice, decorate, negotiate
from server.web.problems import Problem
from server.web.representations import HTML, Representation

D = TypeVar("D")

# Cache-Control of each kind of response.
PUBLIC_CACHE = caching.PUBLIC_CACHE
OPENED_CACHE = caching.OPENED_CACHE
SESSION_CACHE = "no-store"


@dataclass(frozen=True, slots=True)
class Reader:
    """One request as a resource sees it: the services, what the reader may see, the chosen
    form, and the URL path of the resource without extension."""

    svc: Services
    vis: Visibility
    choice: Choice
    stem: str

    @property
    def rep(self) -> Representation:
        """Return the chosen representation."""
        return self.choice.rep

    @property
    def opened(self) -> bool:
        """Return whether a token opened private content for this reader."""
        return bool(self.vis.unlocked)

    @property
    def base(self) -> str:
        """Return the base IRI."""
        return self.svc.base


Render = Callable[[Reader, D], str | bytes]


@dataclass(frozen=True, slots=True)
class Resource(Generic[D]):
    """One kind of page or document, described once.

    Attributes:
        formats: the forms offered, in preference order (the first is the default).
        load: reads what the resource shows for a reader; raises ``Problem`` (404 when the
            reader may see nothing).
        html: renders the HTML form.
        quads: the RDF document (every RDF form in ``formats`` is serialised from it).
        extra: further forms (CSV, JSON) and what renders each.
        links: ``Link`` header entries of a loaded resource (the pages of a list).
        documents: whether each form has a document URL (``<stem>.ttl``); lists of forms are
            then advertised with ``Link: rel="alternate"`` and ``Content-Location``.
        session: the HTML carries the session's CSRF token: never shared, never stored.
        max_age: seconds a public response may be used without revalidation (0: revalidate).
        public: the same for every reader, whatever tokens they present (the leaderboard, VoID,
            the vocabulary): never rendered per reader, never marked private.
        variant: a further part of the cache key (what else the body depends on).
    """

    formats: tuple[Representation, ...]
    load: Callable[[Reader], D]
    html: Render[D] | None = None
    quads: Callable[[Reader, D], Sequence[Quad]] | None = None
    extra: tuple[tuple[Representation, Render[D]], ...] = ()
    links: Callable[[Reader, D], Sequence[str]] | None = None
    # The body and ``Link`` entries of the chosen form made by another process, or None.
    elsewhere: Callable[[Reader, D], tuple[bytes, tuple[str, ...]] | None] | None = None
    documents: bool = True
    session: bool = False
    max_age: int = 0
    public: bool = False
    variant: Callable[[Reader], str] = field(default=lambda _reader: "")

    def render(self, reader: Reader, data: D) -> bytes | str:
        """Return the body of the chosen form.

        Raises:
            Problem: 404 when the RDF document is empty (nothing the reader may see).
        """
        rep = reader.rep
        if rep == HTML and self.html is not None:
            return self.html(reader, data)
        for offered, render in self.extra:
            if offered == rep:
                return render(reader, data)
        if self.quads is None or rep.rdf_format is None:
            raise Problem(406, f"This resource has no {rep.label} form.")
        quads = self.quads(reader, data)
        if not quads:
            raise Problem(404, f"There is nothing at {reader.stem} (or it is not published).")
        return serialize_document(quads, rep, as_graph=reader.choice.as_graph)


@dataclass(frozen=True, slots=True)
class _Made:
    body: bytes | str
    links: tuple[str, ...]


def _query() -> str:
    return request.query_string.decode("latin-1")


def _make(resource: Resource[D], reader: Reader) -> _Made:
    data = resource.load(reader)
    if resource.elsewhere is not None:
        made = resource.elsewhere(reader, data)
        if made is not None:
            return _Made(*made)
    body = resource.render(reader, data)
    links = tuple(resource.links(reader, data)) if resource.links is not None else ()
    return _Made(body, links)


def _body(resource: Resource[D], reader: Reader, key: str) -> _Made:
    if reader.opened or (resource.session and reader.rep == HTML):
        return _make(resource, reader)
    # Not opened by a token: public content only, kept while the public generation holds
    svc = reader.svc
    make = lambda: _make(resource, reader)  # noqa: E731
    return svc.public_bodies.get_or_make(svc.public_generation, key, make)


def _cache_control(resource: Resource[D], reader: Reader) -> str:
    if reader.opened:
        return OPENED_CACHE
    if resource.session and reader.rep == HTML:
        return SESSION_CACHE
    return f"public, max-age={resource.max_age}" if resource.max_age else PUBLIC_CACHE


def serve(resource: Resource[D], stem: str, extension: str | None = None) -> Response:
    """Answer the current request for ``resource`` at URL path ``stem``.

    Args:
        resource: what is served.
        stem: the URL path without format extension (``/experiment/42``).
        extension: the format extension of the URL, if any.

    Raises:
        Problem: 404 for a format extension the resource lacks or nothing the reader may see;
            406 when no offered form is acceptable; whatever ``load`` raises.
    """
    svc = services()
    choice = negotiate(resource.formats, extension)
    tokens = () if resource.public else request_tokens()
    reader = Reader(svc, svc.visibility(tokens), choice, stem)
    public = not reader.opened
    parts = (stem, choice.rep.key, str(choice.as_graph), reader.vis.key, _query())
    # one cache partition per kind of resource (the first segment of its path)
    kind = stem.strip("/").split("/", 1)[0] or "home"
    key = f"serve-{kind} " + " ".join((*parts, resource.variant(reader)))
    etag = svc.etag(*parts, resource.variant(reader), public=public)
    modified = svc.modified_for(public)
    stored = not (resource.session and choice.rep == HTML)
    fresh = stored and caching.not_modified(etag, modified)
    links: tuple[str, ...] = ()
    if fresh:
        response = Response(status=304)
    else:
        made = _body(resource, reader, key)
        response = Response(made.body, mimetype=choice.rep.media_type)
        links = made.links
    if stored:
        caching.finish(
            response, etag, weak=choice.rep == HTML, last_modified=modified, not_modified_now=fresh
        )
    return _headers(response, resource, reader, links)


def _headers(
    response: Response, resource: Resource[D], reader: Reader, links: tuple[str, ...]
) -> Response:
    """Add what every response of a resource carries: caching rules, the token cookie,
    ``Vary``, ``Content-Location`` and the ``Link`` entries."""
    response.headers["Cache-Control"] = _cache_control(resource, reader)
    if reader.opened:
        response.vary.update(("Authorization", "Cookie"))
        remember_tokens(response)
    page = request.args.get("page", "")
    decorate(
        response,
        reader.stem,
        resource.formats if resource.documents else (),
        reader.choice,
        int(page) if page.isdigit() and len(page) < 10 else 1,
    )
    if links:
        existing = response.headers.get("Link")
        response.headers["Link"] = ", ".join([*([existing] if existing else []), *links])
    return response

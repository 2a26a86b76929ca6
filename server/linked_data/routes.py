"""Linked-data documents of minted IRIs, and the one way every kind of resource page plugs in.

The URL of a resource is its IRI's path; appending ``.ttl``/``.jsonld``/``.nt``/``.rdf``/``.nq``/
``.html`` gives a document URL in that form, ``?format=`` does the same, and otherwise ``Accept``
decides (Turtle for ``*/*``). Each kind of resource has one blueprint that owns its URL prefix and
calls ``serve_resource(kind, rest, html)``: the RDF forms are the resource's document (the same for
every kind), the HTML form is the ``html`` page the blueprint names (``generic_page``, a table of
the document's triples, by default). Experiments, tasks, systems and datasets have their pages in
``server.pages``, stored RAG runs in ``server.ask.routes``; knowledge bases, cube structures,
experiment types, profiles and graphs use the generic page and are routed here. Responses carry
entity tags from the store generation and answer conditional GETs (``server.web.caching``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from flask import Blueprint, Response, render_template, request
from pyoxigraph import NamedNode

from server.linked_data.documents import document
from server.linked_data.serialisation import serialize_document
from server.linked_data.terms import describe, title_of
from server.services import Services, Visibility, services
from server.web import caching
from server.web.auth import remember_tokens, request_tokens
from server.web.negotiation import (
    DOCUMENT_FORMATS,
    HTML,
    JSONLD,
    Choice,
    Representation,
    decorate,
    negotiate,
    split_extension,
)
from server.web.problems import Problem
from vocab import iris

bp = Blueprint("resources", __name__)

# The HTML form of a resource. It reads what it shows itself (from graphs ``vis`` may see) and
# raises ``Problem(404)`` when there is nothing the reader may see.
HtmlPage = Callable[[Services, NamedNode, Visibility], str]
# A further form of a resource (CSV of an experiment's results, say): its representation and
# the function that renders it (raising ``Problem(404)`` like an ``HtmlPage``). Such forms are
# chosen by ``Accept`` or ``?format=``; they have no document URL of their own.
ExtraForm = tuple[Representation, Callable[[Services, NamedNode, Visibility], bytes]]
# A graph's HTML page lists this many subjects; its RDF forms carry everything.
GRAPH_HTML_SUBJECTS = 200


def generic_page(svc: Services, iri: NamedNode, vis: Visibility) -> str:
    """Render any resource as a table of its document's triples, grouped by subject.

    Raises:
        Problem: 404 when the reader can see nothing about ``iri``.
    """
    quads = document(svc, iri, vis)
    if not quads:
        raise Problem(404, f"There is no resource {iri.value} (or it is not published).")
    return render_template(
        "resource.html",
        iri=iri.value,
        title=title_of(quads, iri),
        subjects=describe(quads, iri, svc.base),
        alternates=alternate_links(),
    )


def alternate_links() -> list[tuple[str, str, str]]:
    """Return ``(url, media type, label)`` of every form of the current resource."""
    stem, _ = split_extension(request.path)
    return [(f"{stem}.{r.extension}", r.media_type, r.label) for r in DOCUMENT_FORMATS]


def render_resource(
    iri: NamedNode,
    stem: str,
    extension: str | None,
    html: HtmlPage = generic_page,
    extra: Sequence[ExtraForm] = (),
) -> Response:
    """Answer a request for ``iri`` (whose URL path is ``stem``) in the negotiated form.

    Args:
        iri: the resource.
        stem: its URL path without extension.
        extension: the format extension of the URL, if any.
        html: renders the HTML form.
        extra: further forms (offered after the RDF ones) and what renders each.

    Raises:
        Problem: 404 when the reader can see nothing about ``iri``; 406 when nothing offered
            is acceptable.
    """
    svc = services()
    renderers = dict(extra)
    offered = (*DOCUMENT_FORMATS, *renderers)
    choice = negotiate(offered, extension)
    rep = choice.rep
    vis = svc.visibility(request_tokens())
    etag = document_etag(svc, stem, choice, vis)
    fresh = caching.not_modified(etag, svc.modified)
    if fresh:
        response = Response(status=304)
    elif rep == HTML:
        response = Response(html(svc, iri, vis), mimetype="text/html")
    elif rep in renderers:
        response = Response(renderers[rep](svc, iri, vis), mimetype=rep.media_type)
    else:
        quads = document(svc, iri, vis)
        if not quads:
            raise Problem(404, f"There is no resource {iri.value} (or it is not published).")
        if rep == JSONLD:
            body = svc.cache.get_or_make(
                svc.generation,
                f"jsonld {iri.value} {vis.key}",
                lambda: serialize_document(quads, rep),
            )
        else:
            body = serialize_document(quads, rep, as_graph=choice.as_graph)
        response = Response(body, mimetype=rep.media_type)
    caching.finish(
        response, etag, weak=rep == HTML, last_modified=svc.modified, not_modified_now=fresh
    )
    response.headers["Cache-Control"] = "private, no-cache" if vis.unlocked else "no-cache"
    remember_tokens(response, bool(vis.unlocked))
    return decorate(response, stem, offered, choice)


def document_etag(svc: Services, stem: str, choice: Choice, vis: Visibility) -> str:
    """Return the entity tag of a resource's form for one reader at the current generation.

    HTML pages take their query string into account (``?page=``, filters).
    """
    query = request.query_string.decode("latin-1") if choice.rep == HTML else ""
    shape = "graph" if choice.as_graph else "quads"
    return svc.etag(stem, choice.rep.key, shape, vis.key, query)


def serve_resource(
    kind: str, rest: str, html: HtmlPage = generic_page, extra: Sequence[ExtraForm] = ()
) -> Response:
    """Answer ``/<kind>/<rest>``: the resource the URL names, its HTML form rendered by ``html``
    and any ``extra`` forms (chosen by ``Accept`` or ``?format=``).

    Raises:
        Problem: 404 when the URL names no resource the reader may see; 406 as
            ``render_resource``.
    """
    svc = services()
    stem_rest, extension = split_extension(rest)
    if extension is not None:
        # A resource whose own name ends like an extension wins over the format reading.
        whole = iris.page_iri(svc.base, kind, *(iris.segment(p) for p in rest.split("/")))
        if next(svc.store.quads(subject=whole), None) is not None:
            stem_rest, extension = rest, None
    parts = [iris.segment(p) for p in stem_rest.split("/") if p]
    if not parts:
        raise Problem(404, f"Name a resource after /{kind}/.")
    iri = iris.page_iri(svc.base, kind, *parts)
    return render_resource(iri, "/" + "/".join([kind, *parts]), extension, html, extra)


@bp.route("/kb/<path:rest>")
def kb(rest: str) -> Response:
    """A knowledge base."""
    return serve_resource("kb", rest)


@bp.route("/graph/<path:rest>")
def graph(rest: str) -> Response:
    """A named graph: every quad in it (404 when it is not visible to the reader)."""
    svc = services()
    stem_rest, extension = split_extension(rest)
    parts = [iris.segment(p) for p in stem_rest.split("/") if p]
    iri = iris.page_iri(svc.base, "graph", *parts)
    stem = "/" + "/".join(["graph", *parts])
    choice = negotiate(DOCUMENT_FORMATS, extension)
    rep = choice.rep
    vis = svc.visibility(request_tokens())
    if not vis.can_see(iri):
        raise Problem(404, f"There is no graph {iri.value} (or it is not published).")
    etag = document_etag(svc, stem, choice, vis)
    fresh = caching.not_modified(etag, svc.modified)
    if fresh:
        response = Response(status=304)
    else:
        quads = list(svc.store.quads(graph=iri))
        if rep == HTML:
            shown = describe(quads, iri, svc.base)
            body = render_template(
                "resource.html",
                iri=iri.value,
                title=f"Graph {stem}",
                subjects=shown[:GRAPH_HTML_SUBJECTS],
                more=max(len(shown) - GRAPH_HTML_SUBJECTS, 0),
                alternates=alternate_links(),
            )
            response = Response(body, mimetype="text/html")
        else:
            # A graph's document is its quads unless Accept chose the form.
            data = serialize_document(quads, rep, as_graph=choice.as_graph)
            response = Response(data, mimetype=rep.media_type)
    caching.finish(
        response, etag, weak=rep == HTML, last_modified=svc.modified, not_modified_now=fresh
    )
    return decorate(response, stem, DOCUMENT_FORMATS, choice)


@bp.route("/cube/<path:rest>")
def cube(rest: str) -> Response:
    """A Data Cube structure definition and its components."""
    return serve_resource("cube", rest)


@bp.route("/experiment-type/<path:rest>")
def experiment_type(rest: str) -> Response:
    """An experiment type of ours (GERBIL's own live in GERBIL's vocabulary)."""
    return serve_resource("experiment-type", rest)


@bp.route("/profile/<path:rest>")
def profile(rest: str) -> Response:
    """A scoring profile minted for this store."""
    return serve_resource("profile", rest)

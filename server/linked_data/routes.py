"""Linked-data views of minted IRIs: ``/experiment/…``, ``/task/…``, ``/dataset/…``, ``/system/…``,
``/kb/…`` and ``/rag/run/…``, each in HTML, Turtle, JSON-LD, N-Triples, RDF/XML and N-Quads.

The URL of a resource is its IRI's path; appending ``.ttl``/``.jsonld``/``.nt``/``.rdf``/``.nq``/
``.html`` gives a document URL in that form, ``?format=`` does the same, and otherwise ``Accept``
decides (Turtle for ``*/*``). HTML is rendered by the view registered for the resource's class
(``register_html_view``; pages for datasets and experiments slot in there) or by the generic
property table. Responses carry ETags from the store generation and answer conditional GETs.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice

from flask import Blueprint, Flask, Response, current_app, render_template, request
from pyoxigraph import NamedNode, Quad

from server.linked_data.documents import document
from server.linked_data.serialisation import serialize_document
from server.linked_data.terms import describe, title_of
from server.services import Services, Visibility, services
from server.web.access import remember_tokens, request_tokens
from server.web.negotiation import (
    DOCUMENT_FORMATS,
    HTML,
    JSONLD,
    decorate,
    negotiate,
    split_extension,
)
from server.web.problems import Problem
from vocab import iris
from vocab.standard import RDF

bp = Blueprint("resources", __name__)

HtmlView = Callable[[Services, NamedNode, list[Quad], Visibility], str]
# A page reads what it shows itself, so no document is built first (experiments, tasks).
HtmlPage = Callable[[Services, NamedNode, Visibility], str]
_VIEWS_KEY = "html_views"
_PAGES_KEY = "html_pages"
# rdf:type statements of one IRI looked at when choosing a page.
_TYPE_SCAN = 64
# A graph's HTML page lists this many subjects; its RDF forms carry everything.
GRAPH_HTML_SUBJECTS = 200


def register_html_view(app: Flask, rdf_class: NamedNode, view: HtmlView) -> None:
    """Render resources of ``rdf_class`` with ``view`` instead of the generic table."""
    app.extensions.setdefault(_VIEWS_KEY, {})[rdf_class.value] = view


def register_html_page(app: Flask, rdf_class: NamedNode, page: HtmlPage) -> None:
    """Render resources of ``rdf_class`` with ``page``, which reads the store itself.

    Unlike a view, a page is called before (instead of) building the resource document, so
    resources whose documents are large (an experiment graph) render in bounded time. The page
    raises ``Problem(404)`` when it finds nothing it may show.
    """
    app.extensions.setdefault(_PAGES_KEY, {})[rdf_class.value] = page


def _page_for(svc: Services, iri: NamedNode, vis: Visibility) -> HtmlPage | None:
    pages: dict[str, HtmlPage] = current_app.extensions.get(_PAGES_KEY, {})
    if not pages:
        return None
    for quad in islice(svc.store.quads(iri, RDF.type, None), _TYPE_SCAN):
        graph, obj = quad.graph_name, quad.object
        if isinstance(graph, NamedNode) and vis.can_see(graph) and isinstance(obj, NamedNode):
            page = pages.get(obj.value)
            if page is not None:
                return page
    return None


def _view_for(quads: list[Quad], iri: NamedNode) -> HtmlView | None:
    views: dict[str, HtmlView] = current_app.extensions.get(_VIEWS_KEY, {})
    for quad in quads:
        obj = quad.object
        if quad.subject == iri and quad.predicate == RDF.type and isinstance(obj, NamedNode):
            view = views.get(obj.value)
            if view is not None:
                return view
    return None


def generic_html(svc: Services, iri: NamedNode, quads: list[Quad], vis: Visibility) -> str:
    """Render any resource as a table of its triples, grouped by subject."""
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


def render_resource(iri: NamedNode, stem: str, extension: str | None) -> Response:
    """Answer a request for ``iri`` (whose URL path is ``stem``) in the negotiated form.

    Raises:
        Problem: 404 when the reader can see nothing about ``iri``; 406 when nothing offered
            is acceptable.
    """
    svc = services()
    rep, negotiated = negotiate(DOCUMENT_FORMATS, extension)
    vis = svc.visibility(request_tokens())
    etag = svc.etag(stem, rep.key, vis.key)
    page = _page_for(svc, iri, vis) if rep == HTML else None
    if request.if_none_match.contains(etag):
        response = Response(status=304)
    elif page is not None:
        response = Response(page(svc, iri, vis), mimetype="text/html")
    else:
        quads = document(svc, iri, vis)
        if not quads:
            raise Problem(404, f"There is no resource {iri.value} (or it is not published).")
        if rep == HTML:
            view = _view_for(quads, iri) or generic_html
            response = Response(view(svc, iri, quads, vis), mimetype="text/html")
        elif rep == JSONLD:
            body = svc.cache.get_or_make(
                svc.generation,
                f"jsonld {iri.value} {vis.key}",
                lambda: serialize_document(quads, rep, svc.base),
            )
            response = Response(body, mimetype=rep.media_type)
        else:
            response = Response(serialize_document(quads, rep, svc.base), mimetype=rep.media_type)
    response.set_etag(etag)
    response.headers["Cache-Control"] = "private, no-cache" if vis.unlocked else "no-cache"
    remember_tokens(response, bool(vis.unlocked))
    return decorate(response, stem, DOCUMENT_FORMATS, rep, negotiated)


def _serve(kind: str, rest: str) -> Response:
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
    return render_resource(iri, "/" + "/".join([kind, *parts]), extension)


@bp.route("/experiment/<path:rest>")
def experiment(rest: str) -> Response:
    """An experiment: its whole graph (tasks, provenance, observations)."""
    return _serve("experiment", rest)


@bp.route("/task/<path:rest>")
def task(rest: str) -> Response:
    """One task of an experiment, with its observations."""
    return _serve("task", rest)


@bp.route("/dataset/<path:rest>")
def dataset(rest: str) -> Response:
    """A dataset, one of its versions, or one question of a version."""
    return _serve("dataset", rest)


@bp.route("/system/<path:rest>")
def system(rest: str) -> Response:
    """A QA system."""
    return _serve("system", rest)


@bp.route("/kb/<path:rest>")
def kb(rest: str) -> Response:
    """A knowledge base."""
    return _serve("kb", rest)


@bp.route("/graph/<path:rest>")
def graph(rest: str) -> Response:
    """A named graph: every quad in it (404 when it is not visible to the reader)."""
    svc = services()
    stem_rest, extension = split_extension(rest)
    parts = [iris.segment(p) for p in stem_rest.split("/") if p]
    iri = iris.page_iri(svc.base, "graph", *parts)
    stem = "/" + "/".join(["graph", *parts])
    rep, negotiated = negotiate(DOCUMENT_FORMATS, extension)
    vis = svc.visibility(request_tokens())
    if not vis.can_see(iri):
        raise Problem(404, f"There is no graph {iri.value} (or it is not published).")
    etag = svc.etag(stem, rep.key, vis.key)
    if request.if_none_match.contains(etag):
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
            response = Response(serialize_document(quads, rep, svc.base), mimetype=rep.media_type)
    response.set_etag(etag)
    return decorate(response, stem, DOCUMENT_FORMATS, rep, negotiated)


@bp.route("/cube/<path:rest>")
def cube(rest: str) -> Response:
    """A Data Cube structure definition and its components."""
    return _serve("cube", rest)


@bp.route("/experiment-type/<path:rest>")
def experiment_type(rest: str) -> Response:
    """An experiment type of ours (GERBIL's own live in GERBIL's vocabulary)."""
    return _serve("experiment-type", rest)


@bp.route("/profile/<path:rest>")
def profile(rest: str) -> Response:
    """A scoring profile minted for this store."""
    return _serve("profile", rest)


@bp.route("/rag/run/<path:rest>")
def rag_run(rest: str) -> Response:
    """One stored answer of the built-in RAG system."""
    return _serve("rag/run", rest)

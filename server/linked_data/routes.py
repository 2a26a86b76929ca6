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
from pyoxigraph import NamedNode, Quad

from server.linked_data.documents import (
    PageContext,
    document,
    document_elsewhere,
    document_part,
)
from server.linked_data.parts import Part, graph_part, neighbours, page_url, with_view
from server.linked_data.pipeline import Reader, Resource, serve
from server.linked_data.terms import describe, title_of
from server.services import Services, Visibility, services
from server.web.negotiation import split_extension
from server.web.pagination import NOT_COPIED, page_number
from server.web.problems import Problem
from server.web.representations import DOCUMENT_FORMATS, HTML, Representation
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


def document_resource(
    iri: NamedNode, html: HtmlPage = generic_page, extra: Sequence[ExtraForm] = ()
) -> Resource[NamedNode]:
    """Return the resource ``iri``: its document in every RDF form, its ``html`` page and any
    ``extra`` forms (offered after the RDF ones, chosen by ``Accept`` or ``?format=``)."""

    return Resource(
        formats=(*DOCUMENT_FORMATS, *(rep for rep, _ in extra)),
        load=lambda _reader: iri,
        html=lambda reader, node: html(reader.svc, node, reader.vis),
        quads=_document_quads,
        extra=tuple((rep, _extra_form(render)) for rep, render in extra),
        links=_document_links,
        elsewhere=_document_elsewhere,
    )


def _part(reader: Reader, node: NamedNode) -> Part:
    """Return the page of ``node``'s document the request asks for (``?page=``), once.

    A graph's own document (``/graph/...``) is its quads a page at a time.
    """
    svc, page = reader.svc, page_number()
    is_graph = reader.stem.startswith("/graph/")
    part = svc.remember(
        f"document-part {node.value} {page} {reader.vis.key} {is_graph}",
        lambda: (
            graph_part(svc, node, page) if is_graph else document_part(svc, node, reader.vis, page)
        ),
    )
    if part.quads and page > part.pages:
        raise Problem(404, f"There is no page {page}; the document has {part.pages}.")
    return part


def _document_quads(reader: Reader, node: NamedNode) -> list[Quad]:
    """Return the page's quads; a document of several pages says where it is (``hydra:view``)."""
    return with_view(node, _part(reader, node), reader.base, request.path)


def _links(part: Part) -> list[str]:
    if part.pages <= 1:
        return []
    return [f'<{page_url(request.path, n)}>; rel="{rel}"' for rel, n in neighbours(part).items()]


def _document_links(reader: Reader, node: NamedNode) -> list[str]:
    """Return the ``Link`` entries of a document of several pages (its RDF forms only)."""
    if reader.rep.rdf_format is None:
        return []
    return _links(_part(reader, node))


def _document_elsewhere(reader: Reader, node: NamedNode) -> tuple[bytes, tuple[str, ...]] | None:
    """Return the RDF form of an experiment's or task's document, or its HTML page, as a query
    worker wrote it, with its ``Link`` entries (None: this process writes it;
    ``documents.document_elsewhere``)."""
    html = reader.rep == HTML
    if (reader.rep.rdf_format is None and not html) or reader.stem.startswith("/graph/"):
        return None
    made = document_elsewhere(
        reader.svc,
        node,
        reader.vis,
        page_number(),
        request.path,
        reader.rep,
        reader.choice.as_graph,
        _page_context(reader) if html else None,
    )
    if made is None:
        return None
    body, part = made
    return body, () if html else tuple(_links(part))


def _page_context(reader: Reader) -> PageContext:
    # What an HTML page rendered elsewhere needs of this request (never an access token).
    args = tuple((k, v) for k, v in request.args.items(multi=True) if k not in NOT_COPIED)
    return PageContext(tuple(alternate_links()), args, reader.svc.config.server.page_size)


def _extra_form(
    render: Callable[[Services, NamedNode, Visibility], bytes],
) -> Callable[[Reader, NamedNode], bytes]:
    return lambda reader, node: render(reader.svc, node, reader.vis)


def serve_resource(
    kind: str, rest: str, html: HtmlPage = generic_page, extra: Sequence[ExtraForm] = ()
) -> Response:
    """Answer ``/<kind>/<rest>``: the resource the URL names, its HTML form rendered by ``html``
    and any ``extra`` forms (chosen by ``Accept`` or ``?format=``).

    Raises:
        Problem: 404 when the URL names no resource the reader may see; 406 when nothing
            offered is acceptable.
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
    stem = "/" + "/".join([kind, *parts])
    return serve(document_resource(iri, html, extra), stem, extension)


def _graph_page(reader: Reader, graph: NamedNode) -> str:
    shown = describe(graph_part(reader.svc, graph, 1).quads, graph, reader.base)
    return render_template(
        "resource.html",
        iri=graph.value,
        title=f"Graph {reader.stem}",
        subjects=shown[:GRAPH_HTML_SUBJECTS],
        more=max(len(shown) - GRAPH_HTML_SUBJECTS, 0),
        alternates=alternate_links(),
    )


def _visible_graph(iri: NamedNode) -> Callable[[Reader], NamedNode]:
    def _load(reader: Reader) -> NamedNode:
        if not reader.vis.can_see(iri):
            raise Problem(404, f"There is no graph {iri.value} (or it is not published).")
        return iri

    return _load


@bp.route("/graph/<path:rest>")
def graph(rest: str) -> Response:
    """A named graph: every quad in it (404 when it is not visible to the reader).

    Its document keeps each quad's graph unless ``Accept`` chose the form.
    """
    svc = services()
    stem_rest, extension = split_extension(rest)
    parts = [iris.segment(p) for p in stem_rest.split("/") if p]
    iri = iris.page_iri(svc.base, "graph", *parts)
    resource = Resource(
        formats=DOCUMENT_FORMATS,
        load=_visible_graph(iri),
        html=_graph_page,
        quads=_document_quads,
        links=_document_links,
    )
    return serve(resource, "/" + "/".join(["graph", *parts]), extension)


@bp.route("/kb/<path:rest>")
def kb(rest: str) -> Response:
    """A knowledge base."""
    return serve_resource("kb", rest)


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

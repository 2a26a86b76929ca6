"""The home page and the lists of datasets, experiments and systems.

The pages of single datasets, experiments, tasks and systems are their siblings in
``server.pages``; the VoID description and the dump live in ``server.linked_data``.

Each list is also an RDF document (the list page negotiates like any resource) and links to a
SPARQL query that reproduces its table. Canned queries run on the main store restricted to the
graphs the reader may see.
"""

from __future__ import annotations

from flask import Blueprint, Response, render_template, request
from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad

from server.linked_data.description import render_description
from server.linked_data.routes import document_etag
from server.linked_data.serialisation import serialize_document
from server.linked_data.terms import term_view
from server.services import Services, Visibility, services
from server.sparql.page import query_link
from server.web import caching
from server.web.auth import remember_tokens, request_tokens
from server.web.negotiation import (
    HTML,
    PAGE_FORMATS,
    RDF_FORMATS,
    decorate,
    negotiate,
    split_extension,
)
from store import graphs, queries
from store.triplestore import QueryResult
from vocab import iris
from vocab.standard import DCTERMS, RDFS

bp = Blueprint("pages", __name__)


def _rows(result: QueryResult) -> list[dict[str, object]]:
    names = [v.value for v in result.variables]  # type: ignore[union-attr]
    return [{n: s[n] for n in names} for s in result]  # type: ignore[union-attr]


def _select(
    svc: Services,
    name: str,
    *,
    default: list[NamedNode] | None = None,
    named: list[NamedNode] | None = None,
) -> list[dict[str, object]]:
    # Explicit (possibly empty) graph lists: the query never sees a graph not passed here.
    result = svc.store.query(
        queries.load(name), default_graph=list(default or []), named_graphs=list(named or [])
    )
    return _rows(result)


def _list_page(
    title: str,
    query_name: str,
    rows: list[dict[str, object]],
    columns: list[str],
    members: list[NamedNode],
    intro: str,
) -> Response:
    svc = services()
    stem, extension = split_extension(request.path.rstrip("/"))
    choice = negotiate(PAGE_FORMATS, extension)
    rep = choice.rep
    vis = svc.visibility(request_tokens())
    etag = document_etag(svc, stem, choice, vis)
    fresh = caching.not_modified(etag, svc.modified)
    if fresh:
        response = Response(status=304)
    elif rep.rdf_format is None:
        table = [
            {c: (term_view(r[c], svc.base) if r.get(c) is not None else None) for c in columns}
            for r in rows
        ]
        body = render_template(
            "list.html",
            title=title,
            columns=columns,
            rows=table,
            intro=intro,
            query_href=query_link(queries.load(query_name)),
            alternates=[(f"{stem}.{r.extension}", r.media_type, r.label) for r in PAGE_FORMATS],
        )
        response = Response(body, mimetype="text/html")
    else:
        page = NamedNode(svc.base + stem)
        quads = [Quad(page, RDFS.label, Literal(title, language="en"), DefaultGraph())]
        quads += [Quad(page, DCTERMS.hasPart, m, DefaultGraph()) for m in members]
        data = serialize_document(quads, rep, as_graph=choice.as_graph)
        response = Response(data, mimetype=rep.media_type)
    caching.finish(
        response, etag, weak=rep == HTML, last_modified=svc.modified, not_modified_now=fresh
    )
    return decorate(response, stem, PAGE_FORMATS, choice)


def _experiment_graphs(svc: Services, vis: Visibility) -> list[NamedNode]:
    prefix = graphs.experiment_graph_prefix(svc.base)
    return [g for g in vis.graphs if g.value.startswith(prefix)]


@bp.route("/")
@bp.route("/index.<ext>")
def home(ext: str | None = None) -> Response:
    """What is here and how to start; in RDF, the DCAT catalog of the data (as VoID)."""
    svc = services()
    vis = svc.visibility(request_tokens())

    def _page() -> str:
        catalog = graphs.catalog_graph(svc.base)
        datasets = _select(svc, "page_datasets", default=[catalog]) if vis.can_see(catalog) else []
        return render_template(
            "home.html",
            datasets=len(datasets),
            experiments=len(_experiment_graphs(svc, vis)),
            triples=svc.public_quads(),
            alternates=[(f"/index.{r.extension}", r.media_type, r.label) for r in RDF_FORMATS],
        )

    home_iri = iris.page_iri(svc.base, "")
    return render_description("/index", "qabench", ext, home_iri, PAGE_FORMATS, _page)


@bp.route("/datasets")
@bp.route("/datasets.<ext>")
def datasets(ext: str | None = None) -> Response:
    """Every benchmark dataset in the catalog."""
    svc = services()
    vis = svc.visibility(request_tokens())
    catalog = graphs.catalog_graph(svc.base)
    rows = _select(svc, "page_datasets", default=[catalog]) if vis.can_see(catalog) else []
    members = [r["dataset"] for r in rows if isinstance(r["dataset"], NamedNode)]
    return _list_page(
        "Datasets",
        "page_datasets",
        rows,
        ["dataset", "name", "title", "versions", "questions"],
        members,
        "Benchmarks loaded into this store. Each has one or more versions "
        "(files, identified by SHA-256); experiments cite a version.",
    )


@bp.route("/experiments")
@bp.route("/experiments.<ext>")
def experiments(ext: str | None = None) -> Response:
    """Every experiment the reader may see, newest first."""
    svc = services()
    vis = svc.visibility(request_tokens())
    rows = _select(svc, "page_experiments", named=_experiment_graphs(svc, vis))
    members = [r["experiment"] for r in rows if isinstance(r["experiment"], NamedNode)]
    response = _list_page(
        "Experiments",
        "page_experiments",
        rows,
        ["experiment", "tasks", "started", "states"],
        members,
        "Experiments ran QA systems on dataset versions. Private experiments "
        "appear only to holders of their access token.",
    )
    return remember_tokens(response, bool(vis.unlocked))


@bp.route("/systems")
@bp.route("/systems.<ext>")
def systems(ext: str | None = None) -> Response:
    """Every system that took part in a visible task."""
    svc = services()
    vis = svc.visibility(request_tokens())
    rows = _select(svc, "page_systems", named=list(vis.graphs))
    members = [r["system"] for r in rows if isinstance(r["system"], NamedNode)]
    return _list_page(
        "Systems",
        "page_systems",
        rows,
        ["system", "label", "tasks"],
        members,
        "Question answering systems evaluated here.",
    )

"""The home page and the lists of datasets, experiments and systems.

The pages of single datasets, experiments, tasks and systems are their siblings in
``server.pages``; the VoID description and the dump live in ``server.linked_data``.

Each list is shown a page at a time (``server.pages.pagination``), is also an RDF document (the
list page negotiates like any resource) and links to a SPARQL query that reproduces its table.
The experiments and systems come from the experiment index (``server.listings``),
filtered by what the reader may see, so a page costs what it shows whatever the store holds;
the datasets come from a canned query on the catalog graph.
"""

from __future__ import annotations

from flask import Blueprint, Response, render_template, request
from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad

from server.linked_data.description import render_description
from server.linked_data.routes import document_etag
from server.linked_data.serialisation import serialize_document
from server.linked_data.terms import term_view
from server.listings import ExperimentEntry
from server.pages.pagination import Page, link_header, page_number, paginate, view_quads
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
from vocab.standard import DCTERMS, HYDRA, RDFS, XSD

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


Row = dict[str, NamedNode | Literal | None]


def _list_page(
    title: str,
    query_name: str,
    page: Page[Row],
    columns: list[str],
    member_column: str,
    intro: str,
) -> Response:
    svc = services()
    stem, extension = split_extension(request.path.rstrip("/"))
    choice = negotiate(PAGE_FORMATS, extension)
    rep = choice.rep
    vis = svc.visibility(request_tokens())
    etag = document_etag(svc, f"{stem}?page={page.number}", choice, vis)
    fresh = caching.not_modified(etag, svc.modified)
    if fresh:
        response = Response(status=304)
    elif rep.rdf_format is None:
        table = [
            {c: (term_view(r[c], svc.base) if r.get(c) is not None else None) for c in columns}
            for r in page.rows
        ]
        links = page.neighbours(stem)
        body = render_template(
            "list.html",
            title=title,
            columns=columns,
            rows=table,
            intro=intro,
            page=page,
            prev_url=links.get("prev"),
            next_url=links.get("next"),
            query_href=query_link(queries.load(query_name)),
            alternates=[(f"{stem}.{r.extension}", r.media_type, r.label) for r in PAGE_FORMATS],
        )
        response = Response(body, mimetype="text/html")
    else:
        collection = NamedNode(svc.base + stem)
        g = DefaultGraph()
        quads = [Quad(collection, RDFS.label, Literal(title, language="en"), g)]
        for row in page.rows:
            member = row.get(member_column)
            if isinstance(member, NamedNode):
                quads.append(Quad(collection, DCTERMS.hasPart, member, g))
                quads.append(Quad(collection, HYDRA.member, member, g))
        quads += view_quads(collection, page, stem, svc.base)  # type: ignore[arg-type]
        data = serialize_document(quads, rep, as_graph=choice.as_graph)
        response = Response(data, mimetype=rep.media_type)
    caching.finish(
        response, etag, weak=rep == HTML, last_modified=svc.modified, not_modified_now=fresh
    )
    link_header(response, page, stem)  # type: ignore[arg-type]
    return decorate(response, stem, PAGE_FORMATS, choice)


def _visible_experiments(svc: Services, vis: Visibility) -> list[ExperimentEntry]:
    """Return the experiments ``vis`` may see, newest first (listed once per generation).

    A page is then a slice, whatever its number; the list holds references to the index's
    entries, not copies.
    """
    return svc.cache.get_or_make(
        svc.generation,
        f"experiments-visible {vis.key} {svc.experiments.version}",
        lambda: list(svc.experiments.newest_first(vis.can_see)),
    )


def _dataset_rows(svc: Services, vis: Visibility) -> list[dict[str, object]]:
    """Return the catalog's datasets (one query per generation; none if it is not visible)."""
    catalog = graphs.catalog_graph(svc.base)
    if not vis.can_see(catalog):
        return []
    return svc.cache.get_or_make(
        svc.generation,
        "dataset-rows",
        lambda: _select(svc, "page_datasets", default=[catalog]),
    )


@bp.route("/")
@bp.route("/index.<ext>")
def home(ext: str | None = None) -> Response:
    """What is here and how to start; in RDF, the DCAT catalog of the data (as VoID)."""
    svc = services()
    vis = svc.visibility(request_tokens())

    def _page() -> str:
        return render_template(
            "home.html",
            datasets=len(_dataset_rows(svc, vis)),
            experiments=len(_visible_experiments(svc, vis)),
            triples=svc.public_quads(),
            alternates=[(f"/index.{r.extension}", r.media_type, r.label) for r in RDF_FORMATS],
        )

    home_iri = iris.page_iri(svc.base, "")
    return render_description("/index", "qabench", ext, home_iri, PAGE_FORMATS, _page)


@bp.route("/datasets")
@bp.route("/datasets.<ext>")
def datasets(ext: str | None = None) -> Response:
    """Every benchmark dataset in the catalog, a page at a time."""
    svc = services()
    vis = svc.visibility(request_tokens())
    rows = _dataset_rows(svc, vis)
    page = paginate(rows, len(rows), page_number(), svc.config.server.page_size)
    return _list_page(
        "Datasets",
        "page_datasets",
        page,  # type: ignore[arg-type]
        ["dataset", "name", "title", "versions", "questions"],
        "dataset",
        "Benchmarks loaded into this store. Each has one or more versions "
        "(files, identified by SHA-256); experiments cite a version.",
    )


@bp.route("/experiments")
@bp.route("/experiments.<ext>")
def experiments(ext: str | None = None) -> Response:
    """Every experiment the reader may see, newest first, a page at a time."""
    svc = services()
    vis = svc.visibility(request_tokens())
    visible = _visible_experiments(svc, vis)
    shown = paginate(visible, len(visible), page_number(), svc.config.server.page_size)
    rows: list[Row] = [
        {
            "experiment": NamedNode(e.iri),
            "tasks": Literal(str(e.tasks), datatype=XSD.integer),
            "started": Literal(e.started) if e.started else None,
            "states": Literal(" ".join(e.states)),
        }
        for e in shown.rows
    ]
    page = Page(shown.number, shown.size, shown.total, rows)
    response = _list_page(
        "Experiments",
        "page_experiments",
        page,
        ["experiment", "tasks", "started", "states"],
        "experiment",
        "Experiments ran QA systems on dataset versions. Private experiments "
        "appear only to holders of their access token.",
    )
    return remember_tokens(response, bool(vis.unlocked))


def _system_rows(svc: Services, vis: Visibility) -> list[Row]:
    totals: dict[str, tuple[str, int]] = {}
    for entry in _visible_experiments(svc, vis):
        for system in entry.systems:
            label, tasks = totals.get(system.iri, (system.label, 0))
            totals[system.iri] = (label, tasks + system.tasks)
    ordered = sorted(totals.items(), key=lambda item: (item[1][0].lower(), item[0]))
    return [
        {
            "system": NamedNode(iri),
            "label": Literal(label),
            "tasks": Literal(str(tasks), datatype=XSD.integer),
        }
        for iri, (label, tasks) in ordered
    ]


@bp.route("/systems")
@bp.route("/systems.<ext>")
def systems(ext: str | None = None) -> Response:
    """Every system that took part in a visible task, a page at a time."""
    svc = services()
    vis = svc.visibility(request_tokens())
    # Summed over the experiments' summaries once per change of what the reader may see.
    rows: list[Row] = svc.cache.get_or_make(
        svc.generation,
        f"system-rows {vis.key} {svc.experiments.version}",
        lambda: _system_rows(svc, vis),
    )
    page = paginate(rows, len(rows), page_number(), svc.config.server.page_size)
    return _list_page(
        "Systems",
        "page_systems",
        page,
        ["system", "label", "tasks"],
        "system",
        "Question answering systems evaluated here.",
    )

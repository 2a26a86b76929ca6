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

from collections.abc import Callable
from dataclasses import dataclass

from flask import Blueprint, Response, render_template, request
from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad

from server.linked_data.description import render_description
from server.linked_data.pipeline import Reader, Resource, serve
from server.linked_data.terms import term_view
from server.listings import ExperimentEntry
from server.pages.pagination import Page, page_links, page_number, paginate, view_quads
from server.services import Services, Visibility, services
from server.sparql.page import query_link
from server.web.auth import request_tokens
from server.web.negotiation import PAGE_FORMATS, RDF_FORMATS, split_extension
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


@dataclass(frozen=True, slots=True)
class ListPage:
    """A list as one page shows it: what it is, and the page of rows."""

    title: str
    query_name: str
    columns: list[str]
    member_column: str
    intro: str
    page: Page[Row]


def _list_html(reader: Reader, listed: ListPage) -> str:
    svc, page = reader.svc, listed.page
    table = [
        {c: (term_view(r[c], svc.base) if r.get(c) is not None else None) for c in listed.columns}
        for r in page.rows
    ]
    links = page.neighbours(reader.stem)
    return render_template(
        "list.html",
        title=listed.title,
        columns=listed.columns,
        rows=table,
        intro=listed.intro,
        page=page,
        prev_url=links.get("prev"),
        next_url=links.get("next"),
        query_href=query_link(queries.load(listed.query_name)),
        alternates=[(f"{reader.stem}.{r.extension}", r.media_type, r.label) for r in PAGE_FORMATS],
    )


def _list_quads(reader: Reader, listed: ListPage) -> list[Quad]:
    collection = NamedNode(reader.base + reader.stem)
    g = DefaultGraph()
    quads = [Quad(collection, RDFS.label, Literal(listed.title, language="en"), g)]
    for row in listed.page.rows:
        member = row.get(listed.member_column)
        if isinstance(member, NamedNode):
            quads.append(Quad(collection, DCTERMS.hasPart, member, g))
            quads.append(Quad(collection, HYDRA.member, member, g))
    quads += view_quads(collection, listed.page, reader.stem, reader.base)  # type: ignore[arg-type]
    return quads


def _page_links(reader: Reader, listed: ListPage) -> list[str]:
    return page_links(listed.page, reader.stem)  # type: ignore[arg-type]


def _serve_list(load: Callable[[Reader], ListPage]) -> Response:
    stem, extension = split_extension(request.path.rstrip("/"))
    resource = Resource(
        formats=PAGE_FORMATS, load=load, html=_list_html, quads=_list_quads, links=_page_links
    )
    return serve(resource, stem, extension)


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

    def _load(reader: Reader) -> ListPage:
        rows = _dataset_rows(reader.svc, reader.vis)
        page = paginate(rows, len(rows), page_number(), reader.svc.config.server.page_size)
        return ListPage(
            "Datasets",
            "page_datasets",
            ["dataset", "name", "title", "versions", "questions"],
            "dataset",
            "Benchmarks loaded into this store. Each has one or more versions "
            "(files, identified by SHA-256); experiments cite a version.",
            page,  # type: ignore[arg-type]
        )

    return _serve_list(_load)


@bp.route("/experiments")
@bp.route("/experiments.<ext>")
def experiments(ext: str | None = None) -> Response:
    """Every experiment the reader may see, newest first, a page at a time."""

    def _load(reader: Reader) -> ListPage:
        visible = _visible_experiments(reader.svc, reader.vis)
        size = reader.svc.config.server.page_size
        shown = paginate(visible, len(visible), page_number(), size)
        rows: list[Row] = [
            {
                "experiment": NamedNode(e.iri),
                "tasks": Literal(str(e.tasks), datatype=XSD.integer),
                "started": Literal(e.started) if e.started else None,
                "states": Literal(" ".join(e.states)),
            }
            for e in shown.rows
        ]
        return ListPage(
            "Experiments",
            "page_experiments",
            ["experiment", "tasks", "started", "states"],
            "experiment",
            "Experiments ran QA systems on dataset versions. Private experiments "
            "appear only to holders of their access token.",
            Page(shown.number, shown.size, shown.total, rows),
        )

    return _serve_list(_load)


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

    def _load(reader: Reader) -> ListPage:
        svc, vis = reader.svc, reader.vis
        # Summed over the experiments' summaries once per change of what the reader may see.
        rows: list[Row] = svc.cache.get_or_make(
            svc.generation,
            f"system-rows {vis.key} {svc.experiments.version}",
            lambda: _system_rows(svc, vis),
        )
        page = paginate(rows, len(rows), page_number(), svc.config.server.page_size)
        return ListPage(
            "Systems",
            "page_systems",
            ["system", "label", "tasks"],
            "system",
            "Question answering systems evaluated here.",
            page,
        )

    return _serve_list(_load)

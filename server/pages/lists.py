"""The home page and the lists of datasets, experiments and systems.

The pages of single datasets, experiments, tasks and systems are their siblings in
``server.pages``; the VoID description and the dump live in ``server.linked_data``.

Each list is shown a page at a time (``server.web.pagination``), is also an RDF document (a
``hydra:Collection`` of its members: the list page negotiates like any resource) and links to a
SPARQL query that reproduces it. The experiment list shows each experiment's systems, dataset
versions, headline result, state and date, and sorts (``?sort=`` newest, oldest, score, system,
dataset); the system list each system's experiments, datasets and best result. Both come from the
experiment index (``server.listings``, through ``server.pages.summaries``), filtered by what the
reader may see, so a page costs what it shows whatever the store holds; the datasets come from a
canned query on the catalog graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response, render_template, request
from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad

from server.linked_data.description import render_description
from server.linked_data.pipeline import Reader, Resource, serve
from server.linked_data.terms import query_link
from server.listings import ExperimentEntry
from server.pages.summaries import SORTS, experiment_row, sort_key, system_rows
from server.services import Services, Visibility, services
from server.web.auth import request_tokens
from server.web.negotiation import split_extension
from server.web.pagination import Page, page_links, page_number, paginate, view_quads
from server.web.problems import Problem
from server.web.representations import PAGE_FORMATS, RDF_FORMATS
from store import graphs, queries
from vocab import iris
from vocab.standard import DCTERMS, HYDRA, RDFS

bp = Blueprint("pages", __name__)


@dataclass(frozen=True, slots=True)
class ListPage:
    """A list as one page shows it: its template and title, the members of the page (the RDF
    form), the query that reproduces it, and what the template shows."""

    template: str
    title: str
    members: list[NamedNode]
    page: Page[Any]
    query_name: str
    shown: dict[str, Any]


def _list_html(reader: Reader, listed: ListPage) -> str:
    links = listed.page.neighbours(reader.stem)
    return render_template(
        listed.template,
        title=listed.title,
        page=listed.page,
        prev_url=links.get("prev"),
        next_url=links.get("next"),
        query_href=query_link(queries.load(listed.query_name)),
        alternates=[(f"{reader.stem}.{r.extension}", r.media_type, r.label) for r in PAGE_FORMATS],
        **listed.shown,
    )


def _list_quads(reader: Reader, listed: ListPage) -> list[Quad]:
    collection = NamedNode(reader.base + reader.stem)
    g = DefaultGraph()
    quads = [Quad(collection, RDFS.label, Literal(listed.title, language="en"), g)]
    for member in listed.members:
        quads.append(Quad(collection, DCTERMS.hasPart, member, g))
        quads.append(Quad(collection, HYDRA.member, member, g))
    quads += view_quads(collection, listed.page, reader.stem, reader.base)
    return quads


def _page_links(reader: Reader, listed: ListPage) -> list[str]:
    return page_links(listed.page, reader.stem)


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
    return svc.remember(
        f"experiments-visible {vis.key} {svc.experiments.version}",
        lambda: list(svc.experiments.newest_first(vis.can_see)),
    )


def _dataset_rows(svc: Services, vis: Visibility) -> list[dict[str, object]]:
    """Return the catalog's datasets (one query per generation; none if it is not visible)."""
    catalog = graphs.catalog_graph(svc.base)
    if not vis.can_see(catalog):
        return []

    def _select() -> list[dict[str, object]]:
        result = svc.store.query(
            queries.load("page_datasets"), default_graph=[catalog], named_graphs=[]
        )
        names = [v.value for v in result.variables]  # type: ignore[union-attr]
        return [{n: s[n] for n in names} for s in result]  # type: ignore[union-attr]

    return svc.remember("dataset-rows", _select)


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


def _value(row: dict[str, object], name: str) -> str:
    found = row.get(name)
    return str(getattr(found, "value", "")) if found is not None else ""


@bp.route("/datasets")
@bp.route("/datasets.<ext>")
def datasets(ext: str | None = None) -> Response:
    """Every benchmark dataset in the catalog, a page at a time."""

    def _load(reader: Reader) -> ListPage:
        rows = _dataset_rows(reader.svc, reader.vis)
        page = paginate(rows, len(rows), page_number(), reader.svc.config.server.page_size)
        shown = [
            {
                "path": _value(row, "dataset")[len(reader.base) :],
                "name": _value(row, "name"),
                "title": _value(row, "title") or _value(row, "name"),
                "versions": _value(row, "versions"),
                "questions": _value(row, "questions"),
            }
            for row in page.rows
        ]
        members = [r["dataset"] for r in page.rows if isinstance(r.get("dataset"), NamedNode)]
        return ListPage(
            "datasets.html", "Datasets", members, page, "page_datasets",  # type: ignore[arg-type]
            {"rows": shown},
        )  # fmt: skip

    return _serve_list(_load)


def _sort() -> str:
    sort = request.args.get("sort", "").strip() or SORTS[0]
    if sort not in SORTS:
        raise Problem(400, f"Unknown sort {sort[:30]!r}; expected one of: {', '.join(SORTS)}")
    return sort


def _sorted_experiments(svc: Services, vis: Visibility, sort: str) -> Sequence[ExperimentEntry]:
    visible = _visible_experiments(svc, vis)
    if sort == "newest":
        return visible
    if sort == "oldest":
        return visible[::-1]
    key = sort_key(sort, svc.base)
    if key is None:
        return visible
    return svc.remember(
        f"experiments-sorted {sort} {vis.key} {svc.experiments.version}",
        lambda: sorted(visible, key=key),
    )


@bp.route("/experiments")
@bp.route("/experiments.<ext>")
def experiments(ext: str | None = None) -> Response:
    """Every experiment the reader may see, newest first (or sorted), a page at a time."""

    def _load(reader: Reader) -> ListPage:
        sort = _sort()
        entries = _sorted_experiments(reader.svc, reader.vis, sort)
        size = reader.svc.config.server.page_size
        page = paginate(entries, len(entries), page_number(), size)
        rows = [experiment_row(e, reader.base) for e in page.rows]
        members = [NamedNode(e.iri) for e in page.rows]
        shown = {"rows": rows, "sort": sort, "sorts": SORTS}
        return ListPage("experiments.html", "Experiments", members, page, "page_experiments", shown)

    return _serve_list(_load)


@bp.route("/systems")
@bp.route("/systems.<ext>")
def systems(ext: str | None = None) -> Response:
    """Every system that took part in a visible task, a page at a time."""

    def _load(reader: Reader) -> ListPage:
        svc, vis = reader.svc, reader.vis
        # Summed over the experiments' summaries once per change of what the reader may see.
        rows = svc.remember(
            f"system-rows {vis.key} {svc.experiments.version}",
            lambda: system_rows(_visible_experiments(svc, vis), svc.base),
        )
        page = paginate(rows, len(rows), page_number(), svc.config.server.page_size)
        members = [NamedNode(r.iri) for r in page.rows]
        return ListPage(
            "systems.html", "Systems", members, page, "page_systems", {"rows": page.rows}
        )

    return _serve_list(_load)

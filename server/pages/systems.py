"""The HTML page of a system (``/system/{slug}``): what it is and every task it took part in.

The experiments of a system come from the experiment index (``server.listings``),
newest first, each only if the reader may see its graph, ``server.page_size`` of them per page
(``server.web.pagination``); per experiment on the page the tasks of this system are read
with their QA results. Nothing outside the visible experiment graphs is read, and a page costs
what it shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

from flask import Blueprint, Response, render_template, request
from pyoxigraph import Literal, NamedNode

from evaluators.experiments.read import TaskSummary
from server.linked_data.routes import alternate_links, serve_resource
from server.listings import ExperimentEntry
from server.pages.experiments import cached_experiment
from server.pages.summaries import results_across_datasets
from server.pages.tables import Footnotes, main_columns, qald_rows
from server.services import Services, Visibility
from server.sparql.page import query_link
from server.web.pagination import page_number, paginate
from server.web.problems import Problem
from store import queries
from vocab.project import QAB
from vocab.standard import DCTERMS, RDF, RDFS

bp = Blueprint("system", __name__)

_SCAN = 10_000


@dataclass(frozen=True, slots=True)
class SystemFacts:
    """What the system page says about the system itself."""

    label: str
    kinds: tuple[str, ...]
    descriptions: tuple[str, ...]


def _literals(svc: Services, iri: NamedNode, predicate: NamedNode, graph: NamedNode) -> list[str]:
    return [
        q.object.value
        for q in svc.store.quads(iri, predicate, None, graph)
        if isinstance(q.object, Literal)
    ]


def system_page(svc: Services, iri: NamedNode, vis: Visibility) -> str:
    """Render a system with its tasks in the experiments the reader may see, a page at a time.

    A page shows up to ``server.page_size`` experiments' tasks (tens of milliseconds to
    render), so it is rendered once per store generation, reader visibility and page number.

    Raises:
        Problem: 404 when no visible graph describes the system, or the page is past the end.
    """
    key = f"system-page {iri.value} {vis.key} {request.full_path}"
    page: str = svc.cache.get_or_make(svc.generation, key, lambda: _system_page(svc, iri, vis))
    return page


def _system_page(svc: Services, iri: NamedNode, vis: Visibility) -> str:
    key = f"system-experiments {iri.value} {vis.key} {svc.experiments.version}"
    entries: list[ExperimentEntry] = svc.cache.get_or_make(
        svc.generation, key, lambda: list(svc.experiments.of_system(iri.value, vis.can_see))
    )
    described = [e.graph for e in entries[:1]] or [
        q.graph_name
        for q in islice(svc.store.quads(iri, RDF.type, QAB.System), _SCAN)
        if isinstance(q.graph_name, NamedNode) and vis.can_see(q.graph_name)
    ][:1]
    if not described:
        raise Problem(404, f"There is no system {iri.value} (or it is not published).")
    page = paginate(entries, len(entries), page_number(), svc.config.server.page_size)
    graph = described[0]
    labels = set(_literals(svc, iri, RDFS.label, graph))
    tasks: list[TaskSummary] = []
    for entry in page.rows:
        read = cached_experiment(svc, entry.id)
        own = {label for label in _literals(svc, iri, RDFS.label, entry.graph)} or labels
        tasks.extend(t for t in read.tasks if t.plan.system in own)
    facts = SystemFacts(
        min(labels) if labels else iri.value.rsplit("/", 1)[-1],
        tuple(sorted(_literals(svc, iri, QAB.systemKind, graph))),
        tuple(sorted(_literals(svc, iri, DCTERMS.description, graph))),
    )
    notes = Footnotes()
    links = page.neighbours(request.path)
    return render_template(
        "system.html",
        across=results_across_datasets(entries, svc.base, iri.value),
        title=f"System {facts.label}",
        iri=iri.value,
        facts=facts,
        columns=main_columns(),
        rows=qald_rows(tuple(tasks), notes),
        footnotes=notes.listing(),
        experiments=page.total,
        page=page,
        prev_url=links.get("prev"),
        next_url=links.get("next"),
        alternates=alternate_links(),
        query_href=query_link(
            queries.load("page_system_tasks").replace("#BINDINGS#", f"VALUES ?system {{ {iri} }}")
        ),
    )


@bp.route("/system/<path:rest>")
def system(rest: str) -> Response:
    """A QA system: this page, or its document as RDF."""
    return serve_resource("system", rest, system_page)

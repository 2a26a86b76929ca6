"""The HTML page of a system (``/system/{slug}``): what it is and every task it took part in.

The experiments of a system come from the experiment index (``server.listings``), newest
first, each only if the reader may see its graph, ``server.page_size`` of them per page
(``server.web.pagination``). The page is read from the index alone: its results across
datasets, and one row per task of this system on the page's experiments with the task's QA
values (the index keeps every task's aggregate values); the sub-experiments are on each task's
page. Only the system's own description is read from the store, so a page costs what it shows
whatever the number of experiments.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

from flask import Blueprint, Response, render_template, request
from pyoxigraph import Literal, NamedNode

from evaluators.reports.headline import headline
from evaluators.results import MEASURES, QA
from server.linked_data.routes import alternate_links, serve_resource
from server.linked_data.terms import query_link
from server.listings import ExperimentEntry, TaskEntry, TaskScores
from server.pages.summaries import (
    PROFILE_NAMES,
    Dataset,
    dataset_of,
    is_qa,
    results_across_datasets,
)
from server.pages.tables import DASH, MAIN_MEASURES, Cell, format_value, main_columns
from server.services import Services, Visibility
from server.web.pagination import page_number, paginate
from server.web.problems import Problem
from store import queries
from vocab import iris
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


@dataclass(frozen=True, slots=True)
class SystemTask:
    """One task of the system as its page lists it: the plan, the QA cells and the state."""

    iri: str
    number: str
    experiment: str
    dataset: Dataset | None
    language: str
    profile: str
    cells: tuple[Cell, ...]
    errors: Cell
    millis: Cell
    state: str


def system_tasks(entry: ExperimentEntry, base: str, system: str) -> list[SystemTask]:
    """Return the tasks of ``system`` in one experiment with their QA values, in task order."""
    qa = {s.task: s for s in entry.scores if is_qa(s) and s.system == system}
    return [
        _system_task(entry, t, qa.get(t.task), base) for t in entry.task_list if t.system == system
    ]


def _system_task(
    entry: ExperimentEntry, task: TaskEntry, scores: TaskScores | None, base: str
) -> SystemTask:
    profile = PROFILE_NAMES.get(task.profile or "", (task.profile or DASH).rsplit("/", 1)[-1])
    first = headline(profile, QA)[0] if profile in PROFILE_NAMES.values() else None
    number = iris.task_number_of(task.task)

    def value(measure: str) -> Cell:
        found = scores.value(MEASURES[measure].term.value) if scores is not None else None
        if found is None:
            return Cell(DASH, "no value")
        return Cell(format_value(measure, found), headline=measure == first)

    return SystemTask(
        iri=task.task,
        number=DASH if number is None else str(number),
        experiment=entry.id,
        dataset=dataset_of(base, task.version) if task.version else None,
        language=task.language or DASH,
        profile=profile,
        cells=tuple(value(m) for m in MAIN_MEASURES) if scores is not None else (),
        errors=value("errors"),
        millis=value("avg_millis"),
        state=(task.state or "unknown").rsplit("#", 1)[-1].lower(),
    )


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
    page: str = svc.remember(key, lambda: _system_page(svc, iri, vis))
    return page


def _system_page(svc: Services, iri: NamedNode, vis: Visibility) -> str:
    key = f"system-experiments {iri.value} {vis.key} {svc.experiments.version}"
    entries: list[ExperimentEntry] = svc.remember(
        key, lambda: list(svc.experiments.of_system(iri.value, vis.can_see))
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
    tasks = [t for entry in page.rows for t in system_tasks(entry, svc.base, iri.value)]
    facts = SystemFacts(
        min(labels) if labels else iri.value.rsplit("/", 1)[-1],
        tuple(sorted(_literals(svc, iri, QAB.systemKind, graph))),
        tuple(sorted(_literals(svc, iri, DCTERMS.description, graph))),
    )
    links = page.neighbours(request.path)
    return render_template(
        "system.html",
        across=results_across_datasets(entries, svc.base, iri.value),
        title=f"System {facts.label}",
        iri=iri.value,
        facts=facts,
        columns=main_columns(),
        tasks=tasks,
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

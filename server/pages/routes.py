"""The routes of experiments and tasks: ``/experiment/{id}`` and ``/task/{experiment}/{n}``.

What the pages show lives in ``server.pages.experiments`` and ``server.pages.tasks``, which know
no request (query workers render anonymous readers' pages with them). This module is their
request side: which resource the URL names, what the reader may see (404), the query
parameters of a task page (400 for an experiment type the task lacks, 404 past the last page),
the owner's publish action, the CSV form, and the per-generation memo of rendered pages.
"""

from __future__ import annotations

from flask import Blueprint, Response, request
from pyoxigraph import NamedNode

from evaluators.experiments.read import TaskSummary
from evaluators.reports.experiment import paper_tables
from evaluators.reports.render import Table, to_csv, to_latex, to_markdown
from evaluators.reports.tables import results_table
from server.linked_data.routes import alternate_links, generic_page, serve_resource
from server.pages.experiments import Viewer, cached_report, cached_task, experiment_html
from server.pages.tasks import Filters, PastTheEnd, TaskView, filters_of, task_csv, task_html
from server.services import Services, Visibility
from server.web import auth
from server.web.pagination import page_number
from server.web.problems import Problem
from server.web.representations import CSV, LATEX, MARKDOWN
from store import graphs
from vocab import iris

bp = Blueprint("experiment", __name__)


def experiment_page(svc: Services, iri: NamedNode, vis: Visibility) -> str:
    """Render an experiment the reader may see.

    Raises:
        Problem: 404 when ``iri`` is not an experiment the reader may see.
    """
    graph = graphs.experiment_graph_of(svc.base, iri.value)
    if graph is None:
        # Below an experiment's IRI (not an experiment itself): its triples.
        return generic_page(svc, iri, vis)
    if not vis.can_see(graph):
        raise Problem(404, f"There is no experiment {iri.value} (or it is not published).")
    published = graph not in [p.graph for p in vis.private]
    if graph in vis.unlocked:
        # The owner's page carries the session's CSRF token: rendered for each request.
        viewer = Viewer(tuple(alternate_links()), published, auth.csrf_token())
        return experiment_html(svc, iri, graph, viewer)
    return svc.remember(
        f"experiment-page {iri.value} {request.path} {vis.key}",
        lambda: experiment_html(svc, iri, graph, Viewer(tuple(alternate_links()), published)),
    )


def experiment_csv(svc: Services, iri: NamedNode, vis: Visibility) -> bytes:
    """Return an experiment's results table as CSV (one row per task and experiment type).

    Raises:
        Problem: 404 when ``iri`` is not an experiment the reader may see.
    """
    graph = graphs.experiment_graph_of(svc.base, iri.value)
    if graph is None or not vis.can_see(graph):
        raise Problem(404, f"There is no experiment {iri.value} (or it is not published).")
    report = cached_report(svc, iris.experiment_id_of(iri.value))
    return to_csv(results_table(report.read.tasks, report.sanity)).encode("utf-8")


def experiment_latex(svc: Services, iri: NamedNode, vis: Visibility) -> bytes:
    """Return an experiment's tables for a paper as LaTeX (booktabs), with the intervals.

    Raises:
        Problem: 404 when ``iri`` is not an experiment the reader may see.
    """
    return to_latex(_paper_tables(svc, iri, vis)).encode("utf-8")


def experiment_markdown(svc: Services, iri: NamedNode, vis: Visibility) -> bytes:
    """Return an experiment's tables for a paper as Markdown, with the intervals.

    Raises:
        Problem: 404 when ``iri`` is not an experiment the reader may see.
    """
    return to_markdown(_paper_tables(svc, iri, vis)).encode("utf-8")


def _paper_tables(svc: Services, iri: NamedNode, vis: Visibility) -> list[Table]:
    graph = graphs.experiment_graph_of(svc.base, iri.value)
    if graph is None or not vis.can_see(graph):
        raise Problem(404, f"There is no experiment {iri.value} (or it is not published).")
    return paper_tables(cached_report(svc, iris.experiment_id_of(iri.value)))


def _task_parts(svc: Services, iri: NamedNode) -> tuple[str, int] | None:
    ref = iris.parse(svc.base, iri.value)
    if ref is None or ref.kind != "task" or not ref.exact or not ref.number:
        return None
    return ref.parts[0], ref.number


def _visible_task(
    svc: Services, iri: NamedNode, vis: Visibility
) -> tuple[str, int, NamedNode, TaskSummary, Filters] | None:
    """Return a task the reader may see, with the filters its query parameters choose (None:
    the IRI lies below a task, not a task itself).

    Raises:
        Problem: 404 when the task does not exist or is not visible; 400 for an experiment
            type the task does not have.
    """
    parts = _task_parts(svc, iri)
    if parts is None:
        return None
    experiment_id, number = parts
    graph = graphs.experiment_graph(svc.base, experiment_id)
    task = cached_task(svc, experiment_id, number) if vis.can_see(graph) else None
    if task is None:
        raise Problem(404, f"There is no task {iri.value} (or it is not published).")
    types = [r.experiment_type for r in task.results]
    chosen = filters_of(request.args.items(multi=True), types, page_number())
    if isinstance(chosen, str):
        raise Problem(
            400,
            f"This task has no experiment type {chosen[:40]!r}; it has: " + ", ".join(types),
            extensions={"types": types},
        )
    return experiment_id, number, graph, task, chosen


def task_page(svc: Services, iri: NamedNode, vis: Visibility) -> str:
    """Render a task the reader may see.

    Raises:
        Problem: 404 when the task does not exist or is not visible, or past the last page of
            questions; 400 for an experiment type the task does not have.
    """
    found = _visible_task(svc, iri, vis)
    if found is None:
        # Below a task's IRI (not a task itself): its triples.
        return generic_page(svc, iri, vis)
    _, _, graph, task, chosen = found
    size = svc.config.server.page_size
    try:
        # The page depends on the store, the visible graphs and the query string only.
        return svc.remember(
            f"task-page {request.full_path} {vis.key}",
            lambda: task_html(
                svc,
                iri,
                graph,
                task,
                chosen,
                TaskView(request.path, size, tuple(alternate_links()), vis.can_see),
            ),
        )
    except PastTheEnd as exc:
        raise Problem(404, str(exc)) from exc


def task_table_csv(svc: Services, iri: NamedNode, vis: Visibility) -> bytes:
    """Return a task's per-question table as CSV (``tasks.CSV_ROWS`` questions a page).

    Raises:
        Problem: as ``task_page``; 404 for a resource below a task.
    """
    found = _visible_task(svc, iri, vis)
    if found is None:
        raise Problem(404, f"{iri.value} is not a task; only tasks have a per-question CSV.")
    _, _, graph, task, chosen = found
    version = graphs.dataset_graph(svc.base, task.plan.dataset, task.plan.version)
    try:
        return task_csv(svc, iri, graph, task, chosen, version if vis.can_see(version) else None)
    except PastTheEnd as exc:
        raise Problem(404, str(exc)) from exc


@bp.route("/experiment/<path:rest>")
def experiment(rest: str) -> Response:
    """An experiment: this page, its whole graph in an RDF form, its results as CSV, or its
    tables for a paper as LaTeX or Markdown."""
    extra = [(CSV, experiment_csv), (LATEX, experiment_latex), (MARKDOWN, experiment_markdown)]
    return serve_resource("experiment", rest, experiment_page, extra)


@bp.route("/task/<path:rest>")
def task(rest: str) -> Response:
    """One task of an experiment: this page, its document (with observations) as RDF, or its
    per-question table as CSV."""
    return serve_resource("task", rest, task_page, [(CSV, task_table_csv)])

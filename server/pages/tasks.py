"""The routes of experiments and tasks, and the HTML page of a task (``/task/{experiment}/{n}``).

``/experiment/{id}`` is served here from ``server.pages.experiments`` (which knows no request,
so query workers render it too), with its CSV form.

A task page shows its results and per-question diagnostics.

The page shows the task's aggregate results (the experiment page's rows for this task), then one row
per question of one experiment type: the question (linked, with its text), gold values against
system values (matched ones marked), the matched pairs and the rule that matched each, the
per-question measures (TP/FP/FN, P/R/F1, ...), and the system's error. Query parameters filter it on
the server, so it works without JavaScript: ``type`` (an experiment type the task has, default
``QA``), ``wrong=1`` (only questions with F1 below 1 or an error) and ``page`` (``server.page_size``
questions per page; a page past the end is 404). Breakdowns by answer type, aggregation, hybrid and
language follow. The question rows are read once per store generation and cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from flask import Blueprint, Response, render_template, request
from pyoxigraph import NamedNode

from evaluators import cube
from evaluators.experiments.read import TaskSummary
from evaluators.experiments.results import questions_query
from evaluators.qa.scoring import Breakdown
from evaluators.reports.render import to_csv
from evaluators.reports.tables import results_table
from evaluators.results import BIOASQ_TYPES, MeasureValue
from server.linked_data.routes import alternate_links, generic_page, serve_resource
from server.linked_data.terms import href, query_link
from server.pages.experiments import Viewer, cached_report, cached_task, experiment_html
from server.pages.tables import (
    MAIN_MEASURES,
    Cell,
    Footnotes,
    bioasq_columns,
    bioasq_rows,
    cell,
    column,
    main_columns,
    qald_rows,
    type_cell,
)
from server.pages.task_rows import (
    QuestionLine,
    TaskTable,
    diagnostics,
    question_texts,
    task_breakdowns,
    task_table,
)
from server.services import Services, Visibility
from server.web import auth
from server.web.negotiation import CSV
from server.web.pagination import page_number, paginate
from server.web.problems import Problem
from store import graphs
from vocab import iris

bp = Blueprint("task", __name__)


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
    alternates = tuple(alternate_links())
    published = graph not in [p.graph for p in vis.private]
    if graph in vis.unlocked:
        # The owner's page carries the session's CSRF token: rendered for each request.
        viewer = Viewer(alternates, published, auth.csrf_token())
        return experiment_html(svc, iri, graph, viewer)
    return svc.remember(
        f"experiment-page {iri.value} {request.path} {vis.key}",
        lambda: experiment_html(svc, iri, graph, Viewer(alternates, published)),
    )


def experiment_csv(svc: Services, iri: NamedNode, vis: Visibility) -> bytes:
    """Return an experiment's results table as CSV (one row per task and experiment type).

    Raises:
        Problem: 404 when ``iri`` is not an experiment the reader may see.
    """
    graph = graphs.experiment_graph_of(svc.base, iri.value)
    if graph is None or not vis.can_see(graph):
        raise Problem(404, f"There is no experiment {iri.value} (or it is not published).")
    report = cached_report(svc, iri.value.rsplit("/", 1)[-1])
    return to_csv(results_table(report.read.tasks, report.sanity)).encode("utf-8")


@bp.route("/experiment/<path:rest>")
def experiment(rest: str) -> Response:
    """An experiment: this page, its whole graph in an RDF form, or its results as CSV."""
    return serve_resource("experiment", rest, experiment_page, [(CSV, experiment_csv)])


@dataclass(frozen=True, slots=True)
class Filters:
    """The question filters of a task page, from its query parameters."""

    experiment_type: str
    only_wrong: bool
    page: int

    def url(self, stem: str, **changes: object) -> str:
        """Return the page URL with these filters, some of them changed."""
        params: dict[str, object] = {"type": self.experiment_type, "page": self.page}
        if self.only_wrong:
            params["wrong"] = "1"
        params.update(changes)
        if not params.get("wrong"):
            params.pop("wrong", None)
        return stem + "?" + urlencode(params)


def _filters(types: list[str]) -> Filters:
    wanted = request.args.get("type") or ("QA" if "QA" in types else (types[0] if types else ""))
    if types and wanted not in types:
        raise Problem(
            400,
            f"This task has no experiment type {wanted[:40]!r}; it has: " + ", ".join(types),
            extensions={"types": types},
        )
    page = page_number()
    only_wrong = request.args.get("wrong", "") in ("1", "on", "true", "yes")
    return Filters(wanted, only_wrong, page)


def _task_parts(svc: Services, iri: NamedNode) -> tuple[str, int] | None:
    ref = iris.parse(svc.base, iri.value)
    if ref is None or ref.kind != "task" or not ref.exact or not ref.number:
        return None
    return ref.parts[0], ref.number


def _table(
    svc: Services, graph: NamedNode, iri: NamedNode, kind: str, version_graph: NamedNode | None
) -> TaskTable:
    term = cube.experiment_type_term(svc.base, kind)
    return svc.remember(
        f"task-table {iri.value} {kind}",
        lambda: task_table(svc.store, graph, iri, term, version_graph),
    )


def task_page(svc: Services, iri: NamedNode, vis: Visibility) -> str:
    """Render a task the reader may see.

    Raises:
        Problem: 404 when the task does not exist or is not visible; 400 for an experiment
            type the task does not have.
    """
    parts = _task_parts(svc, iri)
    if parts is None:
        # Below a task's IRI (not a task itself): its triples.
        return generic_page(svc, iri, vis)
    experiment_id, number = parts
    graph = graphs.experiment_graph(svc.base, experiment_id)
    task = cached_task(svc, experiment_id, number) if vis.can_see(graph) else None
    if task is None:
        raise Problem(404, f"There is no task {iri.value} (or it is not published).")
    # The page depends on the store, the visible graphs and the query string only.
    return svc.remember(
        f"task-page {request.full_path} {vis.key}",
        lambda: _render(svc, iri, vis, task, graph, experiment_id),
    )


def _render(
    svc: Services,
    iri: NamedNode,
    vis: Visibility,
    task: TaskSummary,
    graph: NamedNode,
    experiment_id: str,
) -> str:
    number = task.plan.number
    types = [r.experiment_type for r in task.results]
    chosen = _filters(types)
    version = graphs.dataset_graph(svc.base, task.plan.dataset, task.plan.version)
    version_graph = version if vis.can_see(version) else None
    table = (
        _table(svc, graph, iri, chosen.experiment_type, version_graph)
        if types
        else TaskTable((), ())
    )
    lines = table.select(chosen.only_wrong)
    paged = paginate(lines, len(lines), chosen.page, svc.config.server.page_size)
    page, pages, shown = paged.number, paged.pages, paged.rows
    texts = question_texts(
        svc.store, [line.values.question for line in shown], version_graph, task.plan.language
    )
    notes = Footnotes()
    bio = chosen.experiment_type in BIOASQ_TYPES
    bio_cols = bioasq_columns((task,))
    stem = request.path
    return render_template(
        "task.html",
        title=f"Task {number} of experiment {experiment_id}",
        iri=iri.value,
        experiment_id=experiment_id,
        task=task,
        columns=main_columns(),
        rows=qald_rows((task,), notes),
        bio_columns=bio_cols,
        bio_rows=bioasq_rows((task,), bio_cols, notes),
        types=types,
        filters=chosen,
        is_bioasq=bio,
        measure_columns=[column(m) for m in table.measures],
        questions=[
            (
                line,
                diagnostics(svc.store, svc.base, graph, iri, chosen.experiment_type, line, texts),
                [cell(v, notes) for v in _ordered(line, table.measures)],
                href(line.values.question.value, svc.base),
            )
            for line in shown
        ],
        total=len(table.lines),
        selected=len(lines),
        page=page,
        pages=pages,
        prev_url=chosen.url(stem, page=page - 1) if page > 1 else None,
        next_url=chosen.url(stem, page=page + 1) if page < pages else None,
        breakdowns=_breakdowns(svc, task, table, chosen.experiment_type, notes),
        footnotes=notes.listing(),
        alternates=alternate_links(),
        query_href=query_link(
            questions_query(graph, iri, cube.experiment_type_term(svc.base, chosen.experiment_type))
        ),
    )


def _ordered(line: QuestionLine, measures: tuple[str, ...]) -> list[MeasureValue | None]:
    values = {m.measure: m for m in line.values.values}
    return [values.get(m) for m in measures]


@dataclass(frozen=True, slots=True)
class BreakdownRow:
    """One group of a breakdown with its formatted measures."""

    dimension: str
    group: str
    questions: int
    cells: tuple[Cell, ...]


def _breakdowns(
    svc: Services, task: TaskSummary, table: TaskTable, kind: str, notes: Footnotes
) -> list[BreakdownRow]:
    found: tuple[Breakdown, ...] = svc.remember(
        f"task-breakdowns {task.iri} {kind}",
        lambda: task_breakdowns(svc.store, svc.base, task, table, kind),
    )
    # A dimension whose only group is "unknown" says nothing about the questions.
    shown = {b.dimension for b in found if b.group != "unknown"}
    return [
        BreakdownRow(
            b.dimension,
            b.group,
            b.questions,
            tuple(
                type_cell(kind, c, next((m for m in b.measures if m.measure == c), None), notes)
                for c in MAIN_MEASURES
            ),
        )
        for b in found
        if b.dimension in shown
    ]


@bp.route("/task/<path:rest>")
def task(rest: str) -> Response:
    """One task of an experiment: this page, or its document (with observations) as RDF."""
    return serve_resource("task", rest, task_page)

"""The HTML page of an experiment (``/experiment/{id}``), in GERBIL's shape.

A header with the citable IRI, the state, creation and publication times and, for the holder of
the access token of a private experiment, the publish action; then one table row per task and
experiment type with GERBIL's measures, errors, time and state, a second table for BioASQ
types, footnotes for undefined values, per-task links to the task pages, the provenance, and a
link to the SPARQL query behind the tables. While tasks are queued or running the page reloads
itself every few seconds (a ``meta refresh``: it works without JavaScript). The RDF forms of
the experiment come from ``server.linked_data.routes.serve_resource``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from flask import Blueprint, Response, render_template, request
from pyoxigraph import NamedNode

from evaluators.experiments.model import TaskStatus
from evaluators.experiments.read import ExperimentRead, TaskSummary, read_experiment, read_task
from evaluators.experiments.results import experiment_table_query
from evaluators.reports.experiment import ExperimentReport, experiment_report
from evaluators.reports.headline import headline
from evaluators.reports.render import to_csv
from evaluators.reports.tables import results_table, significance_tables, summary_table
from evaluators.results import BIOASQ_TYPES, type_order
from server.linked_data.routes import alternate_links, generic_page, serve_resource
from server.linked_data.terms import describe
from server.pages.tables import (
    Footnotes,
    TaskRows,
    bioasq_columns,
    bioasq_rows,
    classic_columns,
    classic_rows,
    column,
    main_columns,
    qald_rows,
    report_table,
    text2sparql_columns,
    text2sparql_rows,
)
from server.services import Services, Visibility
from server.sparql.page import query_link
from server.web import auth
from server.web.negotiation import CSV
from server.web.problems import Problem
from store import graphs

bp = Blueprint("experiment", __name__)

# Seconds between reloads of a page whose tasks are still queued or running.
REFRESH_SECONDS = 3
# The experiment types whose systems x datasets matrices open the page (the headline results).
_GLANCE_TYPES = frozenset({"QA", *BIOASQ_TYPES})
_OPEN = (TaskStatus.QUEUED, TaskStatus.RUNNING)


@dataclass(frozen=True, slots=True)
class Progress:
    """How far an experiment got: counts per state, and whether anything is still open."""

    total: int
    done: int
    counts: tuple[tuple[str, int], ...]
    running: bool

    @property
    def label(self) -> str:
        """Return a one-line state of the whole experiment."""
        if not self.total:
            return "empty"
        if self.running:
            return f"running: {self.done} of {self.total} tasks done"
        if all(state == TaskStatus.FINISHED.value for state, _ in self.counts):
            return "finished"
        return "ended: " + ", ".join(f"{n} {state}" for state, n in self.counts)


def progress(tasks: tuple[TaskSummary, ...]) -> Progress:
    """Return the progress of an experiment's tasks.

    >>> progress(()).label
    'empty'
    """
    counts = Counter(t.status.value for t in tasks)
    open_ = sum(1 for t in tasks if t.status in _OPEN)
    ordered = tuple(sorted(counts.items()))
    return Progress(len(tasks), len(tasks) - open_, ordered, open_ > 0)


def cached_experiment(svc: Services, experiment_id: str) -> ExperimentRead:
    """Return what the experiment page shows, read once per store generation.

    Callers check first that the reader may see the experiment: the cache is shared.
    """
    return svc.remember(
        f"experiment-read {experiment_id}",
        lambda: read_experiment(svc.store, svc.base, experiment_id),
    )


def cached_task(svc: Services, experiment_id: str, number: int) -> TaskSummary | None:
    """Return one task of a (visible) experiment, if it has that task, read once per store
    generation (that task's data only: a task page does not read the whole experiment)."""
    return svc.remember(
        f"task-read {experiment_id} {number}",
        lambda: read_task(svc.store, svc.base, experiment_id, number),
    )


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
    experiment_id = iri.value.rsplit("/", 1)[-1]
    if graph in vis.unlocked:
        # The owner's page carries the session's CSRF token: rendered for each request.
        return _render(svc, iri, graph, experiment_id, vis)
    return svc.remember(
        f"experiment-page {experiment_id} {request.path} {vis.key}",
        lambda: _render(svc, iri, graph, experiment_id, vis),
    )


def cached_report(svc: Services, experiment_id: str) -> ExperimentReport:
    """Return an experiment's reports (summaries, matrices, significance), once per generation.

    Callers check first that the reader may see the experiment: the cache is shared.
    """
    return svc.remember(
        f"experiment-report {experiment_id}",
        lambda: experiment_report(
            svc.store, svc.base, experiment_id, read=cached_experiment(svc, experiment_id)
        ),
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


def _split(rows: list[TaskRows]) -> tuple[list[TaskRows], list[TaskRows]]:
    """Split result rows into each task's first (QA) row and its sub-experiment rows."""
    first = [replace(t, rows=t.rows[:1]) for t in rows]
    rest = [replace(t, rows=t.rows[1:]) for t in rows if len(t.rows) > 1]
    return first, rest


def _render(
    svc: Services, iri: NamedNode, graph: NamedNode, experiment_id: str, vis: Visibility
) -> str:
    read = cached_experiment(svc, experiment_id)
    report = cached_report(svc, experiment_id)
    notes = Footnotes()
    state = progress(read.tasks)
    bio_columns = bioasq_columns(read.tasks)
    can_publish = graph in vis.unlocked
    glance = [m for m in report.matrices if m.experiment_type in _GLANCE_TYPES]
    others = [m for m in report.matrices if m.experiment_type not in _GLANCE_TYPES]
    qa_rows, sub_rows = _split(qald_rows(read.tasks, notes))
    return render_template(
        "experiment.html",
        title=f"Experiment {experiment_id}",
        facts=read.facts,
        state=state,
        refresh=REFRESH_SECONDS if state.running else None,
        glance=[report_table(summary_table(s), notes) for s in glance],
        columns=main_columns(),
        rows=qa_rows,
        sub_rows=sub_rows,
        sub_types=sorted({r.experiment_type for t in sub_rows for r in t.rows}, key=type_order),
        classic_columns=classic_columns(),
        classic_rows=classic_rows(read.tasks, notes),
        t2s_columns=text2sparql_columns(),
        t2s_rows=text2sparql_rows(read.tasks, notes),
        headlines=[
            (p, column(headline(p)[0]).label)
            for p in dict.fromkeys(t.plan.profile for t in read.tasks)
        ],
        # one language: its table repeats the matrices above
        languages=[
            report_table(summary_table(s), notes) for s in report.languages if len(s.columns) > 1
        ],
        matrices=[report_table(summary_table(s), notes) for s in others],
        significance=[
            report_table(t, notes) for g in report.significance for t in significance_tables(g)
        ],
        sanity=sorted(report.sanity),
        bio_columns=bio_columns,
        bio_rows=bioasq_rows(read.tasks, bio_columns, notes),
        footnotes=notes.listing(),
        tasks=read.tasks,
        systems=read.systems,
        published=graph not in [p.graph for p in vis.private],
        can_publish=can_publish,
        csrf_token=auth.csrf_token() if can_publish else "",
        alternates=alternate_links(),
        query_href=query_link(experiment_table_query(svc.base, experiment_id)),
        statements=describe(list(svc.store.quads(iri, None, None, graph)), iri, svc.base),
    )


@bp.route("/experiment/<path:rest>")
def experiment(rest: str) -> Response:
    """An experiment: this page, its whole graph in an RDF form, or its results as CSV."""
    return serve_resource("experiment", rest, experiment_page, [(CSV, experiment_csv)])

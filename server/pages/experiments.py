"""The HTML page of an experiment (``/experiment/{id}``), in GERBIL's shape.

A header with the citable IRI, the state, creation and publication times and, for the holder of
the access token of a private experiment, the publish action; then one table row per task and
experiment type with GERBIL's measures, errors, time and state, a second table for BioASQ
types, footnotes for undefined values, per-task links to the task pages, the provenance, and a
link to the SPARQL query behind the tables. While tasks are queued or running the page reloads
itself every few seconds (a ``meta refresh``: it works without JavaScript). The RDF forms of
the experiment come from ``server.linked_data.routes.serve_resource``.

This module knows neither Flask nor the services: it reads from a ``parts.Source`` (the
services, or a query worker's view) and renders with ``server.rendering``, so a query worker
writes an anonymous reader's page (``server.linked_data.part_jobs``) byte for byte as the serving
process would. The route and what depends on the request live in ``server.pages.routes``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from pyoxigraph import NamedNode

from evaluators.experiments.model import TaskStatus
from evaluators.experiments.read import ExperimentRead, TaskSummary, read_experiment, read_task
from evaluators.qa.profiles import profile_order
from evaluators.reports.experiment import (
    ExperimentReport,
    PageTables,
    experiment_report,
    page_tables,
)
from evaluators.results import type_order
from server.linked_data.parts import Source
from server.linked_data.terms import describe, query_link
from server.pages.tables import (
    Footnotes,
    TaskRows,
    bioasq_columns,
    bioasq_rows,
    classic_columns,
    classic_rows,
    column,
    family_tables,
    main_columns,
    qald_rows,
    report_table,
    text2sparql_columns,
    text2sparql_rows,
)
from server.rendering import render
from vocab import iris

# Seconds between reloads of a page whose tasks are still queued or running.
REFRESH_SECONDS = 3
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


def cached_experiment(source: Source, experiment_id: str) -> ExperimentRead:
    """Return what the experiment page shows, read once per store generation (or view).

    Callers check first that the reader may see the experiment: the cache is shared.
    """
    return source.remember(
        f"experiment-read {experiment_id}",
        lambda: read_experiment(source.store, source.base, experiment_id),
    )


def cached_task(source: Source, experiment_id: str, number: int) -> TaskSummary | None:
    """Return one task of a (visible) experiment, if it has that task, read once per store
    generation (that task's data only: a task page does not read the whole experiment)."""
    return source.remember(
        f"task-read {experiment_id} {number}",
        lambda: read_task(source.store, source.base, experiment_id, number),
    )


def cached_report(source: Source, experiment_id: str) -> ExperimentReport:
    """Return an experiment's reports (summaries, matrices, significance), once per generation.

    Callers check first that the reader may see the experiment: the cache is shared.
    """
    return source.remember(
        f"experiment-report {experiment_id}",
        lambda: experiment_report(
            source.store, source.base, experiment_id, read=cached_experiment(source, experiment_id)
        ),
    )


def cached_tables(source: Source, experiment_id: str) -> PageTables:
    """Return the report tables of an experiment's page, once per generation (or view)."""
    return source.remember(
        f"experiment-tables {experiment_id}",
        lambda: page_tables(cached_report(source, experiment_id), source.base, experiment_id),
    )


@dataclass(frozen=True, slots=True)
class Viewer:
    """What the page shows of its reader: the ``(url, media type, label)`` of the page's other
    forms, whether the experiment is published, and, for the holder of its token, the session's
    CSRF token for the publish action (empty: no action)."""

    alternates: tuple[tuple[str, str, str], ...]
    published: bool = True
    csrf_token: str = ""


def compare_defaults(tasks: tuple[TaskSummary, ...]) -> tuple[int, int] | None:
    """Return the two tasks the compare form starts with: two different systems scored under
    one profile on one dataset version and language (``strict`` first), or None without such
    a pair (the page then offers no comparison: any other pair would be refused).

    >>> compare_defaults(())
    """
    done = [t for t in tasks if t.status is TaskStatus.FINISHED and t.results]
    done.sort(key=lambda t: (profile_order(t.plan.profile), t.plan.number))
    for first in done:
        for second in done:
            a, b = first.plan, second.plan
            same = (a.profile, a.dataset, a.version, a.language) == (
                b.profile,
                b.dataset,
                b.version,
                b.language,
            )
            if same and a.system != b.system:
                return a.number, b.number
    return None


def _split(rows: list[TaskRows]) -> tuple[list[TaskRows], list[TaskRows]]:
    """Split result rows into each task's first (QA) row and its sub-experiment rows."""
    first = [replace(t, rows=t.rows[:1]) for t in rows]
    rest = [replace(t, rows=t.rows[1:]) for t in rows if len(t.rows) > 1]
    return first, rest


def experiment_html(source: Source, iri: NamedNode, graph: NamedNode, viewer: Viewer) -> str:
    """Render the page of the experiment ``iri`` (its quads in ``graph``) for ``viewer``;
    callers check first that the reader may see it."""
    experiment_id = iris.experiment_id_of(iri.value)
    report = cached_report(source, experiment_id)
    read, tables = report.read, cached_tables(source, experiment_id)
    notes = Footnotes()
    state = progress(read.tasks)
    bio_columns = bioasq_columns(read.tasks)
    qa_rows, sub_rows = _split(qald_rows(read.tasks, notes))
    return render(
        source.base,
        "experiment.html",
        title=f"Experiment {experiment_id}",
        facts=read.facts,
        state=state,
        refresh=REFRESH_SECONDS if state.running else None,
        glance=[report_table(t, notes) for t in tables.glance],
        columns=main_columns(),
        rows=qa_rows,
        sub_rows=sub_rows,
        sub_types=sorted({r.experiment_type for t in sub_rows for r in t.rows}, key=type_order),
        classic_columns=classic_columns(),
        classic_rows=classic_rows(read.tasks, notes),
        t2s_columns=text2sparql_columns(),
        t2s_rows=text2sparql_rows(read.tasks, notes),
        families=family_tables(read.tasks, notes),
        headlines=[(p, column(m).label) for p, m in tables.headlines],
        profile_notes=tables.notes,
        compare_pair=compare_defaults(read.tasks),
        languages=[report_table(t, notes) for t in tables.languages],
        matrices=[report_table(t, notes) for t in tables.matrices],
        significance=[report_table(t, notes) for t in tables.significance],
        sanity=sorted(report.sanity),
        bio_columns=bio_columns,
        bio_rows=bioasq_rows(read.tasks, bio_columns, notes),
        footnotes=notes.listing(),
        tasks=read.tasks,
        systems=read.systems,
        published=viewer.published,
        can_publish=bool(viewer.csrf_token),
        csrf_token=viewer.csrf_token,
        alternates=viewer.alternates,
        query_href=query_link(tables.query),
        statements=describe(list(source.store.quads(iri, None, None, graph)), iri, source.base),
    )

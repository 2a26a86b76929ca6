"""The HTML page of a task (``/task/{experiment}/{n}``): its results and per-question diagnostics.

The page shows the task's aggregate results (the experiment page's rows for this task), then one row
per question of one experiment type: the question (linked, with its text), gold values against
system values (matched ones marked), the matched pairs and the rule that matched each, the
per-question measures (TP/FP/FN, P/R/F1, ...), and the system's error. Query parameters filter it on
the server, so it works without JavaScript: ``type`` (an experiment type the task has, default
``QA``), ``wrong=1`` (only questions with F1 below 1 or an error) and ``page`` (``server.page_size``
questions per page; a page past the end is 404). Breakdowns by answer type, aggregation, hybrid and
language follow. The question rows are read once per store generation and cached.

Like ``server.pages.experiments`` this module knows neither Flask nor the services, so a query
worker renders an anonymous reader's task page too; the request side (the route, 400 and 404)
is ``server.pages.routes``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlencode

from pyoxigraph import NamedNode

from evaluators import cube
from evaluators.experiments.read import TaskSummary
from evaluators.experiments.results import questions_query
from evaluators.qa.scoring import Breakdown
from evaluators.reports.render import Cell as ReportCell
from evaluators.reports.render import Table, to_csv
from evaluators.results import BIOASQ_TYPES, MeasureValue
from server.linked_data.parts import Source, page_count
from server.linked_data.terms import href, query_link
from server.pages.tables import (
    MAIN_MEASURES,
    Cell,
    Footnotes,
    bioasq_columns,
    bioasq_rows,
    cell,
    column,
    family_tables,
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
from server.rendering import render
from store import graphs
from vocab import iris

# The query parameters that mean "only the questions not fully right".
_YES = ("1", "on", "true", "yes")


class PastTheEnd(LookupError):
    """The asked page of questions lies past the last one."""


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


def filters_of(args: Iterable[tuple[str, str]], types: list[str], page: int) -> Filters | str:
    """Return the filters the query parameters ``args`` choose among the task's experiment
    ``types`` (the asked ``type`` when the task has none it names instead).

    >>> filters_of([("wrong", "on")], ["QA", "C2KB"], 2)
    Filters(experiment_type='QA', only_wrong=True, page=2)
    >>> filters_of([("type", "RE2KB")], ["QA"], 1)
    'RE2KB'
    """
    given = dict(reversed(list(args)))  # the first value of each parameter, as Flask's get
    default = "QA" if "QA" in types else (types[0] if types else "")
    wanted = given.get("type") or default
    if types and wanted not in types:
        return wanted
    return Filters(wanted, given.get("wrong", "") in _YES, page)


@dataclass(frozen=True, slots=True)
class TaskView:
    """What the page needs of its request and reader: the URL path (its links and filter form
    point there), questions a page, the ``(url, media type, label)`` of its other forms, and
    whether the reader may see a graph (the dataset version's, for question texts)."""

    path: str
    page_size: int
    alternates: tuple[tuple[str, str, str], ...]
    can_see: Callable[[NamedNode], bool]


def _table(
    source: Source, graph: NamedNode, iri: NamedNode, kind: str, version_graph: NamedNode | None
) -> TaskTable:
    term = cube.experiment_type_term(source.base, kind)
    return source.remember(
        f"task-table {iri.value} {kind}",
        lambda: task_table(source.store, graph, iri, term, version_graph),
    )


def task_html(
    source: Source,
    iri: NamedNode,
    graph: NamedNode,
    task: TaskSummary,
    chosen: Filters,
    view: TaskView,
) -> str:
    """Render the page of ``task`` (its quads in ``graph``) with the ``chosen`` filters.

    Raises:
        PastTheEnd: the page of questions lies past the last.
    """
    experiment_id = iris.experiment_id_of(graph.value)
    types = [r.experiment_type for r in task.results]
    version = graphs.dataset_graph(source.base, task.plan.dataset, task.plan.version)
    version_graph = version if view.can_see(version) else None
    table = (
        _table(source, graph, iri, chosen.experiment_type, version_graph)
        if types
        else TaskTable((), ())
    )
    lines = table.select(chosen.only_wrong)
    pages = page_count(len(lines), view.page_size)
    if chosen.page > pages:
        raise PastTheEnd(f"There is no page {chosen.page}; the list has {pages}.")
    start = (chosen.page - 1) * view.page_size
    shown = lines[start : start + view.page_size]
    texts = question_texts(
        source.store, [line.values.question for line in shown], version_graph, task.plan.language
    )
    notes = Footnotes()
    bio_cols = bioasq_columns((task,))
    page, stem, base = chosen.page, view.path, source.base
    return render(
        base,
        "task.html",
        title=f"Task {task.plan.number} of experiment {experiment_id}",
        path=stem,
        iri=iri.value,
        experiment_id=experiment_id,
        task=task,
        columns=main_columns(),
        rows=qald_rows((task,), notes),
        families=family_tables((task,), notes),
        bio_columns=bio_cols,
        bio_rows=bioasq_rows((task,), bio_cols, notes),
        types=types,
        filters=chosen,
        is_bioasq=chosen.experiment_type in BIOASQ_TYPES,
        measure_columns=[column(m) for m in table.measures],
        questions=[
            (
                line,
                diagnostics(source.store, base, graph, iri, chosen.experiment_type, line, texts),
                [cell(v, notes) for v in _ordered(line, table.measures)],
                href(line.values.question.value, base),
            )
            for line in shown
        ],
        total=len(table.lines),
        selected=len(lines),
        page=page,
        pages=pages,
        prev_url=chosen.url(stem, page=page - 1) if page > 1 else None,
        next_url=chosen.url(stem, page=page + 1) if page < pages else None,
        breakdowns=_breakdowns(source, task, table, chosen.experiment_type, notes),
        footnotes=notes.listing(),
        alternates=view.alternates,
        query_href=query_link(
            questions_query(graph, iri, cube.experiment_type_term(base, chosen.experiment_type))
        ),
    )


# Questions in one page of a task's CSV form (``?page=N`` for the next ones).
CSV_ROWS = 1000
# The per-question measures of the CSV, in GERBIL's per-question file order, then any others.
_CSV_FIRST = ("tp", "fp", "fn", "precision", "recall", "f1")


def task_csv(
    source: Source,
    iri: NamedNode,
    graph: NamedNode,
    task: TaskSummary,
    chosen: Filters,
    version_graph: NamedNode | None,
) -> bytes:
    """Return one page (``CSV_ROWS`` questions) of a task's per-question table as CSV: question
    id and text, gold and system answers (each a JSON array of values: IRIs and literals'
    lexical forms), the per-question measures and the system's error.

    Raises:
        PastTheEnd: the page of questions lies past the last.
    """
    types = [r.experiment_type for r in task.results]
    table = (
        _table(source, graph, iri, chosen.experiment_type, version_graph)
        if types
        else TaskTable((), ())
    )
    lines = table.select(chosen.only_wrong)
    pages = page_count(len(lines), CSV_ROWS)
    if chosen.page > pages:
        raise PastTheEnd(f"There is no page {chosen.page}; the CSV has {pages}.")
    shown = lines[(chosen.page - 1) * CSV_ROWS : chosen.page * CSV_ROWS]
    texts = question_texts(
        source.store, [line.values.question for line in shown], version_graph, task.plan.language
    )
    measures = [m for m in _CSV_FIRST if m in table.measures]
    measures += [m for m in table.measures if m not in measures]
    headings = ("question", "text", "gold", "system", *measures, "error")
    rows: list[tuple[ReportCell, ...]] = []
    for line in shown:
        found = diagnostics(
            source.store, source.base, graph, iri, chosen.experiment_type, line, texts
        )
        rows.append(
            (
                line.values.id,
                found.text,
                json.dumps([v.term.value for v in found.gold], ensure_ascii=False),
                json.dumps([v.term.value for v in found.system], ensure_ascii=False),
                *_ordered(line, tuple(measures)),
                line.values.message or "",
            )
        )
    return to_csv(Table(f"Task {task.plan.number}", headings, tuple(rows))).encode("utf-8")


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
    source: Source, task: TaskSummary, table: TaskTable, kind: str, notes: Footnotes
) -> list[BreakdownRow]:
    found: tuple[Breakdown, ...] = source.remember(
        f"task-breakdowns {task.iri} {kind}",
        lambda: task_breakdowns(source.store, source.base, task, table, kind),
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

"""Display rows of result tables: formatted measure cells, undefined values with footnotes.

Pure: typed results in, plain display values out (the templates autoescape them). Values have 4
decimals, counts are integers, milliseconds have one decimal; an undefined value is shown as
"undefined" with its reason as a tooltip and a numbered footnote, never as NaN or "?". QALD-style
tasks get one row per experiment type (QA first, then its sub-experiments in GERBIL's order);
BioASQ types go into a second table whose columns are the measures those types report.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from evaluators.experiments.read import TaskSummary
from evaluators.reports.headline import headline
from evaluators.reports.render import SIGNIFICANT, Estimate, Table
from evaluators.reports.tables import (
    CLASSIC_MEASURES,
    FAMILY_TABLES,
    TEXT2SPARQL_MEASURES,
    FamilyTable,
)
from evaluators.results import (
    BIOASQ_TYPES,
    BOUNDS,
    INTERVALS,
    MEASURES,
    QA_TYPES,
    ExperimentTypeResult,
    MeasureValue,
    shown_in_tables,
)

# The GERBIL columns of the main table, in GERBIL's order.
MAIN_MEASURES = (
    "micro_f1",
    "micro_precision",
    "micro_recall",
    "macro_f1",
    "macro_precision",
    "macro_recall",
    "macro_f1_qald",
)
# Short column headings; the full label is the heading's tooltip.
SHORT = {
    "micro_f1": "Micro F1",
    "micro_precision": "Micro P",
    "micro_recall": "Micro R",
    "macro_f1": "Macro F1",
    "macro_precision": "Macro P",
    "macro_recall": "Macro R",
    "macro_f1_qald": "Macro F1 QALD",
    "processed": "Processed",
    "processed_macro_precision": "P (processed)",
    "processed_macro_recall": "R (processed)",
    "processed_f1": "F1 (processed)",
    "global_macro_precision": "P (all)",
    "global_macro_recall": "R (all)",
    "global_f1": "F-1 Global",
    "mean_precision": "Mean P",
    "mean_recall": "Mean R",
    "mean_f1": "Mean F1",
    "questions": "Questions",
    "precision": "P",
    "recall": "R",
    "f1": "F1",
    "tp": "TP",
    "fp": "FP",
    "fn": "FN",
}
# Shown for a measure that has no value to show (not reported, no results).
DASH = "\N{EN DASH}"
_NOT_COLUMNS = frozenset({"errors", "avg_millis", *BOUNDS})


@dataclass(frozen=True, slots=True)
class Cell:
    """One table cell: its text, a tooltip, the number of its footnote (if undefined), whether
    it holds the headline measure of its task's profile, its 95% interval as text (empty: none)
    and whether it is significantly better than the next row of its column."""

    text: str
    title: str = ""
    note: int | None = None
    undefined: bool = False
    headline: bool = False
    interval: str = ""
    significant: bool = False


@dataclass(frozen=True, slots=True)
class Column:
    """A measure column: its id, short heading and full label."""

    measure: str
    heading: str
    label: str


@dataclass(frozen=True, slots=True)
class Footnote:
    """An undefined value's reason, numbered once per distinct reason on a page."""

    number: int
    reason: str


class Footnotes:
    """Collects the reasons of undefined values while one page is rendered (not a value)."""

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}

    def number(self, reason: str) -> int:
        """Return the footnote number of ``reason`` (a new one the first time)."""
        return self.numbers.setdefault(reason, len(self.numbers) + 1)

    def listing(self) -> tuple[Footnote, ...]:
        """Return every footnote in number order."""
        return tuple(Footnote(n, r) for r, n in self.numbers.items())


def column(measure: str) -> Column:
    """Return the column of a measure id."""
    info = MEASURES[measure]
    return Column(measure, SHORT.get(measure, info.label), info.label)


def format_value(measure: str, value: float) -> str:
    """Return a defined value as text.

    >>> format_value("macro_f1", 2 / 3), format_value("errors", 3.0)
    ('0.6667', '3')
    >>> format_value("avg_millis", 12.345)
    '12.3'
    """
    if MEASURES[measure].is_count:
        return str(int(value))
    if measure == "avg_millis":
        return f"{value:.1f}"
    return f"{value:.4f}"


def interval_text(low: float | None, high: float | None) -> str:
    """Return a 95% interval as a cell shows it (empty when a bound is missing).

    >>> interval_text(0.79, 0.85123), interval_text(None, 1.0)
    ('[0.7900, 0.8512]', '')
    """
    return "" if low is None or high is None else f"[{low:.4f}, {high:.4f}]"


def estimate_cell(value: Estimate, notes: Footnotes) -> Cell:
    """Return the cell of a value with its interval and significance mark."""
    found = cell(value.value, notes)
    if found.undefined:
        return found
    return replace(
        found,
        interval=interval_text(value.low, value.high),
        significant=value.mark == SIGNIFICANT,
    )


def cell(value: MeasureValue | None, notes: Footnotes) -> Cell:
    """Return the cell of a measure value (``None``: the measure was not reported)."""
    if value is None:
        return Cell(DASH, "not reported for this experiment type")
    if value.value is None:
        reason = value.undefined_reason or "undefined"
        return Cell("undefined", reason, notes.number(reason), True)
    return Cell(format_value(value.measure, value.value))


def _find(result: ExperimentTypeResult | None, measure: str) -> MeasureValue | None:
    if result is None:
        return None
    return next((m for m in result.measures if m.measure == measure), None)


@dataclass(frozen=True, slots=True)
class TypeRow:
    """One experiment type of one task: its name and a cell per column."""

    experiment_type: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True, slots=True)
class TaskRows:
    """A task in a result table: the task, its type rows, and its errors and time cells."""

    task: TaskSummary
    rows: tuple[TypeRow, ...]
    errors: Cell
    millis: Cell


def _ordered(results: Iterable[ExperimentTypeResult], order: Sequence[str]) -> list[str]:
    names = [r.experiment_type for r in results]
    return [t for t in order if t in names]


_FAMILY_PROFILES = frozenset(t.profile for t in FAMILY_TABLES)


def qald_rows(tasks: Sequence[TaskSummary], notes: Footnotes) -> list[TaskRows]:
    """Return the main table: every task that is not a BioASQ-only task or scored by a family
    of its own (``family_tables``), QA first.

    A task without results (queued, running, failed, aborted, interrupted) gets one row whose
    cells are dashes; the template shows its state and message.
    """
    out = []
    for task in tasks:
        kinds = _ordered(task.results, QA_TYPES)
        if not kinds and any(r.experiment_type in BIOASQ_TYPES for r in task.results):
            continue
        if task.plan.profile in _FAMILY_PROFILES:
            continue  # their own table (family_tables)
        by_type = {r.experiment_type: r for r in task.results}
        rows = tuple(
            TypeRow(kind, _cells(by_type[kind], MAIN_MEASURES, task.plan.profile, notes))
            for kind in kinds
        ) or (TypeRow("QA", tuple(Cell(DASH, "no results") for _ in MAIN_MEASURES)),)
        qa = by_type.get("QA")
        errors = Cell(str(task.errors)) if task.errors is not None else Cell(DASH)
        out.append(TaskRows(task, rows, errors, cell(_find(qa, "avg_millis"), notes)))
    return out


def _cells(
    result: ExperimentTypeResult, measures: Sequence[str], profile: str, notes: Footnotes
) -> tuple[Cell, ...]:
    kind = result.experiment_type
    first = headline(profile, kind)[0]

    def shown(measure: str) -> Cell:
        found = type_cell(kind, measure, _find(result, measure), notes)
        if measure != first or found.undefined:
            return found
        bounds = INTERVALS.get(measure)
        low, high = (_find(result, b) for b in bounds) if bounds else (None, None)
        text = interval_text(low.value if low else None, high.value if high else None)
        return replace(found, headline=True, interval=text)

    return tuple(shown(m) for m in measures)


def type_cell(kind: str, measure: str, value: MeasureValue | None, notes: Footnotes) -> Cell:
    """Return the cell of a measure on a row of experiment type ``kind``: a dash where GERBIL's
    pages show none (``evaluators.results.shown_in_tables``)."""
    if not shown_in_tables(kind, measure):
        return Cell(DASH, "not shown for a sub-experiment (GERBIL's convention)")
    return cell(value, notes)


def classic_columns() -> list[Column]:
    """Return the columns of the classic QALD script's table (processed and global values)."""
    return [column(m) for m in CLASSIC_MEASURES]


def classic_rows(tasks: Sequence[TaskSummary], notes: Footnotes) -> list[TaskRows]:
    """Return the classic script's values of every task that reports them (``qald-classic``).

    These are the numbers QALD-1 to QALD-6 papers quote: processed macro P, R and F1 (F1 of
    the means) and "F-1 Global" over all questions.
    """
    out = []
    for task in tasks:
        qa = next((r for r in task.results if r.experiment_type == "QA"), None)
        if qa is None or _find(qa, "processed") is None:
            continue
        row = TypeRow("QA", _cells(qa, CLASSIC_MEASURES, task.plan.profile, notes))
        errors = Cell(str(task.errors)) if task.errors is not None else Cell(DASH)
        out.append(TaskRows(task, (row,), errors, cell(_find(qa, "avg_millis"), notes)))
    return out


def family_tables(
    tasks: Sequence[TaskSummary], notes: Footnotes
) -> list[tuple[FamilyTable, list[Column], list[TaskRows]]]:
    """Return the table of each family scored apart that has tasks here (issue 39): its
    description, columns and one row per task scored under its profile."""
    out = []
    for family in FAMILY_TABLES:
        rows = []
        for task in tasks:
            qa = next((r for r in task.results if r.experiment_type == "QA"), None)
            if task.plan.profile != family.profile:
                continue
            cells = (
                _cells(qa, family.measures, task.plan.profile, notes)
                if qa is not None
                else tuple(Cell(DASH, "no results") for _ in family.measures)
            )
            errors = Cell(str(task.errors)) if task.errors is not None else Cell(DASH)
            millis = cell(_find(qa, "avg_millis"), notes) if qa is not None else Cell(DASH)
            rows.append(TaskRows(task, (TypeRow("QA", cells),), errors, millis))
        if rows:
            out.append((family, [column(m) for m in family.measures], rows))
    return out


def text2sparql_columns() -> list[Column]:
    """Return the columns of the TEXT2SPARQL table (the challenge's measures, headline first)."""
    return [column(m) for m in TEXT2SPARQL_MEASURES]


def text2sparql_rows(tasks: Sequence[TaskSummary], notes: Footnotes) -> list[TaskRows]:
    """Return the TEXT2SPARQL values of every task scored under a TEXT2SPARQL profile."""
    out = []
    for task in tasks:
        qa = next((r for r in task.results if r.experiment_type == "QA"), None)
        if qa is None or _find(qa, "set_f") is None:
            continue
        row = TypeRow("QA", _cells(qa, TEXT2SPARQL_MEASURES, task.plan.profile, notes))
        errors = Cell(str(task.errors)) if task.errors is not None else Cell(DASH)
        out.append(TaskRows(task, (row,), errors, cell(_find(qa, "avg_millis"), notes)))
    return out


@dataclass(frozen=True, slots=True)
class ReportTable:
    """A report table as displayed: title, headings, rows of cells, notes."""

    title: str
    headings: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    notes: tuple[str, ...]


def report_table(table: Table, notes: Footnotes) -> ReportTable:
    """Return a report table (``evaluators.reports``) with its values formatted as cells."""

    def shown(c: object) -> Cell:
        if isinstance(c, str):
            return Cell(c)
        if isinstance(c, Estimate):
            return estimate_cell(c, notes)
        return cell(c, notes) if isinstance(c, MeasureValue) else Cell(DASH)

    rows = tuple(tuple(shown(c) for c in row) for row in table.rows)
    return ReportTable(table.title, table.headings, rows, table.notes)


def bioasq_columns(tasks: Sequence[TaskSummary]) -> list[Column]:
    """Return the measure columns of the BioASQ table: every measure a BioASQ type reported."""
    present = {
        m.measure
        for task in tasks
        for result in task.results
        if result.experiment_type in BIOASQ_TYPES
        for m in result.measures
    }
    return [column(m) for m in MEASURES if m in present and m not in _NOT_COLUMNS]


def bioasq_rows(
    tasks: Sequence[TaskSummary], columns: Sequence[Column], notes: Footnotes
) -> list[TaskRows]:
    """Return the BioASQ table: one row per BioASQ experiment type of each task."""
    out = []
    for task in tasks:
        by_type = {r.experiment_type: r for r in task.results}
        kinds = _ordered(task.results, BIOASQ_TYPES)
        if not kinds:
            continue
        rows = tuple(
            TypeRow(kind, tuple(cell(_find(by_type[kind], c.measure), notes) for c in columns))
            for kind in kinds
        )
        errors = Cell(str(task.errors)) if task.errors is not None else Cell(DASH)
        out.append(TaskRows(task, rows, errors, Cell(DASH)))
    return out


def main_columns() -> list[Column]:
    """Return the measure columns of the main (QALD-style) table."""
    return [column(m) for m in MAIN_MEASURES]


def format_time(text: str | None) -> str:
    """Return an ``xsd:dateTime`` as ``YYYY-MM-DD HH:MM:SS`` plus its zone, for display.

    >>> format_time("2026-11-22T22:44:43.829349Z")
    '2026-11-22 22:44:43 UTC'
    >>> format_time(None) == DASH
    True
    """
    if not text:
        return DASH
    day, _, rest = text.partition("T")
    if not rest:
        return text
    clock = rest[:8]
    zone = rest[8:].lstrip("0123456789.")
    if zone in ("Z", "+00:00"):
        zone = "UTC"
    return f"{day} {clock} {zone}".strip()


def machine_time(text: str) -> str:
    """Return an ``xsd:dateTime`` as an HTML ``datetime`` value (at most 3 fraction digits).

    >>> machine_time("2026-11-22T22:44:43.829349Z")
    '2026-11-22T22:44:43.829Z'
    """
    head, dot, rest = text.partition(".")
    if not dot:
        return text
    digits = len(rest) - len(rest.lstrip("0123456789"))
    return f"{head}.{rest[: min(digits, 3)]}{rest[digits:]}"

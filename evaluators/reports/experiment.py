"""An experiment's reports, read from the store: summaries, matrices and significance.

Read-only (the experiment graph only, through ``evaluators.experiments.read`` and ``.results``);
the tables and JSON are built by the pure modules of this package. ``qabench experiment show``
and the experiment page use the same function, so both report the same numbers; the page takes
its tables grouped as it shows them (``page_tables``: the headline matrices first, then languages,
sub-experiments and significance), so ``server`` only formats and renders them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyoxigraph import NamedNode

from evaluators import cube
from evaluators.experiments.read import ExperimentRead, TaskSummary, read_experiment
from evaluators.experiments.results import experiment_table_query, question_measure
from evaluators.qa.profiles import profile_order
from evaluators.reports.comparisons import (
    SignificanceGroup,
    significance_groups,
    significance_json,
)
from evaluators.reports.headline import SCORED_MEASURES, headline
from evaluators.reports.render import Estimate, Table
from evaluators.reports.summaries import (
    Summary,
    SummaryCell,
    language_summary,
    sanity_systems,
    system_dataset_matrices,
)
from evaluators.reports.tables import results_table, significance_tables, summary_table
from evaluators.reports.uncertainty import ProfileNote, marked, profile_notes
from evaluators.results import BIOASQ_TYPES, MEASURES
from store import graphs
from store.protocol import RdfStore


@dataclass(frozen=True, slots=True)
class ExperimentReport:
    """What a paper needs from one experiment."""

    read: ExperimentRead
    sanity: frozenset[str]
    languages: tuple[Summary, ...]
    matrices: tuple[Summary, ...]
    significance: tuple[SignificanceGroup, ...]
    profile_notes: tuple[ProfileNote, ...] = ()


def experiment_report(
    store: RdfStore,
    base: str,
    experiment_id: str,
    *,
    read: ExperimentRead | None = None,
    measure: str | None = None,
) -> ExperimentReport:
    """Read an experiment and compute its reports (``measure``: instead of the headlines).

    Raises:
        KeyError: if ``measure`` is not a measure id.
    """
    if measure is not None and measure not in MEASURES:
        raise KeyError(measure)
    read = read or read_experiment(store, base, experiment_id)
    sanity = sanity_systems(read.systems)
    graph = graphs.experiment_graph(base, experiment_id)
    term = cube.experiment_type_term(base, "QA")

    read_already: dict[int, Mapping[str, float]] = {}

    def per_question(task: TaskSummary) -> Mapping[str, float]:
        # question_score's rule: F1, else the TEXT2SPARQL headline, else 0 (read once a task)
        if task.plan.number not in read_already:
            found = question_measure(store, graph, NamedNode(task.iri), term, SCORED_MEASURES)
            read_already[task.plan.number] = {qid: value or 0.0 for qid, value in found.items()}
        return read_already[task.plan.number]

    groups = significance_groups(read.tasks, per_question, sanity)
    return ExperimentReport(
        read,
        sanity,
        language_summary(read.tasks, sanity, measure=measure),
        tuple(
            marked(m, groups) for m in system_dataset_matrices(read.tasks, sanity, measure=measure)
        ),
        groups,
        profile_notes(read.tasks, per_question),
    )


def report_tables(report: ExperimentReport) -> list[Table]:
    """Return every table of a report: results, languages, matrices, significance."""
    tables = [results_table(report.read.tasks, report.sanity)]
    tables += [summary_table(s) for s in report.languages]
    tables += [summary_table(s) for s in report.matrices]
    for group in report.significance:
        tables += significance_tables(group)
    return tables


def paper_tables(report: ExperimentReport) -> list[Table]:
    """Return the tables a paper takes from an experiment: the headline matrices (values with
    their 95% intervals and significance marks, ``strict`` first), the per-task results, and
    the profile notes under the first table."""
    glance = [summary_table(m) for m in report.matrices if m.experiment_type in GLANCE_TYPES]
    notes = tuple(n.text for n in report.profile_notes)
    if glance and notes:
        first = glance[0]
        glance[0] = Table(first.title, first.headings, first.rows, first.notes + notes)
    return [*glance, results_table(report.read.tasks, report.sanity)]


# The experiment types whose systems x datasets matrices are an experiment's headline results.
GLANCE_TYPES = frozenset({"QA", *BIOASQ_TYPES})


@dataclass(frozen=True, slots=True)
class PageTables:
    """The report tables of an experiment's page, grouped as the page shows them.

    Attributes:
        glance: the headline results, systems x datasets (QA and the BioASQ types).
        languages: systems x languages, when the experiment has more than one language (with
            one, each table would repeat a matrix).
        matrices: systems x datasets of the sub-experiments.
        significance: the pairwise tests of each group of tasks.
        headlines: each profile of the experiment with its headline measure, in the order of
            the tables (``strict`` first: ``profile_order``).
        notes: what each historical profile counts that ``strict`` does not, counted here.
        query: the SPARQL query that gives the experiment's results table.
    """

    glance: tuple[Table, ...]
    languages: tuple[Table, ...]
    matrices: tuple[Table, ...]
    significance: tuple[Table, ...]
    headlines: tuple[tuple[str, str], ...]
    query: str
    notes: tuple[str, ...] = ()


def page_tables(report: ExperimentReport, base: str, experiment_id: str) -> PageTables:
    """Return the tables of ``report`` as the experiment's page shows them."""
    matrices = report.matrices
    return PageTables(
        glance=tuple(summary_table(m) for m in matrices if m.experiment_type in GLANCE_TYPES),
        languages=tuple(summary_table(s) for s in report.languages if len(s.columns) > 1),
        matrices=tuple(summary_table(m) for m in matrices if m.experiment_type not in GLANCE_TYPES),
        significance=tuple(t for g in report.significance for t in significance_tables(g)),
        # in the tables' order (strict first)
        headlines=tuple(
            (p, headline(p)[0])
            for p in sorted({t.plan.profile for t in report.read.tasks}, key=profile_order)
        ),
        query=experiment_table_query(base, experiment_id),
        notes=tuple(n.text for n in report.profile_notes),
    )


def _cell_json(cell: SummaryCell) -> dict[str, Any] | None:
    if isinstance(cell, Estimate):
        found = _cell_json(cell.value)
        if found is not None and cell.has_interval:
            found["interval"] = [cell.low, cell.high]
        if found is not None and cell.mark:
            found["better_than_next"] = True
        return found
    if cell is None:
        return None
    if cell.value is None:
        return {"value": None, "undefined": cell.undefined_reason}
    return {"value": cell.value}


def _summary_json(summary: Summary) -> dict[str, Any]:
    return {
        "title": summary.title,
        "experiment_type": summary.experiment_type,
        "measure": summary.measure,
        "columns": list(summary.columns),
        "rows": [
            {
                "system": row.system,
                **({"dataset": row.dataset} if row.dataset else {}),
                "profile": row.profile,
                "sanity_check": row.sanity,
                "values": {
                    column: _cell_json(cell)
                    for column, cell in zip(summary.columns, row.cells, strict=True)
                },
            }
            for row in summary.rows
        ],
    }


def report_json(report: ExperimentReport) -> dict[str, Any]:
    """Return the ``reports`` member of ``qabench experiment show --json``."""
    profiles = sorted({t.plan.profile for t in report.read.tasks}, key=profile_order)
    return {
        "headline": {p: list(headline(p)) for p in profiles},
        "profile_notes": [
            {
                "profile": n.profile,
                "higher": n.higher,
                "lower": n.lower,
                "answers": n.answers,
                "text": n.text,
            }
            for n in report.profile_notes
        ],
        "sanity_systems": sorted(report.sanity),
        "by_language": [_summary_json(s) for s in report.languages],
        "systems_by_datasets": [_summary_json(s) for s in report.matrices],
        "significance": [significance_json(g) for g in report.significance],
    }

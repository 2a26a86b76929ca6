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
from evaluators.reports.comparisons import (
    SignificanceGroup,
    significance_groups,
    significance_json,
)
from evaluators.reports.headline import SCORED_MEASURES, headline
from evaluators.reports.render import Table
from evaluators.reports.summaries import (
    Summary,
    language_summary,
    sanity_systems,
    system_dataset_matrices,
)
from evaluators.reports.tables import results_table, significance_tables, summary_table
from evaluators.results import BIOASQ_TYPES, MEASURES, MeasureValue
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

    def per_question(task: TaskSummary) -> Mapping[str, float]:
        # question_score's rule: F1, else the TEXT2SPARQL headline, else 0
        found = question_measure(store, graph, NamedNode(task.iri), term, SCORED_MEASURES)
        return {qid: value or 0.0 for qid, value in found.items()}

    return ExperimentReport(
        read,
        sanity,
        language_summary(read.tasks, sanity, measure=measure),
        system_dataset_matrices(read.tasks, sanity, measure=measure),
        significance_groups(read.tasks, per_question, sanity),
    )


def report_tables(report: ExperimentReport) -> list[Table]:
    """Return every table of a report: results, languages, matrices, significance."""
    tables = [results_table(report.read.tasks, report.sanity)]
    tables += [summary_table(s) for s in report.languages]
    tables += [summary_table(s) for s in report.matrices]
    for group in report.significance:
        tables += significance_tables(group)
    return tables


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
            the tables (by profile name).
        query: the SPARQL query that gives the experiment's results table.
    """

    glance: tuple[Table, ...]
    languages: tuple[Table, ...]
    matrices: tuple[Table, ...]
    significance: tuple[Table, ...]
    headlines: tuple[tuple[str, str], ...]
    query: str


def page_tables(report: ExperimentReport, base: str, experiment_id: str) -> PageTables:
    """Return the tables of ``report`` as the experiment's page shows them."""
    matrices = report.matrices
    return PageTables(
        glance=tuple(summary_table(m) for m in matrices if m.experiment_type in GLANCE_TYPES),
        languages=tuple(summary_table(s) for s in report.languages if len(s.columns) > 1),
        matrices=tuple(summary_table(m) for m in matrices if m.experiment_type not in GLANCE_TYPES),
        significance=tuple(t for g in report.significance for t in significance_tables(g)),
        # in the tables' order (by profile name)
        headlines=tuple(
            (p, headline(p)[0]) for p in sorted({t.plan.profile for t in report.read.tasks})
        ),
        query=experiment_table_query(base, experiment_id),
    )


def _cell_json(cell: MeasureValue | None) -> dict[str, Any] | None:
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
    profiles = dict.fromkeys(t.plan.profile for t in report.read.tasks)
    return {
        "headline": {p: list(headline(p)) for p in profiles},
        "sanity_systems": sorted(report.sanity),
        "by_language": [_summary_json(s) for s in report.languages],
        "systems_by_datasets": [_summary_json(s) for s in report.matrices],
        "significance": [significance_json(g) for g in report.significance],
    }

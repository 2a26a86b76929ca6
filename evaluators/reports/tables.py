"""An experiment's reports as ``Table`` values: results, per-language summaries, systems x
datasets matrices and significance, ready for ``evaluators.reports.render``.

Pure. Sanity systems are listed after the ranked systems and marked; rows of ranked systems come
in rank order of the table's measure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evaluators.experiments.read import TaskSummary
from evaluators.qa.profiles import profile_order
from evaluators.reports.comparisons import SignificanceGroup
from evaluators.reports.headline import headline, rank
from evaluators.reports.render import SIGNIFICANT, Cell, Estimate, Table
from evaluators.reports.summaries import (
    Summary,
    SummaryRow,
    dataset_label,
    measure_estimate,
    plain,
)
from evaluators.reports.uncertainty import MARK_NOTE
from evaluators.results import MEASURES, QA_TYPES, shown_in_tables, type_order

# GERBIL's measures, then the classic script's (shown when a task reports them).
GERBIL_MEASURES = (
    "macro_f1_qald",
    "macro_f1",
    "macro_precision",
    "macro_recall",
    "micro_f1",
    "micro_precision",
    "micro_recall",
)
CLASSIC_MEASURES = (
    "processed",
    "processed_macro_precision",
    "processed_macro_recall",
    "processed_f1",
    "global_macro_precision",
    "global_macro_recall",
    "global_f1",
)
# TEXT2SPARQL profiles (trec_eval's set measures, nDCG and the challenge's headline)
TEXT2SPARQL_MEASURES = ("set_f_ndcg", "set_f", "set_p", "set_recall", "ndcg")
SANITY_MARK = " (sanity check)"


@dataclass(frozen=True, slots=True)
class FamilyTable:
    """The results table of the benchmark families scored apart (issue 39): which profile's
    tasks it holds, its title, a sentence on its measures and its columns, headline first."""

    profile: str
    title: str
    intro: str
    measures: tuple[str, ...]


FAMILY_TABLES = (
    FamilyTable(
        "execution-em",
        "Execution-based exact match (SciQA)",
        "FIRESPARQL's rule: a question is an exact match when the system's query ran and its "
        "set of result rows, datatype suffixes cut, is the gold's; EM over all questions, EM "
        'over the queries that ran, and how many ran (docs/scoring.md, "SciQA").',
        ("em_all", "em_successful", "successful"),
    ),
    FamilyTable(
        "mirage",
        "MIRAGE accuracy",
        "The option each answer chose (MIRAGE's answer-locating rule) against the gold option: "
        'accuracy per MIRAGE dataset and their mean (docs/scoring.md, "MIRAGE").',
        (
            "accuracy",
            "accuracy_mmlu",
            "accuracy_medqa",
            "accuracy_medmcqa",
            "accuracy_pubmedqa",
            "accuracy_bioasq",
        ),
    ),
)
FAMILY_MEASURES = tuple(m for t in FAMILY_TABLES for m in t.measures)


def _value(task: TaskSummary, kind: str, measure: str) -> Cell:
    """Return a finished task's value (with its 95% interval where one is stored)."""
    if not shown_in_tables(kind, measure):
        return None
    return measure_estimate(task, kind, measure)


def results_table(tasks: Sequence[TaskSummary], sanity: frozenset[str] = frozenset()) -> Table:
    """Return every finished task's QA-family results, one row per task and experiment type."""
    present = {m.measure for t in tasks for r in t.results for m in r.measures}
    known = GERBIL_MEASURES + CLASSIC_MEASURES + TEXT2SPARQL_MEASURES + FAMILY_MEASURES
    measures = list(dict.fromkeys(m for m in known if m in present))
    headings = (
        "Task", "System", "Dataset", "Language", "Profile", "Type",
        *(MEASURES[m].label for m in measures), "Errors", "Questions", "State",
    )  # fmt: skip
    rows: list[tuple[Cell, ...]] = []
    for task in tasks:
        kinds = sorted(
            (r.experiment_type for r in task.results if r.experiment_type in QA_TYPES),
            key=type_order,
        ) or [""]
        for kind in kinds:
            system = task.plan.system + (SANITY_MARK if task.plan.system in sanity else "")
            rows.append(
                (
                    str(task.plan.number),
                    system,
                    dataset_label(task.plan),
                    task.plan.language,
                    task.plan.profile,
                    kind,
                    *(_value(task, kind, m) for m in measures),
                    str(task.errors) if task.errors is not None else None,
                    _value(task, "QA", "questions") if kind == "QA" else None,
                    task.status.value,
                )
            )
    notes = tuple(
        f"Headline measure of the {p} profile: {MEASURES[headline(p)[0]].label}."
        for p in sorted({t.plan.profile for t in tasks}, key=profile_order)
    )
    if any(isinstance(c, Estimate) and c.has_interval for row in rows for c in row):
        notes += ("[low, high]: 95% bootstrap interval (questions resampled).",)
    return Table("Results", headings, tuple(rows), notes)


def _ordered_rows(summary: Summary) -> list[SummaryRow]:
    def values(row: SummaryRow) -> tuple[float | None, float | None]:
        found = [plain(c) for c in row.cells]
        defined = [c.value for c in found if c is not None and c.value is not None]
        mean = sum(defined) / len(defined) if defined else None
        return mean, None

    ranked = rank(summary.rows, values=values, label=lambda r: r.system, sanity=lambda r: r.sanity)
    return [row for _, row in ranked.ranked] + list(ranked.sanity)


def summary_table(summary: Summary) -> Table:
    """Return a per-language summary or a systems x datasets matrix as a table."""
    by_dataset = any(row.dataset for row in summary.rows)
    headings = ("System", "Dataset") if by_dataset else ("System",)
    rows = []
    for row in _ordered_rows(summary):
        name = row.system + (SANITY_MARK if row.sanity else "")
        rows.append(((name, row.dataset) if by_dataset else (name,)) + row.cells)
    notes = [f"Cells: {MEASURES[summary.measure].label}; sanity checks are not ranked."]
    cells = [c for row in summary.rows for c in row.cells if isinstance(c, Estimate)]
    if any(c.mark == SIGNIFICANT for c in cells):
        notes.append(MARK_NOTE)
    elif any(c.has_interval for c in cells):
        notes.append("[low, high]: 95% bootstrap interval (questions resampled).")
    return Table(summary.title, headings + summary.columns, tuple(rows), tuple(notes))


def significance_tables(group: SignificanceGroup) -> list[Table]:
    """Return Friedman's test and the pairwise tests of one group as tables."""
    f = group.friedman
    where = f"{group.dataset}, {group.language}, {group.profile} profile, {group.experiment_type}"
    statistic = "undefined (all tied)" if f.statistic is None else f"{f.statistic:.4f}"
    ranks = Table(
        f"Mean ranks ({where})",
        ("System", "Mean rank"),
        tuple((s, f"{r:.3f}") for s, r in zip(group.systems, f.mean_ranks, strict=True)),
        (
            f"Friedman's test over {group.questions} questions (per-question {group.measure}): "
            f"chi-square = {statistic}, df = {f.systems - 1}, p = {f.p_value:.4g}.",
            *((group.note,) if group.note else ()),
        ),
    )
    tables = [ranks]
    if group.pairs:
        rows = tuple(
            (
                group.systems[p.first],
                group.systems[p.second],
                f"{p.test.difference:+.4f}",
                f"{p.test.p_value:.4g}",
                f"{p.adjusted_p:.4g}",
            )
            for p in group.pairs
        )
        iterations = group.pairs[0].test.iterations
        tables.append(
            Table(
                f"Pairwise tests ({where})",
                ("A", "B", "Mean difference", "p", "p (Holm)"),
                rows,
                (
                    f"Paired approximate randomisation, {iterations} relabellings per pair; "
                    "p-values adjusted for multiple comparisons (Holm-Bonferroni).",
                ),
            )
        )
    return tables

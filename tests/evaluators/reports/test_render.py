"""Tables as CSV (exact values), Markdown and LaTeX with booktabs (rounded, escaped)."""

from __future__ import annotations

import csv
import io

from evaluators.reports.render import Table, to_csv, to_csv_many, to_latex, to_markdown
from evaluators.results import MeasureValue

TABLE = Table(
    "QA on qald_9 & more",
    ("System", "Macro F1 QALD", "Errors"),
    (
        ("sys_a", MeasureValue("macro_f1_qald", 0.123456789), MeasureValue("errors", 2.0)),
        ("50% b", MeasureValue("macro_f1_qald", None, "no questions"), None),
    ),
    ("Cells: Macro F1 QALD.",),
)


def test_csv_keeps_full_precision_and_leaves_undefined_cells_empty() -> None:
    rows = list(csv.reader(io.StringIO(to_csv(TABLE))))
    assert rows == [
        ["System", "Macro F1 QALD", "Errors"],
        ["sys_a", "0.123456789", "2"],
        ["50% b", "", ""],
    ]
    assert to_csv_many([TABLE, TABLE]).count("# QA on qald_9 & more") == 2


def test_latex_uses_booktabs_and_escapes_specials() -> None:
    text = to_latex([TABLE])
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert text.count(rule) == 1
    assert r"\caption{QA on qald\_9 \& more}" in text
    assert r"\begin{tabular}{lrr}" in text
    assert r"sys\_a & 0.1235 & 2 \\" in text
    assert r"50\% b & n/a & -- \\" in text


def test_markdown_rounds_to_four_decimals() -> None:
    text = to_markdown([TABLE])
    assert "| sys_a | 0.1235 | 2 |" in text
    assert "| 50% b | n/a | \N{EN DASH} |" in text
    assert text.startswith("### QA on qald_9 & more")

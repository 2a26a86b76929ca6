"""Tables as text: CSV (full precision, for scripts), Markdown and LaTeX with booktabs (4 decimals,
for papers).

A ``Table`` holds raw cells (measure values, plain text, or nothing); each renderer formats them
its own way. An undefined value is empty in CSV and "n/a" elsewhere, with its reason in a note.
Pure: values in, text out.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field

from evaluators.results import MEASURES, MeasureValue

Cell = MeasureValue | str | None


@dataclass(frozen=True, slots=True)
class Table:
    """A titled table: headings and rows of raw cells, plus notes printed under it."""

    title: str
    headings: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    notes: tuple[str, ...] = field(default=())


# A cell a spreadsheet would read as a formula starts with one of these (OWASP's list).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutral(text: str) -> str:
    """Return a text cell that a spreadsheet shows as text, never runs as a formula.

    A leading ``'`` is added to text starting like a formula; numbers stay numbers.

    >>> neutral("=SUM(A1)"), neutral("-0.25"), neutral("gold")
    ("'=SUM(A1)", '-0.25', 'gold')
    """
    if not text.startswith(_FORMULA_STARTS):
        return text
    try:
        float(text)
    except ValueError:
        return "'" + text
    return text


def _exact(cell: Cell) -> str:
    if cell is None:
        return ""
    if isinstance(cell, str):
        return neutral(cell)
    if cell.value is None:
        return ""
    if MEASURES[cell.measure].is_count:
        return str(int(cell.value))
    return repr(cell.value)


NOT_REPORTED = "\N{EN DASH}"


def _rounded(cell: Cell) -> str:
    if cell is None:
        return NOT_REPORTED
    if isinstance(cell, str):
        return cell
    if cell.value is None:
        return "n/a"
    if MEASURES[cell.measure].is_count:
        return str(int(cell.value))
    if cell.measure == "avg_millis":
        return f"{cell.value:.1f}"
    return f"{cell.value:.4f}"


def to_csv(table: Table) -> str:
    """Return one table as CSV (RFC 4180, CRLF line ends): a header row, then the rows.

    Text cells that would start a formula are neutralised (``neutral``).

    >>> to_csv(Table("t", ("system", "F1"), (("a", MeasureValue("macro_f1", 0.5)),)))
    'system,F1\\r\\na,0.5\\r\\n'
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([neutral(h) for h in table.headings])
    for row in table.rows:
        writer.writerow([_exact(c) for c in row])
    return out.getvalue()


def to_csv_many(tables: Sequence[Table]) -> str:
    """Return several tables as one CSV document: each preceded by a ``# title`` line."""
    return "\r\n".join(f"# {t.title}\r\n{to_csv(t)}" for t in tables)


def _md_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def to_markdown(tables: Sequence[Table]) -> str:
    """Return tables as GitHub-flavoured Markdown, each under a ``###`` heading.

    >>> print(to_markdown([Table("T", ("a", "b"), (("x", None),))]))
    ### T
    <BLANKLINE>
    | a | b |
    | --- | --- |
    | x | \N{EN DASH} |
    <BLANKLINE>
    """
    parts = []
    for t in tables:
        lines = [f"### {_md_escape(t.title)}", ""]
        lines.append("| " + " | ".join(_md_escape(h) for h in t.headings) + " |")
        lines.append("| " + " | ".join("---" for _ in t.headings) + " |")
        for row in t.rows:
            lines.append("| " + " | ".join(_md_escape(_rounded(c)) for c in row) + " |")
        lines += [""] + [f"{_md_escape(n)}  " for n in t.notes]
        parts.append("\n".join(lines).rstrip(" ") + ("\n" if t.notes else ""))
    return "\n".join(parts)


_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    NOT_REPORTED: "--",
}


def latex_escape(text: str) -> str:
    """Return ``text`` with LaTeX's special characters escaped.

    >>> latex_escape("qald-9_test & 50%")
    'qald-9\\\\_test \\\\& 50\\\\%'
    """
    return "".join(_LATEX.get(ch, ch) for ch in text)


def _numeric(table: Table, column: int) -> bool:
    return any(isinstance(row[column], MeasureValue) for row in table.rows)


def to_latex(tables: Sequence[Table]) -> str:
    """Return tables as LaTeX ``table`` floats with booktabs rules (``\\usepackage{booktabs}``).

    Numeric columns are right-aligned; the title becomes the caption.
    """
    parts = []
    for t in tables:
        spec = "".join("r" if _numeric(t, i) else "l" for i in range(len(t.headings)))
        lines = [
            r"\begin{table}[ht]",
            r"\centering",
            rf"\caption{{{latex_escape(t.title)}}}",
            rf"\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            " & ".join(latex_escape(h) for h in t.headings) + r" \\",
            r"\midrule",
        ]
        lines += [" & ".join(latex_escape(_rounded(c)) for c in row) + r" \\" for row in t.rows]
        lines.append(r"\bottomrule")
        lines.append(r"\end{tabular}")
        if t.notes:
            notes = " ".join(latex_escape(n) for n in t.notes)
            lines.append(r"\par\smallskip\footnotesize " + notes)
        lines.append(r"\end{table}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"

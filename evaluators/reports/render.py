"""Tables as text: CSV (full precision, for scripts), Markdown and LaTeX with booktabs (4 decimals,
for papers).

A ``Table`` holds raw cells (measure values, estimates, plain text, or nothing); each renderer
formats them its own way. An undefined value is empty in CSV and "n/a" elsewhere, with its reason
in a note. An ``Estimate`` (a value with its 95% bootstrap interval and a significance mark) is
written ``0.8218 [0.7912, 0.8511]`` in Markdown and LaTeX; in CSV its column is followed by two
interval columns (and a column of marks when the table has any). Pure: values in, text out.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field

from evaluators.results import MEASURES, MeasureValue


@dataclass(frozen=True, slots=True)
class Estimate:
    """A measure value with its 95% bootstrap interval (``None``: none stored) and a mark (for
    example ``SIGNIFICANT``: significantly better than the next row)."""

    value: MeasureValue
    low: float | None = None
    high: float | None = None
    mark: str = ""

    @property
    def has_interval(self) -> bool:
        """Return whether both bounds are known."""
        return self.low is not None and self.high is not None


# The mark of a value significantly better than the next one in its column.
SIGNIFICANT = "\N{DAGGER}"

Cell = MeasureValue | Estimate | str | None


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
    if isinstance(cell, Estimate):
        return _exact(cell.value)
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
    if isinstance(cell, Estimate):
        text = _rounded(cell.value)
        if cell.has_interval and cell.value.value is not None:
            text += f" [{cell.low:.4f}, {cell.high:.4f}]"
        return text + cell.mark
    if cell.value is None:
        return "n/a"
    if MEASURES[cell.measure].is_count:
        return str(int(cell.value))
    if cell.measure == "avg_millis":
        return f"{cell.value:.1f}"
    return f"{cell.value:.4f}"


def _bound(value: float | None) -> str:
    return "" if value is None else repr(value)


def to_csv(table: Table) -> str:
    """Return one table as CSV (RFC 4180, CRLF line ends): a header row, then the rows.

    Text cells that would start a formula are neutralised (``neutral``). A column of estimates
    is followed by its interval's two bounds (and its marks, when it has any).

    >>> to_csv(Table("t", ("system", "F1"), (("a", MeasureValue("macro_f1", 0.5)),)))
    'system,F1\\r\\na,0.5\\r\\n'
    >>> row = (Estimate(MeasureValue("f1", 0.5), 0.25, 0.75, "x"),)
    >>> to_csv(Table("t", ("F1",), (row,))).splitlines()
    ['F1,F1 95% CI low,F1 95% CI high,F1 significance', '0.5,0.25,0.75,x']
    """
    n = len(table.headings)
    estimates = [any(isinstance(r[i], Estimate) for r in table.rows) for i in range(n)]
    marks = [any(isinstance(r[i], Estimate) and r[i].mark for r in table.rows) for i in range(n)]  # type: ignore[union-attr]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    headings: list[str] = []
    for i, h in enumerate(table.headings):
        headings.append(h)
        if estimates[i]:
            headings += [f"{h} 95% CI low", f"{h} 95% CI high"]
        if marks[i]:
            headings.append(f"{h} significance")
    writer.writerow([neutral(h) for h in headings])
    for row in table.rows:
        cells: list[str] = []
        for i, c in enumerate(row):
            cells.append(_exact(c))
            found = c if isinstance(c, Estimate) else None
            if estimates[i]:
                cells += [_bound(found.low), _bound(found.high)] if found else ["", ""]
            if marks[i]:
                cells.append(found.mark if found else "")
        writer.writerow(cells)
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
    SIGNIFICANT: r"$^\dagger$",
}


def latex_escape(text: str) -> str:
    """Return ``text`` with LaTeX's special characters escaped.

    >>> latex_escape("qald-9_test & 50%")
    'qald-9\\\\_test \\\\& 50\\\\%'
    """
    return "".join(_LATEX.get(ch, ch) for ch in text)


def _numeric(table: Table, column: int) -> bool:
    return any(isinstance(row[column], MeasureValue | Estimate) for row in table.rows)


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

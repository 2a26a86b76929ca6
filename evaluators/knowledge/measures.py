"""Execution-based measures beside the official TEXT2SPARQL ones: validity and row exact match.

Text-to-SPARQL research also reports whether a generated query runs at all and whether it gives
exactly the reference's rows (execution accuracy). Both need the query to have been run here
(on the ``--kb`` knowledge base), so they are defined only for such answers, and they are
reported apart (``extra_measures``), never inside the official evaluation file or its averages.

* ``execution_valid`` = 1 when the system answered with a query that parsed, was allowed
  (SELECT or ASK, no SERVICE), ran within the time, row and byte limits and gave a non-empty
  result (at least one row, or an ASK answer); 0 otherwise. Undefined for an answer without a
  query (a result set given as it is).
* ``row_exact_match`` = 1 when the system's result rows equal the reference query's rows on the
  same knowledge base as multisets, each row taken as the sorted tuple of its bound lexical
  values (so the names and order of the variables do not matter; duplicates do), and in the
  same sequence when the question's answers are ordered; for ASK, when the two answers are
  equal. Undefined when either side has no rows here (not run, or the reference query failed).

Averages: the mean over the questions where the measure is defined, with that count. Pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Rows = tuple[tuple[str | None, ...], ...]


@dataclass(frozen=True, slots=True)
class Ran:
    """One side of a question as run here: its rows, its ASK answer, or why it gave none."""

    rows: Rows | None = None
    boolean: bool | None = None
    problem: str | None = None
    had_query: bool = True


def execution_valid(ran: Ran) -> float | None:
    """Return 1.0 when the query ran and gave a non-empty result, 0.0 when not, None when the
    answer had no query.

    >>> execution_valid(Ran(rows=(("a",),))), execution_valid(Ran(rows=()))
    (1.0, 0.0)
    >>> execution_valid(Ran(had_query=False)) is None
    True
    """
    if not ran.had_query:
        return None
    if ran.boolean is not None:
        return 1.0
    return 1.0 if ran.rows else 0.0


def _row_key(row: tuple[str | None, ...]) -> tuple[str, ...]:
    return tuple(sorted(v for v in row if v is not None))


def row_exact_match(system: Ran, reference: Ran, ordered: bool = False) -> float | None:
    """Return 1.0 when the system's rows equal the reference's (see the module docstring).

    >>> row_exact_match(Ran(rows=(("b", "a"),)), Ran(rows=(("a", "b"),)))
    1.0
    >>> row_exact_match(Ran(rows=(("a",), ("a",))), Ran(rows=(("a",),)))
    0.0
    >>> row_exact_match(Ran(rows=(("a",), ("b",))), Ran(rows=(("b",), ("a",))), ordered=True)
    0.0
    """
    if not system.had_query:
        return None
    if reference.boolean is not None or system.boolean is not None:
        if reference.boolean is None or system.boolean is None:
            return None if reference.boolean is None and reference.rows is None else 0.0
        return 1.0 if reference.boolean == system.boolean else 0.0
    if reference.rows is None:
        return None
    mine = [_row_key(r) for r in system.rows or ()]
    theirs = [_row_key(r) for r in reference.rows]
    if ordered:
        return 1.0 if mine == theirs else 0.0
    return 1.0 if Counter(mine) == Counter(theirs) else 0.0


@dataclass(frozen=True, slots=True)
class ExtraMeasures:
    """The per-question values and their means over the questions where each is defined."""

    per_question: dict[str, dict[str, float | None]]
    means: dict[str, float | None]
    defined: dict[str, int]


def extra_measures(
    questions: Sequence[str],
    systems: Mapping[str, Ran],
    references: Mapping[str, Ran],
    ordered: frozenset[str] = frozenset(),
) -> ExtraMeasures:
    """Return ``execution_valid`` and ``row_exact_match`` of every question, and their means.

    >>> m = extra_measures(["1", "2"], {"1": Ran(rows=(("a",),))}, {"1": Ran(rows=(("a",),))})
    >>> m.means, m.defined
    ({'execution_valid': 1.0, 'row_exact_match': 1.0}, {'execution_valid': 1, 'row_exact_match': 1})
    """
    per_question: dict[str, dict[str, float | None]] = {}
    for qid in questions:
        system = systems.get(qid, Ran(had_query=False))
        reference = references.get(qid, Ran())
        per_question[qid] = {
            "execution_valid": execution_valid(system),
            "row_exact_match": row_exact_match(system, reference, qid in ordered),
        }
    means: dict[str, float | None] = {}
    defined: dict[str, int] = {}
    for measure in ("execution_valid", "row_exact_match"):
        values = [v[measure] for v in per_question.values() if v[measure] is not None]
        defined[measure] = len(values)
        means[measure] = sum(v for v in values if v is not None) / len(values) if values else None
    return ExtraMeasures(per_question, means, defined)

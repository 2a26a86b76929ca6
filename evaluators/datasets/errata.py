"""Errata: a corrected reference of a TEXT2SPARQL dataset, stored as the dataset's next version.

A published reference can be wrong: DB25's queries ``SELECT DISTINCT COUNT(?x)`` count rows
(``DISTINCT`` applies to the one-row result) where ``COUNT(DISTINCT ?x)`` was meant (the
challenge's issue #143; CK25/CK26 questions 9 and 49 have the same form). A correction changes
a question's reference query and its gold result, says why, and becomes a new version derived
from the old one (``prov:wasRevisionOf``), so experiments on either version can be compared
side by side. Corrections come from a file (``qname -> {query?, result, reason}``: the way to
correct DB25, whose graph is not available here) or from ``count_distinct_corrections``, which
finds the counting queries on the parse tree, rewrites them and runs them on a knowledge base.
Nothing here writes: ``evaluators.datasets.library.store_dataset`` does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from pyparsing import ParseBaseException, ParseResults
from rdflib.plugins.sparql.parser import parseQuery
from rdflib.plugins.sparql.parserutils import CompValue

from evaluators.errors import DatasetFormatError
from evaluators.formats.text2sparql.writer import result_set
from evaluators.knowledge.execution import QueryExecutor
from evaluators.model import AnswerSet, Dataset, ParseWarning
from evaluators.qa.markings import PARSER_LOCK

ISSUE_143 = "https://github.com/AKSW/text2sparql.aksw.org/issues/143"
COUNT_DISTINCT_REASON = (
    "the reference query counted rows (SELECT DISTINCT COUNT(?x): DISTINCT applies to the "
    f"one-row result) where COUNT(DISTINCT ?x) was meant; TEXT2SPARQL issue #143 ({ISSUE_143})"
)
_COUNT = re.compile(r"COUNT\s*\(\s*(?!DISTINCT\b)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Correction:
    """One corrected question: its query and gold result before and after, and why."""

    question_id: str
    reason: str
    result_before: dict[str, int]
    result_after: dict[str, int]
    query_before: str | None = None
    query_after: str | None = None

    def note(self) -> str:
        """Return what changed and why, in one line (kept with the new version)."""
        query = " reference query rewritten;" if self.query_after else ""
        before = ", ".join(list(self.result_before)[:3]) or "nothing"
        after = ", ".join(list(self.result_after)[:3]) or "nothing"
        return f"erratum:{query} gold {before} -> {after}; {self.reason}"


def _nodes(node: object) -> list[CompValue]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if isinstance(current, CompValue):
            found.append(current)
            stack.extend(current.values())
        elif isinstance(current, ParseResults | list | tuple):
            stack.extend(current)
    return found


# Virtuoso's bare aggregate in a projection (``SELECT DISTINCT COUNT(?x)``), not SPARQL 1.1:
# given an alias so that the query parses (DB25 writes its counting queries this way).
_BARE_COUNT = re.compile(
    r"(SELECT\s+DISTINCT\s+)COUNT\s*\(\s*(\?\w+)\s*\)(\s*(?:WHERE\b|\{))", re.IGNORECASE
)


def _parsed(sparql: str) -> CompValue | None:
    with PARSER_LOCK:
        try:
            parsed = parseQuery(sparql)
        except (ParseBaseException, RecursionError, ValueError, TypeError):
            return None
    query = parsed[1] if len(parsed) > 1 else None
    return query if isinstance(query, CompValue) else None


def _standard(sparql: str) -> str:
    """Return the query with a bare ``COUNT(?x)`` projection written as SPARQL 1.1."""
    return _BARE_COUNT.sub(r"\1(COUNT(\2) AS ?count)\3", sparql, count=1)


def counts_rows(sparql: str) -> bool:
    """Return whether a query is ``SELECT DISTINCT`` of one ``COUNT`` without ``DISTINCT`` and
    no grouping: it counts rows, not values (decided on rdflib's parse tree).

    >>> counts_rows("SELECT DISTINCT COUNT(?x) WHERE { ?x ?p ?o }")
    True
    >>> counts_rows("SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x ?p ?o }")
    False
    >>> counts_rows("SELECT DISTINCT ?s (COUNT(?o) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s")
    False
    """
    query = _parsed(sparql) or _parsed(_standard(sparql))
    if query is None or query.name != "SelectQuery" or _field(query, "groupby") is not None:
        return False
    if str(_field(query, "modifier") or "").upper() != "DISTINCT":
        return False
    found = _field(query, "projection")
    projection = list(found) if isinstance(found, ParseResults | list) else []
    if len(projection) != 1:
        return False
    counts = [n for n in _nodes(projection[0]) if n.name == "Aggregate_Count"]
    return len(counts) == 1 and not _field(counts[0], "distinct")


def _field(node: CompValue, key: str) -> object:
    # CompValue.get answers a missing key with the key itself, so ask for membership first
    return dict.get(node, key)


def count_distinct_query(sparql: str) -> str | None:
    """Return the query counting distinct values where it counts rows (``None``: it does not).

    >>> count_distinct_query("SELECT DISTINCT COUNT(?x) WHERE { ?x ?p ?o }")
    'SELECT DISTINCT (COUNT(DISTINCT ?x) AS ?count) WHERE { ?x ?p ?o }'
    """
    if not counts_rows(sparql):
        return None
    standard = _standard(sparql) if _parsed(sparql) is None else sparql
    head, where, rest = re.split(r"(\bWHERE\b|\{)", standard, maxsplit=1, flags=re.IGNORECASE)
    fixed = _COUNT.sub(lambda m: m.group(0) + "DISTINCT ", head, count=1) + where + rest
    return fixed if _parsed(fixed) is not None and not counts_rows(fixed) else None


def count_distinct_corrections(dataset: Dataset, executor: QueryExecutor) -> list[Correction]:
    """Return a correction for every question whose reference query counts rows (#143): the
    query with ``COUNT(DISTINCT …)``, its result on ``executor``'s knowledge base as the gold.
    Questions whose corrected query gives no result there are left as they are."""
    found: list[Correction] = []
    runs: dict[str, AnswerSet | None] = {}
    for question in dataset.questions:
        fixed = count_distinct_query(question.sparql or "")
        if fixed is None:
            continue
        if fixed not in runs:
            runs[fixed] = executor.run(fixed).answers
        answers = runs[fixed]
        if answers is None:
            continue
        before = result_set(question.answers or ())
        after = result_set((answers,))
        if after != before or fixed != question.sparql:
            found.append(Correction(question.id, COUNT_DISTINCT_REASON, before, after,
                                    question.sparql, fixed))  # fmt: skip
    return found


def corrections_from(dataset: Dataset, doc: object, *, source: str) -> list[Correction]:
    """Return the corrections an errata file gives: ``qname -> {"result": {value: 1}, "reason":
    text, "query": corrected query (optional)}``.

    Raises:
        DatasetFormatError: the file is not of that shape, or names a question the dataset lacks.
    """
    if not isinstance(doc, Mapping):
        raise DatasetFormatError("expected an object of corrections by qname", source=source)
    known = dataset.by_id()
    found = []
    for qname, entry in doc.items():
        if qname not in known:
            raise DatasetFormatError(f"no question {qname!r} in the dataset", source=source)
        if not isinstance(entry, Mapping) or not isinstance(entry.get("reason"), str):
            raise DatasetFormatError(f"{qname}: expected result, reason and maybe query",
                                     source=source)  # fmt: skip
        result = entry.get("result")
        if not isinstance(result, Mapping) or not all(v in (0, 1) for v in result.values()):
            raise DatasetFormatError(f"{qname}: the result must be {{value: 1}} (or "
                                     '{"true": 0|1})', source=source)  # fmt: skip
        query = entry.get("query")
        before = known[qname]
        found.append(Correction(qname, str(entry["reason"]), result_set(before.answers or ()),
                                {str(k): int(v) for k, v in result.items()}, before.sparql,
                                str(query) if isinstance(query, str) else None))  # fmt: skip
    return found


def _answers(items: Mapping[str, int]) -> tuple[AnswerSet, ...]:
    from pyoxigraph import Literal

    if list(items) == ["true"]:
        return (AnswerSet(boolean=items["true"] == 1, lexical=True),)
    return (AnswerSet(tuple(Literal(v) for v in items), has_bindings=True, lexical=True),)


def corrected(dataset: Dataset, corrections: list[Correction]) -> Dataset:
    """Return the dataset with the corrections applied, each noted as a warning of its question."""
    by_id = {c.question_id: c for c in corrections}
    questions = []
    for question in dataset.questions:
        fix = by_id.get(question.id)
        if fix is None:
            questions.append(question)
            continue
        changed = replace(question, answers=_answers(fix.result_after))
        if fix.query_after:
            changed = replace(changed, sparql=fix.query_after)
        questions.append(changed)
    notes = [ParseWarning(c.note(), c.question_id) for c in corrections]
    return replace(dataset, questions=tuple(questions), warnings=tuple(notes))

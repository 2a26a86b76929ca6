"""Reference queries run on a knowledge base: TEXT2SPARQL gold answers, and engine differences.

A TEXT2SPARQL dataset's gold answers come either from the published reference result set or
from running each question's reference query on a knowledge base (``gold_from_kb``). The two
can disagree: the published results were computed on the organisers' engine, and another
engine may refuse a cast (``xsd:int(...)``), return rows where the published set is empty, or
break ties under ``LIMIT`` otherwise. ``reference_differences`` runs the reference queries and
says, per question, how the results here differ from the gold answers the dataset holds; the
scoring shows these next to the question, and ``datasets check`` lists them.

Queries run through a ``QueryExecutor`` (bounded in time, rows and bytes; SERVICE refused).
Nothing here writes anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from evaluators.formats.text2sparql.writer import result_set
from evaluators.knowledge.execution import Execution, QueryExecutor
from evaluators.model import AnswerSet, Dataset, Question

# Values quoted per side in a difference.
_SHOWN = 3


@dataclass(frozen=True, slots=True)
class GoldFailure:
    """A question whose reference query gave no gold answers here, and why."""

    question_id: str
    reason: str


def gold_from_kb(dataset: Dataset, executor: QueryExecutor) -> tuple[Dataset, list[GoldFailure]]:
    """Return the dataset with each question's reference query results as its gold answers.

    A question whose query cannot run (refused, failed, too slow) keeps no gold answers
    (``answers=None``) and is listed with the reason; identical queries run once.
    """
    cache: dict[str, tuple[tuple[AnswerSet, ...] | None, str | None]] = {}
    questions: list[Question] = []
    failures: list[GoldFailure] = []
    for question in dataset.questions:
        if not question.sparql:
            failures.append(GoldFailure(question.id, "the question has no reference query"))
            questions.append(question)
            continue
        if question.sparql not in cache:
            outcome = executor.run(question.sparql)
            ran = (outcome.answers,) if outcome.answers is not None else None
            cache[question.sparql] = (ran, outcome.problem)
        answers, problem = cache[question.sparql]
        if answers is None:
            failures.append(GoldFailure(question.id, problem or "the query gave no results"))
            questions.append(replace(question, answers=None))
            continue
        if problem:  # results cut at the row limit
            failures.append(GoldFailure(question.id, problem))
        questions.append(replace(question, answers=answers))
    return replace(dataset, questions=tuple(questions)), failures


def _quoted(values: list[str]) -> str:
    shown = ", ".join(repr(v[:60]) for v in values[:_SHOWN])
    return shown + (f" and {len(values) - _SHOWN} more" if len(values) > _SHOWN else "")


def difference(held: Mapping[str, int], here: Mapping[str, int]) -> str | None:
    """Describe how the results ``here`` differ from the ``held`` gold results (``None``: same).

    >>> difference({"a": 1, "b": 1}, {"a": 1, "c": 1})
    "2 values here, 2 in the reference result set: only here 'c'; only in the reference 'b'"
    >>> difference({"true": 1}, {"true": 0})
    'ASK gives false here, true in the reference result set'
    """
    if held == here:
        return None
    if list(held) == ["true"] and list(here) == ["true"]:
        said = {1: "true", 0: "false"}
        return (
            f"ASK gives {said[here['true']]} here, {said[held['true']]} in the reference result set"
        )
    only_here = [v for v in here if v not in held]
    only_held = [v for v in held if v not in here]
    head = f"{len(here)} values here, {len(held)} in the reference result set"
    parts = []
    if only_here:
        parts.append(f"only here {_quoted(only_here)}")
    if only_held:
        parts.append(f"only in the reference {_quoted(only_held)}")
    return head + (": " + "; ".join(parts) if parts else "")


def reference_differences(dataset: Dataset, executor: QueryExecutor) -> dict[str, str]:
    """Run every reference query on ``executor``'s knowledge base and compare with the gold.

    Returns:
        Question id -> how the results here differ from the dataset's gold answers (or why the
        query gave none here), for the questions where they differ; identical queries run
        once. Questions without gold answers or without a query are left out.
    """
    runs: dict[str, tuple[dict[str, int] | None, str | None]] = {}
    found: dict[str, str] = {}
    for question in dataset.questions:
        if question.answers is None or not question.sparql:
            continue
        if question.sparql not in runs:
            outcome = executor.run(question.sparql)
            items = result_set((outcome.answers,)) if outcome.answers is not None else None
            runs[question.sparql] = (items, outcome.problem)
        items, problem = runs[question.sparql]
        if items is None:
            found[question.id] = f"the reference query gives no results here: {problem}"
            continue
        text = difference(result_set(question.answers), items)
        if text is not None:
            found[question.id] = f"the reference query gives another result here: {text}"
    return found


def lexical_reference_differences(dataset: Dataset, executor: QueryExecutor) -> dict[str, str]:
    """Return ``reference_differences`` for the questions whose gold came from a published
    result set (lexical forms); gold computed on a knowledge base has nothing to compare."""
    published = [q for q in dataset.questions if q.answers and any(a.lexical for a in q.answers)]
    if not published:
        return {}
    return reference_differences(replace(dataset, questions=tuple(published)), executor)


@dataclass(frozen=True, slots=True)
class EngineDifference:
    """A question whose reference query gives other results on two engines, and how."""

    question_id: str
    first: tuple[str, ...] | None  # the flat result set on the first engine (None: no results)
    second: tuple[str, ...] | None
    description: str


def _flat(outcome: Execution) -> tuple[dict[str, int] | None, str | None]:
    if outcome.answers is None:
        return None, outcome.problem
    return result_set((outcome.answers,)), outcome.problem


def engine_differences(
    dataset: Dataset, first: QueryExecutor, second: QueryExecutor
) -> list[EngineDifference]:
    """Run every reference query on two engines and list the questions whose results differ.

    The results are compared as the official evaluation sees them (flat result sets of lexical
    values, ``{"true": 1|0}`` for ASK), so a listed question is one whose score may depend on
    the engine. A query that fails or runs too long on one engine and not the other differs;
    identical queries run once per engine.

    Returns:
        One entry per differing question, in the dataset's order.
    """
    runs: dict[str, tuple[tuple[dict[str, int] | None, str | None], ...]] = {}
    found: list[EngineDifference] = []
    for question in dataset.questions:
        if not question.sparql:
            continue
        if question.sparql not in runs:
            runs[question.sparql] = (_flat(first.run(question.sparql)),
                                     _flat(second.run(question.sparql)))  # fmt: skip
        (a, a_problem), (b, b_problem) = runs[question.sparql]
        if a == b:
            continue
        if a is None or b is None:
            said = (f"no results on {first.description if a is None else second.description}: "
                    f"{a_problem if a is None else b_problem}")  # fmt: skip
        else:
            said = (
                (difference(a, b) or "")
                .replace("here", f"on {second.description}")
                .replace("in the reference result set", f"on {first.description}")
                .replace("only in the reference", f"only on {first.description}")
            )
        found.append(
            EngineDifference(
                question.id,
                tuple(a) if a is not None else None,
                tuple(b) if b is not None else None,
                said,
            )
        )
    return found

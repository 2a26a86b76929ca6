"""The ``execution-em`` profile: execution-based exact match as FIRESPARQL scores SciQA.

A system's query and the gold query have each been run (their recorded ``Execution``). A
question is an **exact match** when the system's query ran (status ``SUCCESS``) and the set of
its result rows equals the gold's. A result's rows (``result_rows``) are read from its text as
FIRESPARQL does: the text is stripped and cut at line feeds; a first line that starts with ``?``
(the TSV header) is dropped; every other line that is not blank is stripped and cut at tabs
into cells, and each cell is cut at its first ``^^`` (the datatype suffix: ``"5"^^<…#int>``
reads ``"5"``). No recorded result is no rows. The gold's rows are read the same way from
whatever its run recorded (a table, or the text of an error).

Measures: ``successful`` (the questions whose query ran), ``em_successful`` (exact matches /
successful; undefined when none ran) and ``em_all`` (exact matches / all questions); per
question ``em`` (1 or 0). A question whose gold has no recorded execution is left out (a note
says how many); a system answer without one, or a failed call, did not run. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping

from evaluators.model import Dataset, Execution, Question
from evaluators.results import (
    QA,
    EvaluationResult,
    ExperimentTypeResult,
    MeasureValue,
    QuestionScore,
)

PROFILE = "execution-em"
# rows shown per question in the diagnostics (the measures use them all)
SHOWN_ROWS = 50


def result_rows(text: str | None) -> frozenset[tuple[str, ...]]:
    """Return the set of result rows of a recorded result, datatype suffixes cut.

    >>> sorted(result_rows('?m\\t?l\\n<http://o/R1>\\t"ViT"^^<http://x#string>\\n\\n'))
    [('<http://o/R1>', '"ViT"')]
    >>> result_rows(None) == result_rows("?x") == frozenset()
    True
    """
    if text is None:
        return frozenset()
    lines = text.strip().split("\n")
    if lines[0].startswith("?"):
        lines = lines[1:]
    return frozenset(
        tuple(cell.split("^^", 1)[0] for cell in line.strip().split("\t"))
        for line in lines
        if line.strip()
    )


def is_exact_match(gold: Execution, system: Execution | None) -> bool:
    """Return whether the system's query ran and its rows are the gold's.

    >>> gold = Execution("SUCCESS", '?x\\n"1"^^<http://x#int>')
    >>> is_exact_match(gold, Execution("SUCCESS", '?y\\n"1"')), is_exact_match(gold, None)
    (True, False)
    """
    if system is None or not system.succeeded:
        return False
    return result_rows(system.result) == result_rows(gold.result)


def _shown(rows: frozenset[tuple[str, ...]]) -> tuple[str, ...]:
    return tuple("\t".join(row) for row in sorted(rows)[:SHOWN_ROWS])


def _note(system: Execution | None, error: str | None) -> str:
    if error is not None:
        return "the system call failed"
    if system is None:
        return "no recorded execution of the system's query"
    if system.succeeded:
        return "SUCCESS"
    detail = f": {system.result[:300]}" if system.result else ""
    return f"{system.status}{detail}"


def evaluate_execution_em(
    dataset: Dataset,
    answers: Mapping[str, Question],
    *,
    language: str = "en",
    label: str = "",
    errors: Mapping[str, str] | None = None,
    millis: Mapping[str, float] | None = None,
) -> EvaluationResult:
    """Score recorded executions against the gold's under ``execution-em``.

    Args:
        dataset: the gold questions (with their recorded gold executions).
        answers: the system's answers by question id.
        language: questions without a text in it are left out.
        label: the dataset's name in the result.
        errors: question id -> message of a failed call (did not run).
        millis: question id -> time of a successful call.
    """
    errors = errors or {}
    millis = millis or {}
    kept = [q for q in dataset.questions if q.text(language) is not None]
    scored = [q for q in kept if q.execution is not None]
    per_question: list[QuestionScore] = []
    successful = matched = 0
    for gold in scored:
        assert gold.execution is not None
        answer = answers.get(gold.id) if gold.id not in errors else None
        system = answer.execution if answer is not None else None
        ran = system is not None and system.succeeded
        match = is_exact_match(gold.execution, system)
        successful += ran
        matched += match
        per_question.append(
            QuestionScore(
                gold.id,
                (MeasureValue("em", 1.0 if match else 0.0),),
                _shown(result_rows(gold.execution.result)),
                _shown(result_rows(system.result)) if ran and system is not None else (),
                error=errors.get(gold.id),
                millis=millis.get(gold.id),
                reading=_note(system, errors.get(gold.id)),
            )
        )
    measures = [
        MeasureValue("successful", float(successful)),
        MeasureValue("em_successful", matched / successful)
        if successful
        else MeasureValue("em_successful", None, "no system query ran successfully"),
        MeasureValue("em_all", matched / len(scored))
        if scored
        else MeasureValue("em_all", None, "no question with a recorded gold execution"),
        MeasureValue("errors", float(sum(1 for q in scored if q.id in errors))),
    ]
    timed = [millis[q.id] for q in scored if q.id in millis and q.id not in errors]
    measures.append(
        MeasureValue("avg_millis", sum(timed) / len(timed))
        if timed
        else MeasureValue("avg_millis", None, "no successful, timed system call")
    )
    measures.append(MeasureValue("questions", float(len(scored))))
    notes = []
    if len(kept) < len(dataset.questions):
        notes.append(
            f"{len(dataset.questions) - len(kept)} question(s) left out: no question text in "
            f"{language!r}"
        )
    if len(scored) < len(kept):
        notes.append(
            f"{len(kept) - len(scored)} question(s) left out: no recorded execution of the gold "
            "query (load the gold with its results, e.g. SciQA's answers.json)"
        )
    known = {q.id for q in dataset.questions}
    return EvaluationResult(
        label or dataset.source_id or "",
        PROFILE,
        language,
        len(scored),
        (ExperimentTypeResult(QA, tuple(measures), tuple(per_question)),),
        tuple(i for i in answers if i not in known),
        tuple(notes),
    )

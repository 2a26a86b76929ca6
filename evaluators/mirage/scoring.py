"""The ``mirage`` profile: accuracy per MIRAGE dataset and their mean, as MIRAGE reports them.

A question is right when the option the system chose (``evaluators.mirage.choice``) is the
gold option. Each of MIRAGE's datasets present in the evaluated dataset gets its accuracy
(``accuracy_<part>``: right / questions of that part); ``accuracy`` is the mean of those, as
MIRAGE's "Avg." column (with one part it is that part's accuracy). Every question counts: a
question without an answer, or whose system call failed, is wrong (MIRAGE's evaluation needs a
prediction file for every question and stops without one). Pure.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from evaluators.mirage.choice import Choice, system_choice
from evaluators.model import Dataset, Question
from evaluators.results import (
    QA,
    EvaluationResult,
    ExperimentTypeResult,
    MeasureValue,
    QuestionScore,
)

PROFILE = "mirage"
# MIRAGE's datasets in the order of its tables, with their measure ids
PART_MEASURES = {
    "mmlu": "accuracy_mmlu",
    "medqa": "accuracy_medqa",
    "medmcqa": "accuracy_medmcqa",
    "pubmedqa": "accuracy_pubmedqa",
    "bioasq": "accuracy_bioasq",
}


@dataclass(frozen=True, slots=True)
class Scored:
    """One question's outcome: its part, the gold and chosen letters, and how it was read."""

    question_id: str
    part: str
    gold: str
    choice: Choice

    @property
    def right(self) -> bool:
        """Whether the chosen option is the gold one."""
        return self.choice.letter == self.gold


def gold_letter(question: Question) -> str:
    """Return the gold option of a MIRAGE question (its one answer value), '' if it has none.

    >>> from evaluators.formats.mirage.benchmark import parse
    >>> from evaluators.formats.parsing.diagnostics import Diagnostics
    >>> doc = {"bioasq": {"q1": {"question": "Is it?", "options": {"A": "yes", "B": "no"},
    ...                          "answer": "B"}}}
    >>> gold_letter(parse(doc, Diagnostics("x")).questions[0])
    'B'
    """
    if question.answers and question.answers[0].values:
        return question.answers[0].values[0].value
    return ""


def score_question(gold: Question, answer: Question | None) -> Scored | None:
    """Return a question's outcome (``None`` for a question that has no options)."""
    if gold.choices is None:
        return None
    choice = system_choice(gold.choices, answer)
    return Scored(gold.id, gold.choices.part, gold_letter(gold), choice)


def accuracies(scored: list[Scored]) -> dict[str, float]:
    """Return the accuracy of each part (in MIRAGE's order) and ``accuracy``, their mean.

    >>> from evaluators.mirage.choice import Choice
    >>> rows = [Scored("a", "bioasq", "A", Choice("A", "")), Scored("b", "bioasq", "A",
    ...         Choice("B", "")), Scored("c", "mmlu", "C", Choice("C", ""))]
    >>> accuracies(rows)
    {'accuracy_mmlu': 1.0, 'accuracy_bioasq': 0.5, 'accuracy': 0.75}
    """
    right: dict[str, int] = defaultdict(int)
    total: dict[str, int] = defaultdict(int)
    for row in scored:
        total[row.part] += 1
        right[row.part] += row.right
    out = {m: right[p] / total[p] for p, m in PART_MEASURES.items() if total[p]}
    if out:
        out["accuracy"] = sum(out.values()) / len(out)
    return out


def _option_text(gold: Question, letter: str | None) -> str:
    if letter is None:
        return ""
    options = dict(gold.choices.options) if gold.choices else {}
    return f"{letter}: {options.get(letter, '(no such option)')}"


def evaluate_mirage(
    dataset: Dataset,
    answers: Mapping[str, Question],
    *,
    language: str = "en",
    label: str = "",
    errors: Mapping[str, str] | None = None,
    millis: Mapping[str, float] | None = None,
) -> EvaluationResult:
    """Score answers to a MIRAGE dataset under the ``mirage`` profile.

    Args:
        dataset: the gold questions (with their options).
        answers: the system's answers by question id.
        language: questions without a text in it are left out.
        label: the dataset's name in the result.
        errors: question id -> message of a failed call (the question is wrong).
        millis: question id -> time of a successful call.
    """
    errors = errors or {}
    millis = millis or {}
    kept = [q for q in dataset.questions if q.text(language) is not None]
    scored: list[Scored] = []
    per_question: list[QuestionScore] = []
    for gold in kept:
        outcome = score_question(gold, None if gold.id in errors else answers.get(gold.id))
        if outcome is None:
            continue
        scored.append(outcome)
        per_question.append(
            QuestionScore(
                gold.id,
                (MeasureValue("accuracy", 1.0 if outcome.right else 0.0),),
                (_option_text(gold, outcome.gold),),
                (_option_text(gold, outcome.choice.letter),) if outcome.choice.letter else (),
                error=errors.get(gold.id),
                millis=millis.get(gold.id),
                reading=f"chosen by: {outcome.choice.how}",
            )
        )
    values = accuracies(scored)
    measures = [MeasureValue(m, v) for m, v in values.items() if m != "accuracy"]
    measures.append(
        MeasureValue("accuracy", values["accuracy"])
        if "accuracy" in values
        else MeasureValue("accuracy", None, "no multiple-choice question in the language")
    )
    measures.append(MeasureValue("errors", float(sum(1 for q in kept if q.id in errors))))
    timed = [millis[q.id] for q in kept if q.id in millis and q.id not in errors]
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
        notes.append(f"{len(kept) - len(scored)} question(s) left out: not multiple-choice")
    unknown = tuple(i for i in answers if i not in {q.id for q in dataset.questions})
    return EvaluationResult(
        label or dataset.source_id or "",
        PROFILE,
        language,
        len(scored),
        (ExperimentTypeResult(QA, tuple(measures), tuple(per_question)),),
        unknown,
        tuple(notes),
    )

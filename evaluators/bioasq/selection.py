"""Which BioASQ questions each experiment type scores, and why a type may score none.

The official evaluator decides per measure which gold questions count: every question that has
an entry in the response (a missing one is skipped, not scored 0), restricted by question type
for exact answers, by "both sides have concepts" for concepts, and under version 9 by "the gold
list is not empty". This module holds those rules as one ``Plan`` per experiment type, and
pairs gold questions with the response's. Pure; used by ``evaluators.bioasq.scoring``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evaluators.errors import EvaluationError
from evaluators.model import BioasqGold, Dataset

MISSING = "question missing from the response: skipped, as the official evaluator does"
_EMPTY = BioasqGold(question_type="")  # what a missing question is scored as under strict_missing


@dataclass(frozen=True, slots=True)
class Pair:
    """A gold question with the system's answer to it (``None``: missing from the response)."""

    id: str
    gold: BioasqGold
    system: BioasqGold | None


@dataclass(frozen=True, slots=True)
class Plan:
    """The scoring rules of one experiment type.

    ``applies`` tells from the gold side (and the version) whether a question counts;
    ``attempted`` whether a response answer fills this part at all; ``needs``, if set, is a
    per-question condition on the system side without which the official evaluator skips the
    question. The three strings explain undefined results.
    """

    experiment_type: str
    measures: tuple[str, ...]
    per_question: tuple[str, ...]
    applies: Callable[[BioasqGold, int], bool]
    attempted: Callable[[BioasqGold], bool]
    none_in_gold: str
    none_in_response: str
    nothing_scored: str
    needs: Callable[[BioasqGold], bool] | None = None
    unmet: str = ""


def _exact(answer: BioasqGold) -> bool:
    return answer.yesno is not None or bool(answer.entities)


def _typed(question_type: str) -> Callable[[BioasqGold, int], bool]:
    def applies(gold: BioasqGold, version: int) -> bool:
        return gold.question_type == question_type and (version != 9 or _exact(gold))

    return applies


_RANKED = ("map", "gmap", "mean_precision", "mean_recall", "mean_f1")
_RANKED_PER_QUESTION = ("average_precision", "precision", "recall", "f1")
_NO_EXACT = "the response has no exact answers (a phase A response?)"

DOCUMENTS = Plan(
    "documents", _RANKED, _RANKED_PER_QUESTION,
    lambda g, v: v != 9 or bool(g.documents),
    lambda s: bool(s.documents),
    "no gold questions with documents", "the response has no documents (a phase B response?)",
    "every gold question is missing from the response",
)  # fmt: skip
SNIPPETS = Plan(
    "snippets", _RANKED, _RANKED_PER_QUESTION,
    lambda g, v: v != 9 or bool(g.snippets),
    lambda s: bool(s.snippets),
    "no gold questions with snippets", "the response has no snippets",
    "every gold question is missing from the response",
)  # fmt: skip
CONCEPTS = Plan(
    "concepts", _RANKED, _RANKED_PER_QUESTION,
    # version 9 scores concepts in its document loop, which skips questions without documents
    lambda g, v: bool(g.concepts) and (v != 9 or bool(g.documents)),
    lambda s: bool(s.concepts),
    "no gold questions with concepts", "the response has no concepts",
    "no question has concepts in both the gold file and the response",
    needs=lambda s: bool(s.concepts),
    unmet="no concepts in the response for this question: skipped, as the official evaluator does",
)  # fmt: skip
YESNO = Plan(
    "yesno", ("accuracy", "macro_f1", "f1_yes", "f1_no"), ("accuracy",),
    _typed("yesno"), _exact,
    "no yes/no questions", _NO_EXACT, "every yes/no question is missing from the response",
)  # fmt: skip
FACTOID = Plan(
    "factoid", ("strict_accuracy", "lenient_accuracy", "mrr"),
    ("strict_accuracy", "lenient_accuracy", "reciprocal_rank"),
    _typed("factoid"), _exact,
    "no factoid questions", _NO_EXACT, "every factoid question is missing from the response",
)  # fmt: skip
LIST = Plan(
    "list", ("mean_precision", "mean_recall", "mean_f1"),
    ("precision", "recall", "f1", "tp", "fp", "fn"),
    _typed("list"), _exact,
    "no list questions", _NO_EXACT, "every list question is missing from the response",
)  # fmt: skip
IDEAL = Plan(
    "ideal", ("rouge2_recall", "rouge2_f1", "rougesu4_recall", "rougesu4_f1"),
    ("rouge2_recall", "rouge2_f1", "rougesu4_recall", "rougesu4_f1"),
    lambda g, v: bool(g.ideal_answers),
    lambda s: bool(s.ideal_answers),
    "no gold ideal answers", "the response has no ideal answers",
    "every question with an ideal answer is missing from the response",
)  # fmt: skip


def pairs_of(gold: Dataset, response: Dataset) -> list[Pair]:
    """Pair every gold question, in gold order, with the response question of the same id.

    Args:
        gold: the gold file.
        response: the system response (the first question wins for a repeated id).

    Returns:
        One pair per gold question; a response question without BioASQ data counts as an
        empty answer.

    Raises:
        EvaluationError: a gold question has no BioASQ data.
    """
    by_id = response.by_id()
    pairs = []
    for question in gold.questions:
        if question.bioasq is None:
            raise EvaluationError(
                f"Gold question {question.id!r} has no BioASQ data; "
                "evaluate_bioasq needs a BioASQ task-b gold file"
            )
        answer = by_id.get(question.id)
        system = None if answer is None else (answer.bioasq or _EMPTY)
        pairs.append(Pair(question.id, question.bioasq, system))
    return pairs


def entries(
    pairs: Sequence[Pair], plan: Plan, version: int, strict: bool
) -> list[tuple[Pair, BioasqGold | str]] | str:
    """Return the questions an experiment type scores, or why it scores none.

    Args:
        pairs: every gold question with its answer.
        plan: the experiment type's rules.
        version: the official evaluator's version flag.
        strict: score missing questions (and, for concepts, questions whose answer has none)
            as empty answers instead of skipping them.

    Returns:
        For each applicable question, the answer to score or the reason it is skipped; or, as
        a string, the reason no question applies.
    """
    applicable = [p for p in pairs if plan.applies(p.gold, version)]
    if not applicable:
        return plan.none_in_gold
    if not any(p.system is not None and plan.attempted(p.system) for p in pairs):
        return plan.none_in_response
    result: list[tuple[Pair, BioasqGold | str]] = []
    for pair in applicable:
        if pair.system is None:
            result.append((pair, _EMPTY if strict else MISSING))
        elif plan.needs is not None and not plan.needs(pair.system):
            result.append((pair, pair.system if strict else plan.unmet))
        else:
            result.append((pair, pair.system))
    return result

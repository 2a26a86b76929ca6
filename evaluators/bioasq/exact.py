"""BioASQ task-b phase B measures: yes/no, factoid and list exact answers.

Pure functions that follow the official evaluator (BioASQ/Evaluation-Measures) including its quirks;
``evaluators.bioasq.scoring`` pairs gold and system questions and aggregates. The official code
removes matched entries from its answer lists while scoring a list question; here every function
works on its own copies and never changes its arguments.

Matching is case-insensitive string equality and nothing more: no trimming, no punctuation
removal ("egfr " does not match "egfr").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

Entity = tuple[str, ...]  # one answer entity: its synonyms, the first one being its name


@dataclass(frozen=True, slots=True)
class YesNoScores:
    """Aggregate yes/no scores: accuracy, F1 of each class and their mean (macro F1)."""

    accuracy: float
    f1_yes: float
    f1_no: float
    macro_f1: float


@dataclass(frozen=True, slots=True)
class FactoidScores:
    """Per-question factoid scores: strict and lenient accuracy (0 or 1) and reciprocal rank."""

    strict: float
    lenient: float
    reciprocal_rank: float


@dataclass(frozen=True, slots=True)
class ListScores:
    """Per-question list scores with the counts they come from."""

    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int


def yesno_label(answer: str | None) -> str:
    """Return ``yes``, ``no`` or ``none`` by the official rule.

    The answer is lowercased; if it contains ``yes`` it is yes, else if it contains ``no`` it
    is no, else none. So "I don't know" and "unknown" are no.

    Args:
        answer: the answer as written (gold or system), or ``None``.

    Returns:
        The label.

    >>> yesno_label("Yes."), yesno_label("I don't know"), yesno_label("maybe")
    ('yes', 'no', 'none')
    """
    text = (answer or "").lower()
    if "yes" in text:
        return "yes"
    return "no" if "no" in text else "none"


def yesno_correct(gold: str | None, system: str | None) -> bool:
    """Return whether a system yes/no answer has the gold answer's label (a missing one never has).

    >>> yesno_correct("no", "Not known"), yesno_correct("yes", ""), yesno_correct("yes", None)
    (True, False, False)
    """
    if system is None or gold is None:
        return False
    return yesno_label(gold) == yesno_label(system)


def _class_f1(outcomes: Sequence[tuple[bool, bool]], positive_is_yes: bool) -> float:
    # Official confusion matrix: a gold-positive question answered right is a TP, answered
    # wrong an "FP"; a gold-negative one answered wrong an "FN". F1 = 2TP / (2TP + FP + FN),
    # and 0 when that is 0/0 (no question of the class and no errors).
    tp = fp = fn = 0
    for gold_yes, correct in outcomes:
        if gold_yes == positive_is_yes:
            tp += correct
            fp += not correct
        else:
            fn += not correct
    denominator = 2 * tp + fp + fn
    return 2 * tp / denominator if denominator else 0.0


def yesno_scores(outcomes: Sequence[tuple[bool, bool]]) -> YesNoScores:
    """Aggregate yes/no outcomes into accuracy, F1-yes, F1-no and macro F1.

    Accuracy = correct / questions; F1 of a class = 2TP / (2TP + FP + FN) with that class as
    positive; macro F1 = (F1-yes + F1-no) / 2. A "none" answer is wrong for both classes.
    No questions give 0 everywhere (callers report that case as undefined).

    Args:
        outcomes: one ``(gold is yes, system answer correct)`` pair per question.

    Returns:
        The four scores.

    >>> s = yesno_scores([(True, True), (False, True), (True, False), (False, True), (True, False)])
    >>> s.accuracy, s.f1_yes, round(s.f1_no, 6), round(s.macro_f1, 6)
    (0.6, 0.5, 0.666667, 0.583333)
    """
    if not outcomes:
        return YesNoScores(0.0, 0.0, 0.0, 0.0)
    accuracy = sum(correct for _, correct in outcomes) / len(outcomes)
    f1_yes = _class_f1(outcomes, True)
    f1_no = _class_f1(outcomes, False)
    return YesNoScores(accuracy, f1_yes, f1_no, (f1_yes + f1_no) / 2)


def gold_entities(entities: Sequence[Entity]) -> list[list[str]]:
    """Return gold entities as the official parser keeps them: every synonym lowercased."""
    return [[name.lower() for name in entity] for entity in entities]


def system_entities(entities: Sequence[Entity], version: int) -> list[list[str]]:
    """Return system entities as the official parser keeps them.

    Strings are lowercased; from version 5 on only the first string of each entity is kept
    (participants submit no synonyms since BioASQ5), before that all of them.

    >>> system_entities([("EGFR ", "EGFR"), ()], 8)
    [['egfr '], []]
    """
    if version >= 5:
        return [[entity[0].lower()] if entity else [] for entity in entities]
    return gold_entities(entities)


def _first_match(pool: Sequence[list[str]], names: Sequence[str]) -> int | None:
    wanted = set(names)
    for index, entry in enumerate(pool):
        if wanted.intersection(entry):
            return index
    return None


def factoid_scores(gold: Sequence[Entity], system: Sequence[Entity], version: int) -> FactoidScores:
    """Score ranked factoid candidates against the gold entity (or entities).

    A candidate matches when one of its kept strings equals a gold synonym (lowercase
    equality). Strict accuracy: the first candidate matches; lenient: any does; reciprocal
    rank: 1/rank of the first match, 0 if none. Candidates are not truncated to 5.

    Args:
        gold: the gold entities with synonyms.
        system: the system candidates in rank order.
        version: the official evaluator's version flag (synonym handling).

    Returns:
        The question's scores.

    >>> factoid_scores([("BRCA1",)], [("tp53",), ("brca1",)], 8)
    FactoidScores(strict=0.0, lenient=1.0, reciprocal_rank=0.5)
    """
    pool = gold_entities(gold)
    for rank, candidate in enumerate(system_entities(system, version), start=1):
        if _first_match(pool, candidate) is not None:
            return FactoidScores(1.0 if rank == 1 else 0.0, 1.0, 1 / rank)
    return FactoidScores(0.0, 0.0, 0.0)


def list_scores(gold: Sequence[Entity], system: Sequence[Entity], version: int) -> ListScores:
    """Score a list answer: greedy matching with removal of matched gold entries.

    Each system entry, in order, is a TP if it matches a gold entry not matched yet (the first
    such entry is then used up, so a repeated answer is an FP), else an FP. FN counts the gold
    entries left over that also match none of the system entries in a second greedy pass
    (official; a leftover gold entry sharing a string with a system entry is not an FN).
    P = TP / (TP + FP), R = TP / (TP + FN), F1 = 2PR / (P + R); an empty answer scores 0.

    Args:
        gold: the gold entities with synonyms.
        system: the system's entries.
        version: the official evaluator's version flag (synonym handling).

    Returns:
        The question's scores and counts.

    >>> s = list_scores([("a", "alpha"), ("b",), ("c",)], [("alpha",), ("b",), ("d",), ("b",)], 8)
    >>> s.tp, s.fp, s.fn, s.precision, round(s.recall, 6), round(s.f1, 6)
    (2, 2, 1, 0.5, 0.666667, 0.571429)
    """
    answers = system_entities(system, version)
    if not answers:
        return ListScores(0.0, 0.0, 0.0, 0, 0, len(gold))
    unmatched = gold_entities(gold)
    tp = 0
    for answer in answers:
        index = _first_match(unmatched, answer)
        if index is not None:
            tp += 1
            del unmatched[index]
    fp = len(answers) - tp
    pool = [list(answer) for answer in answers]
    fn = 0
    for entry in unmatched:
        index = _first_match(pool, entry)
        if index is None:
            fn += 1
        else:
            del pool[index]
    precision = tp / (tp + fp)
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision and recall else 0.0
    return ListScores(precision, recall, f1, tp, fp, fn)

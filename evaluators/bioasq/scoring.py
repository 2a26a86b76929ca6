"""BioASQ task-b evaluation under the ``bioasq`` profile: pair questions, score, aggregate.

``evaluate_bioasq`` scores a system response (phase A, phase B or both) against a BioASQ gold
file the way the official evaluator (BioASQ/Evaluation-Measures, ``EvaluatorTask1b``) does,
quirks included. The per-question measures live in ``evaluators.bioasq.ranking``
(documents, concepts), ``evaluators.bioasq.snippets``, ``evaluators.bioasq.exact`` (yes/no,
factoid, list) and ``evaluators.bioasq.rouge`` (ideal answers); which questions each type scores is
decided in ``evaluators.bioasq.selection``. Pure: no files, no store, no logging. docs/bioasq.md
describes every rule and quirk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from evaluators.bioasq import exact as answers
from evaluators.bioasq import ranking as retrieval
from evaluators.bioasq import snippets as snippet_measures
from evaluators.bioasq.rouge import ideal_scores
from evaluators.bioasq.selection import (
    CONCEPTS,
    DOCUMENTS,
    FACTOID,
    IDEAL,
    LIST,
    SNIPPETS,
    YESNO,
    Pair,
    Plan,
    entries,
    pairs_of,
)
from evaluators.errors import UnknownSubExperimentError
from evaluators.model import BioasqGold, Dataset
from evaluators.results import (
    BIOASQ_PROFILE,
    EvaluationResult,
    ExperimentTypeResult,
    MeasureValue,
    QuestionScore,
)

DEFAULT_VERSION = 8
_SNIPPET_NAN = (
    "no gold snippets: the official evaluator divides 0 by 0 here "
    "(counted as 0 in MAP and as a perfect question in GMAP)"
)

T = TypeVar("T")
# a question's ranked-list scores with the gold and system items they were computed from
_Ranked = tuple[retrieval.RankedScores, tuple[str, ...], tuple[str, ...]]


def evaluate_bioasq(
    gold: Dataset,
    response: Dataset,
    *,
    version: int = DEFAULT_VERSION,
    strict_missing: bool = False,
    dataset_label: str = "",
) -> EvaluationResult:
    """Score a BioASQ task-b response against a gold file with the official measures.

    Experiment types: ``documents``, ``snippets`` and (when the gold file has concepts)
    ``concepts`` (MAP, GMAP, mean P/R/F1), ``yesno`` (accuracy, macro F1, F1-yes, F1-no),
    ``factoid`` (strict and lenient accuracy, MRR), ``list`` (mean P/R/F1) and ``ideal``
    (ROUGE-2 and ROUGE-SU4 recall and F1), each with the number of questions it scored. Every
    type is reported; its measures are undefined, with the reason, when no gold question
    applies, when the response never fills that part (a phase A response has no exact
    answers), or when every applicable question is missing from the response.

    Args:
        gold: the gold file (every question must carry BioASQ data).
        response: the system response; questions are matched by id.
        version: the official evaluator's ``-e`` flag: 2, 3, 5, 8 or 9.
        strict_missing: count questions missing from the response as 0 instead of skipping
            them (the official evaluator skips them).
        dataset_label: the dataset name to record (default: the gold file's own id).

    Returns:
        The result under the ``bioasq`` profile, with per-question scores.

    Raises:
        UnknownSubExperimentError: ``version`` is not one the official evaluator knows.
        EvaluationError: a gold question has no BioASQ data.
    """
    if version not in retrieval.VERSIONS:
        known = ", ".join(str(v) for v in retrieval.VERSIONS)
        raise UnknownSubExperimentError(
            f"Unknown BioASQ evaluator version {version!r}; expected one of: {known}"
        )
    pairs = pairs_of(gold, response)
    results = [
        _documents(pairs, version, strict_missing),
        _snippets(pairs, version, strict_missing),
        *(
            [_concepts(pairs, version, strict_missing)]
            if any(p.gold.concepts for p in pairs)
            else []
        ),
        _yesno(pairs, version, strict_missing),
        _factoid(pairs, version, strict_missing),
        _list(pairs, version, strict_missing),
        _ideal(pairs, version, strict_missing),
    ]
    gold_ids = {q.id for q in gold.questions}
    unknown = tuple(dict.fromkeys(q.id for q in response.questions if q.id not in gold_ids))
    missing = sum(p.system is None for p in pairs)
    handling = "counted as 0 (strict_missing)" if strict_missing else "skipped (official)"
    return EvaluationResult(
        dataset=dataset_label or gold.source_id or "",
        profile=BIOASQ_PROFILE,
        language="en",
        questions=len(gold.questions),
        results=tuple(results),
        unknown_ids=unknown,
        notes=(
            f"official BioASQ evaluator semantics, version {version} (-e {version})",
            f"{missing} gold question(s) missing from the response, {handling}",
        ),
    )


def _undefined(names: Sequence[str], reason: str) -> tuple[MeasureValue, ...]:
    return tuple(MeasureValue(name, None, reason) for name in names)


def _measures(
    names: Sequence[str], values: Sequence[float | None], reason: str = ""
) -> tuple[MeasureValue, ...]:
    return tuple(
        MeasureValue(name, value, None if value is not None else reason)
        for name, value in zip(names, values, strict=True)
    )


def _score_all(
    pairs: Sequence[Pair],
    plan: Plan,
    version: int,
    strict: bool,
    score: Callable[[Pair, BioasqGold], tuple[T, QuestionScore]],
) -> tuple[list[T], tuple[QuestionScore, ...], str]:
    """Score every applicable question; return raw scores, per-question scores, or a reason."""
    todo = entries(pairs, plan, version, strict)
    if isinstance(todo, str):
        return [], (), todo
    raw: list[T] = []
    per_question = []
    for pair, system in todo:
        if isinstance(system, str):
            per_question.append(QuestionScore(pair.id, _undefined(plan.per_question, system)))
            continue
        value, question_score = score(pair, system)
        raw.append(value)
        per_question.append(question_score)
    reason = "" if raw else plan.nothing_scored
    return raw, tuple(per_question), reason


def _result(
    plan: Plan,
    values: Sequence[float] | None,
    per_question: tuple[QuestionScore, ...],
    reason: str,
) -> ExperimentTypeResult:
    names = (*plan.measures, "questions")
    if values is None:
        return ExperimentTypeResult(plan.experiment_type, _undefined(names, reason), per_question)
    return ExperimentTypeResult(plan.experiment_type, _measures(names, values), per_question)


def _ranked_result(
    plan: Plan,
    pairs: Sequence[Pair],
    version: int,
    strict: bool,
    score: Callable[[Pair, BioasqGold], _Ranked],
) -> ExperimentTypeResult:
    def one(pair: Pair, system: BioasqGold) -> tuple[retrieval.RankedScores, QuestionScore]:
        scores, gold_items, system_items = score(pair, system)
        values = (scores.average_precision, scores.precision, scores.recall, scores.f1)
        measures = _measures(plan.per_question, values, _SNIPPET_NAN)
        return scores, QuestionScore(pair.id, measures, gold_items, system_items)

    raw, per_question, reason = _score_all(pairs, plan, version, strict, one)
    if not raw:
        return _result(plan, None, per_question, reason)
    aps = [s.average_precision for s in raw]
    n = len(raw)
    return _result(
        plan,
        (
            retrieval.mean_average_precision(aps),
            retrieval.gmap(aps, snippets=plan is SNIPPETS),
            sum(s.precision for s in raw) / n,
            sum(s.recall for s in raw) / n,
            sum(s.f1 for s in raw) / n,
            n,
        ),
        per_question,
        "",
    )


def _documents(pairs: Sequence[Pair], version: int, strict: bool) -> ExperimentTypeResult:
    def score(pair: Pair, system: BioasqGold) -> _Ranked:
        gold_docs = retrieval.unique(pair.gold.documents)
        system_docs = retrieval.unique(system.documents)
        return retrieval.list_scores(gold_docs, system_docs, version), gold_docs, system_docs

    return _ranked_result(DOCUMENTS, pairs, version, strict, score)


def _concepts(pairs: Sequence[Pair], version: int, strict: bool) -> ExperimentTypeResult:
    def score(pair: Pair, system: BioasqGold) -> _Ranked:
        gold_items = retrieval.unique(pair.gold.concepts)
        system_items = retrieval.unique(system.concepts)
        return retrieval.list_scores(gold_items, system_items, version), gold_items, system_items

    return _ranked_result(CONCEPTS, pairs, version, strict, score)


def _snippets(pairs: Sequence[Pair], version: int, strict: bool) -> ExperimentTypeResult:
    def score(pair: Pair, system: BioasqGold) -> _Ranked:
        # The official evaluator merges each question's snippet lists in its document loop and
        # again in its snippet loop; version 9 skips the first for questions without gold
        # documents. A second run changes nothing for well-formed snippets; it can for reversed
        # ranges (end before begin), which the official loop also merges.
        passes = 1 if version == 9 and not pair.gold.documents else 2
        gold = snippet_measures.merged(
            [snippet_measures.span(s) for s in pair.gold.snippets], passes
        )
        ranked = snippet_measures.merged(
            [snippet_measures.span(s) for s in system.snippets], passes
        )
        scores = snippet_measures.snippet_scores(gold, ranked, version)
        return scores, tuple(map(_describe, gold)), tuple(map(_describe, ranked))

    return _ranked_result(SNIPPETS, pairs, version, strict, score)


def _describe(span: snippet_measures.Span) -> str:
    sections = span.begin_section
    if span.end_section != span.begin_section:
        sections += f"..{span.end_section}"
    return f"{span.document} {sections} {span.begin}-{span.end}"


def _yesno(pairs: Sequence[Pair], version: int, strict: bool) -> ExperimentTypeResult:
    def score(pair: Pair, system: BioasqGold) -> tuple[tuple[bool, bool], QuestionScore]:
        correct = answers.yesno_correct(pair.gold.yesno, system.yesno)
        outcome = (answers.yesno_label(pair.gold.yesno) == "yes", correct)
        gold_text = (pair.gold.yesno,) if pair.gold.yesno is not None else ()
        system_text = (system.yesno,) if system.yesno is not None else ()
        measures = _measures(("accuracy",), (float(correct),))
        return outcome, QuestionScore(pair.id, measures, gold_text, system_text)

    raw, per_question, reason = _score_all(pairs, YESNO, version, strict, score)
    if not raw:
        return _result(YESNO, None, per_question, reason)
    s = answers.yesno_scores(raw)
    return _result(YESNO, (s.accuracy, s.macro_f1, s.f1_yes, s.f1_no, len(raw)), per_question, "")


def _entity_strings(entities: Sequence[tuple[str, ...]]) -> tuple[str, ...]:
    return tuple(" | ".join(entity) for entity in entities)


def _means(
    plan: Plan,
    pairs: Sequence[Pair],
    version: int,
    strict: bool,
    score: Callable[[Pair, BioasqGold], tuple[tuple[float, ...], QuestionScore]],
) -> ExperimentTypeResult:
    """Score each question and report the column means of the values ``score`` returns."""
    raw, per_question, reason = _score_all(pairs, plan, version, strict, score)
    if not raw:
        return _result(plan, None, per_question, reason)
    means = tuple(sum(column) / len(raw) for column in zip(*raw, strict=True))
    return _result(plan, (*means, len(raw)), per_question, "")


def _factoid(pairs: Sequence[Pair], version: int, strict: bool) -> ExperimentTypeResult:
    def score(pair: Pair, system: BioasqGold) -> tuple[tuple[float, ...], QuestionScore]:
        s = answers.factoid_scores(pair.gold.entities, system.entities, version)
        values = (s.strict, s.lenient, s.reciprocal_rank)
        gold_text = _entity_strings(pair.gold.entities)
        measures = _measures(FACTOID.per_question, values)
        return values, QuestionScore(pair.id, measures, gold_text, _entity_strings(system.entities))

    return _means(FACTOID, pairs, version, strict, score)


def _list(pairs: Sequence[Pair], version: int, strict: bool) -> ExperimentTypeResult:
    def score(pair: Pair, system: BioasqGold) -> tuple[tuple[float, ...], QuestionScore]:
        s = answers.list_scores(pair.gold.entities, system.entities, version)
        gold_text = _entity_strings(pair.gold.entities)
        measures = _measures(LIST.per_question, (s.precision, s.recall, s.f1, s.tp, s.fp, s.fn))
        question = QuestionScore(pair.id, measures, gold_text, _entity_strings(system.entities))
        return (s.precision, s.recall, s.f1), question

    return _means(LIST, pairs, version, strict, score)


def _ideal(pairs: Sequence[Pair], version: int, strict: bool) -> ExperimentTypeResult:
    def score(pair: Pair, system: BioasqGold) -> tuple[tuple[float, ...], QuestionScore]:
        # A system may send its ideal answer as several strings: they form one summary.
        s = ideal_scores(" ".join(system.ideal_answers), pair.gold.ideal_answers)
        values = (s.rouge2_recall, s.rouge2_f1, s.rougesu4_recall, s.rougesu4_f1)
        measures = _measures(IDEAL.per_question, values)
        gold, answer = pair.gold.ideal_answers, system.ideal_answers
        return values, QuestionScore(pair.id, measures, gold, answer)

    return _means(IDEAL, pairs, version, strict, score)

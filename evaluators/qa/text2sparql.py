"""The TEXT2SPARQL profiles: the official 2025 and 2026 evaluations, and a corrected one beside.

``text2sparql`` reproduces the challenge client (pytrec_eval 0.5) to the last digit
(``../shared/reference/text2sparql.md``): each question's gold and system answers become flat
result sets of lexical values (``{"true": 1|0}`` for ASK), scored with trec_eval's ``set_P``,
``set_recall``, ``set_F`` and, on ``RESULT_ORDER_MATTERS`` questions, ``ndcg`` (items ranked by
trec_eval's tie rule, string descending). Averages: numpy means over all questions (``ndcg``
over the ordered ones); the headline ``set_F_ndcg`` is the exact mean of each question's
``ndcg`` (ordered) or ``set_F`` together with the mean ``ndcg`` as one more value; per
language (when there are several) exact means over that language, ``set_F_ndcg-<lang>``
without the extra value.

``text2sparql-2026`` scores every question and the ``average`` object as ``text2sparql`` does;
only the per-language averages change (the TEXT2SPARQL'26 files): one object
``average-<lang>`` per language (when there are several) with ``set_recall``, ``set_F``,
``set_P`` (exact means over the language's questions), ``ndcg`` (over its ordered ones) and
``set_F_ndcg``, the exact mean of the language's n values together with the language's mean
``ndcg`` as one more value (n + 1 values, as ``average`` counts its own mean ndcg once).

``text2sparql-corrected`` changes exactly these rules (``Rules``): a boolean is scored by its
value; answers are compared as RDF terms (IRI, literal, datatype, language; lexical forms where
a result-set file left nothing else); ordered questions are ranked by the system's row order;
an empty answer to an empty reference is right; the headline is the mean over the questions
asked. Pure; ``score`` takes the cases ``evaluators.qa.scoring`` prepares.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from evaluators.formats.text2sparql.writer import result_set
from evaluators.model import AnswerSet, Dataset, Question
from evaluators.qa.subexperiments import QuestionCase
from evaluators.qa.text2sparql_file import (
    KEYS,
    RULES,
    Row,
    Rules,
    aggregate,
    evaluation_document,
    headline_value,
    rows,
)
from evaluators.qa.trec import ndcg, set_measures, trec_ranking
from evaluators.results import (
    QA,
    EvaluationResult,
    ExperimentTypeResult,
    MeasureValue,
    QuestionScore,
)

_NO_ORDERED = "no question is marked RESULT_ORDER_MATTERS"


def _items(answers: Sequence[AnswerSet] | None, rules: Rules) -> dict[str, int]:
    """Return an answer as a result set: item key -> relevance, in the system's row order."""
    if not answers:
        return {}
    if not rules.rdf_terms or any(a.lexical for a in answers):
        return result_set(answers)
    items: dict[str, int] = {}
    for answer in answers:
        if answer.boolean is not None and not answer.values:
            items["true"] = 1 if answer.boolean else 0
        for value in answer.values:
            items.setdefault(str(value), 1)
    return items


def _boolean(answers: Sequence[AnswerSet] | None) -> bool | None:
    if answers and len(answers) == 1 and not answers[0].values:
        return answers[0].boolean
    return None


def _lexical(answers: Sequence[AnswerSet] | None) -> bool:
    return bool(answers) and any(a.lexical for a in answers or ())


def question_values(
    gold: Question, system: Question | None, rules: Rules
) -> tuple[dict[str, float], tuple[str, ...], tuple[str, ...]]:
    """Return one question's measures (``set_p``, ``set_recall``, ``set_f``, ``ndcg`` when
    ordered) and its gold and system items, under ``rules``."""
    system_answers = system.answers if system is not None else None
    # where either side keeps only lexical forms, both are compared by them
    lexical = _lexical(gold.answers) or _lexical(system_answers)
    term_rules = replace(rules, rdf_terms=False) if lexical else rules
    qrels = _items(gold.answers, term_rules)
    run = _items(system_answers, term_rules)
    expected, found = _boolean(gold.answers), _boolean(system_answers)
    if rules.booleans_by_value and expected is not None:
        right = 1.0 if found is expected else 0.0
        values = {"set_p": right, "set_recall": right, "set_f": right}
    elif rules.empty_reference_right and not qrels:
        right = 0.0 if run else 1.0
        values = {"set_p": right, "set_recall": right, "set_f": right}
    else:
        s = set_measures(qrels, run)
        values = {"set_p": s.precision, "set_recall": s.recall, "set_f": s.f1}
    parts = gold.text2sparql
    if parts is not None and parts.order_matters:
        if rules.row_order:
            relevant = {k: v for k, v in qrels.items() if v > 0}
            values["ndcg"] = ndcg(relevant, list(run)) if relevant else (0.0 if run else 1.0)
        else:
            values["ndcg"] = ndcg(qrels, trec_ranking(run))
    return values, tuple(qrels), tuple(run)


def score(
    cases: Sequence[QuestionCase],
    profile: str,
    notes: Mapping[str, str] | None = None,
) -> ExperimentTypeResult:
    """Score the cases of one evaluation under ``text2sparql`` or ``text2sparql-corrected``.

    A failed call or a missing answer is an empty result (the official client's rule).
    ``notes`` holds per-question remarks (engine differences of the reference) to attach.
    """
    rules = RULES[profile]
    per_question: list[QuestionScore] = []
    table: list[Row] = []
    for case in cases:
        usable = case.system if case.error is None else None
        values, gold, system = question_values(case.gold, usable, rules)
        measures = [MeasureValue(m, v) for m, v in values.items()]
        measures.append(MeasureValue("set_f_ndcg", headline_value(values)))
        note = (notes or {}).get(case.id)
        per_question.append(
            QuestionScore(
                case.id,
                tuple(measures),
                gold,
                system,
                (),
                case.error,
                case.millis,
                notes=(note,) if note else (),
            )
        )
        table.append(Row(case.id, case.gold.languages[0] if case.gold.languages else "", values))
    averages = aggregate(table, rules)
    measures = []
    for measure in ("set_p", "set_recall", "set_f", "ndcg", "set_f_ndcg"):
        value = averages.get(KEYS.get(measure, "set_F_ndcg"))
        reason = None if value is not None else (_NO_ORDERED if table else "no questions")
        measures.append(MeasureValue(measure, value, reason))
    measures.append(MeasureValue("errors", sum(1 for c in cases if c.error is not None)))
    timed = [c.millis for c in cases if c.error is None and c.millis is not None]
    measures.append(
        MeasureValue("avg_millis", sum(timed) / len(timed))
        if timed
        else MeasureValue("avg_millis", None, "no successful, timed system call")
    )
    measures.append(MeasureValue("questions", len(cases)))
    return ExperimentTypeResult(QA, tuple(measures), tuple(per_question))


def evaluation_json(
    result: EvaluationResult, dataset: Dataset | None = None
) -> dict[str, Any] | None:
    """Return ``text2sparql_eval``: the evaluation in the official file's shape (``None`` for
    other profiles)."""
    if result.profile not in RULES:
        return None
    scored = result.get(QA)
    if scored is None:
        return None
    languages = {}
    if dataset is not None:
        languages = {q.id: q.languages[0] for q in dataset.questions if q.languages}
    return evaluation_document(rows(scored.per_question, languages), RULES[result.profile])


def question_notes(result: EvaluationResult) -> dict[str, str]:
    """Return each question's remark (an engine difference of its reference), by question id."""
    scored = result.get(QA)
    if scored is None:
        return {}
    return {s.question_id: s.notes[0] for s in scored.per_question if s.notes}

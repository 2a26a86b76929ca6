"""Gold answers of a TEXT2SPARQL questions file from a published reference result set.

The questions file has no answers; the challenge publishes the reference results as a
result-set file (``qname -> {value: relevance}``). ``with_gold_results`` checks that the two
fit (every question has an entry, every entry is a question) and returns the questions with
those answers (lexical forms, as the file keeps them). Where the result set names its ordered
questions (``order_required``, 2026), that list decides which answers are ordered, as it does
in the official evaluation: a question's ``RESULT_ORDER_MATTERS`` feature is added or removed
to match, and every change is a warning naming the question. Pure.
"""

from __future__ import annotations

from dataclasses import replace

from evaluators.errors import DatasetFormatError
from evaluators.formats.text2sparql.result_sets import order_listed
from evaluators.model import (
    ORDER_MATTERS,
    Dataset,
    ParseWarning,
    Question,
    SourceFormat,
    question_order,
)

# Messages quote at most this many qnames.
_QUOTED = 5


def _listed(ids: list[str]) -> str:
    shown = ", ".join(sorted(ids, key=question_order)[:_QUOTED])
    return shown + (f" and {len(ids) - _QUOTED} more" if len(ids) > _QUOTED else "")


def with_gold_results(questions: Dataset, results: Dataset, *, source: str) -> Dataset:
    """Return ``questions`` with gold answers from a reference result set.

    Args:
        questions: a parsed TEXT2SPARQL questions file.
        results: a parsed result-set file.
        source: the result-set file's name, for messages.

    Returns:
        The questions, each with its reference result as its one answer set.

    Raises:
        DatasetFormatError: the dataset is not a TEXT2SPARQL questions file, the file is not
            a result set, or the two do not fit (qnames missing on either side, listed).
    """
    if questions.format is not SourceFormat.TEXT2SPARQL:
        raise DatasetFormatError(
            f"gold results are for TEXT2SPARQL questions files; this dataset is "
            f"{questions.format.value}",
            source=source,
        )
    if results.format is not SourceFormat.TEXT2SPARQL_RESULTS:
        raise DatasetFormatError(
            f"expected a TEXT2SPARQL result set (qname -> {{value: relevance}}), found "
            f"{results.format.value}",
            source=source,
        )
    gold = results.by_id()
    missing = [q.id for q in questions.questions if q.id not in gold]
    known = {q.id for q in questions.questions}
    extra = [qname for qname in gold if qname not in known]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"no entry for {len(missing)} question(s): {_listed(missing)}")
        if extra:
            parts.append(f"{len(extra)} entr(y/ies) for no question: {_listed(extra)}")
        raise DatasetFormatError(
            "the result set does not fit the questions file: " + "; ".join(parts), source=source
        )
    answered: list[Question] = []
    notes: list[ParseWarning] = []
    for q in questions.questions:
        ordered = order_listed(gold[q.id])
        answered.append(replace(_ordered(q, ordered, notes), answers=gold[q.id].answers))
    return replace(questions, questions=tuple(answered), warnings=(*questions.warnings, *notes))


def _ordered(question: Question, ordered: bool | None, notes: list[ParseWarning]) -> Question:
    """Return ``question`` with its order feature set as ``order_required`` says (if it says)."""
    parts = question.text2sparql
    if ordered is None or parts is None or parts.order_matters == ordered:
        return question
    if ordered:
        features = tuple(sorted({*parts.features, ORDER_MATTERS}))
        said = "listed in the result set's order_required, so its answers are ordered"
    else:
        features = tuple(f for f in parts.features if f != ORDER_MATTERS)
        said = "not listed in the result set's order_required, so its answers are not ordered"
    notes.append(ParseWarning(f"{said} (the questions file says otherwise)", question.id))
    return replace(question, text2sparql=replace(parts, features=features))

"""Gold answers of a TEXT2SPARQL questions file from a published reference result set.

The questions file has no answers; the challenge publishes the reference results as a
result-set file (``qname -> {value: relevance}``). ``with_gold_results`` checks that the two
fit (every question has an entry, every entry is a question) and returns the questions with
those answers (lexical forms, as the file keeps them). Pure.
"""

from __future__ import annotations

from dataclasses import replace

from evaluators.errors import DatasetFormatError
from evaluators.model import Dataset, SourceFormat, question_order

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
    answered = tuple(replace(q, answers=gold[q.id].answers) for q in questions.questions)
    return replace(questions, questions=answered)

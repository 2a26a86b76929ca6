"""Parse LC-QuAD 1.0 (a JSON array of question objects) into a ``Dataset``.

Each entry has ``_id``, ``corrected_question``, ``intermediary_question``, ``sparql_query`` and
``sparql_template_id``. The corrected question is the English text (the intermediary,
template-like question is used only when no corrected one is given); the SPARQL query is kept.
LC-QuAD publishes no answers, so every question has ``answers=None``.
"""

from __future__ import annotations

from evaluators.formats.parsing.diagnostics import Diagnostics
from evaluators.formats.parsing.jsonfield import (
    check_keys,
    expect_list,
    expect_object,
    identifier,
    item,
    opt_str,
    required,
)
from evaluators.formats.parsing.question_fields import is_out_of_scope, stripped, warn_duplicate_ids
from evaluators.model import Dataset, Question, QuestionText, SourceFormat

_KEYS = frozenset(
    {"_id", "corrected_question", "intermediary_question", "sparql_query", "sparql_template_id"}
)


def parse(doc: object, diag: Diagnostics) -> Dataset:
    """Parse a decoded LC-QuAD 1.0 document.

    Args:
        doc: the decoded JSON value (an array of entries).
        diag: the file's diagnostics.

    Returns:
        The dataset, in file order.

    Raises:
        DatasetFormatError: the document is not an array of objects, or an entry lacks ``_id``.
    """
    questions = []
    for i, entry in enumerate(expect_list(doc, "$", diag)):
        where = item("$", i)
        obj = expect_object(entry, where, diag)
        check_keys(obj, _KEYS, "LC-QuAD entry", where, diag)
        qid = identifier(required(obj, "_id", where, diag), where + "._id", diag)
        corrected = stripped(opt_str(obj, "corrected_question", where, diag))
        intermediary = stripped(opt_str(obj, "intermediary_question", where, diag))
        if corrected is None and intermediary is not None:
            diag.warn(
                "questions without corrected_question use intermediary_question",
                question_id=qid,
                key=("intermediary",),
            )
        text = corrected or intermediary
        sparql = stripped(opt_str(obj, "sparql_query", where, diag))
        questions.append(
            Question(
                id=qid,
                texts=(QuestionText("en", text),) if text else (),
                sparql=sparql,
                out_of_scope=is_out_of_scope(sparql),
            )
        )
    result = tuple(questions)
    warn_duplicate_ids(result, diag)
    return Dataset(SourceFormat.LCQUAD, result, warnings=diag.warnings())

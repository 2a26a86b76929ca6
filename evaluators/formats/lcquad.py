"""Parse LC-QuAD 1.0 and LC-QuAD 2.0 (JSON arrays of question objects) into a ``Dataset``.

LC-QuAD 1.0 (DBpedia 2016-04): each entry has ``_id``, ``corrected_question``,
``intermediary_question``, ``sparql_query`` and ``sparql_template_id``. The corrected question is
the English text (the intermediary, template-like question is used only when no corrected one is
given); the SPARQL query is kept.

LC-QuAD 2.0 (Wikidata, with DBpedia 2018 versions of the queries): each entry has ``uid``,
``question`` (the verbalised question), ``paraphrased_question``, ``NNQT_question`` (the
template-generated text), ``sparql_wikidata``, ``sparql_dbpedia18``, ``subgraph``, ``template``,
``template_index`` and ``template_id``. ``question`` is the English text; where it is missing,
null, a list or a placeholder (``n/a``, ``[]``) the paraphrase is used, then the template text,
each with a warning. The Wikidata query is kept (the gold query of the Wikidata benchmark).

Neither version publishes answers, so every question has ``answers=None`` (``qabench datasets
refresh`` computes them from the queries on a knowledge base).
"""

from __future__ import annotations

from evaluators.formats.parsing.diagnostics import Diagnostics
from evaluators.formats.parsing.jsonfield import (
    check_keys,
    child,
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
_KEYS_2 = frozenset(
    {
        "uid",
        "question",
        "paraphrased_question",
        "NNQT_question",
        "sparql_wikidata",
        "sparql_dbpedia18",
        "subgraph",
        "template",
        "template_index",
        "template_id",
        "answer",
    }
)
# what LC-QuAD 2.0 writes where a question text was never collected
_PLACEHOLDERS = frozenset({"", "n/a", "na", "[]", "{}", "none", "null"})


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
        questions.append(_question(qid, text, sparql))
    return _dataset(SourceFormat.LCQUAD, questions, diag)


def _question(qid: str, text: str | None, sparql: str | None) -> Question:
    """Return an LC-QuAD question (English text, gold query, no answers)."""
    return Question(
        id=qid,
        texts=(QuestionText("en", text),) if text else (),
        sparql=sparql,
        out_of_scope=is_out_of_scope(sparql),
    )


def _dataset(kind: SourceFormat, questions: list[Question], diag: Diagnostics) -> Dataset:
    result = tuple(questions)
    warn_duplicate_ids(result, diag)
    return Dataset(kind, result, warnings=diag.warnings())


def _text_2(obj: dict[str, object], key: str) -> str | None:
    """Return a usable question text under ``key`` (``None`` for lists, nulls, placeholders)."""
    value = obj.get(key)
    if not isinstance(value, str):
        return None
    text = value.strip()
    return None if text.lower() in _PLACEHOLDERS else text


def parse_2(doc: object, diag: Diagnostics) -> Dataset:
    """Parse a decoded LC-QuAD 2.0 document.

    Args:
        doc: the decoded JSON value (an array of entries).
        diag: the file's diagnostics.

    Returns:
        The dataset, in file order.

    Raises:
        DatasetFormatError: the document is not an array of objects, an entry lacks ``uid``, or
            its Wikidata query is neither a string nor null.
    """
    questions = []
    for i, entry in enumerate(expect_list(doc, "$", diag)):
        where = item("$", i)
        obj = expect_object(entry, where, diag)
        check_keys(obj, _KEYS_2, "LC-QuAD 2.0 entry", where, diag)
        qid = identifier(required(obj, "uid", where, diag), child(where, "uid"), diag)
        text = _text_2(obj, "question")
        if text is None:
            for fallback in ("paraphrased_question", "NNQT_question"):
                text = _text_2(obj, fallback)
                if text is not None:
                    diag.warn(
                        f"questions without a usable 'question' text use {fallback!r}",
                        question_id=qid,
                        key=("lcquad2-text", fallback),
                    )
                    break
            else:
                diag.warn(
                    "questions without any usable text (left without one)",
                    question_id=qid,
                    key=("lcquad2-no-text",),
                )
        sparql = stripped(opt_str(obj, "sparql_wikidata", where, diag))
        questions.append(_question(qid, text, sparql))
    return _dataset(SourceFormat.LCQUAD2, questions, diag)

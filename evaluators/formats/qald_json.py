"""Parse QALD JSON (QALD-5 … QALD-10, DBpedia and Wikidata) into a ``Dataset``.

Accepted variations, all found in published files: string or numeric ids; ``answertype``
optional; flags as booleans or ``"true"``/``"false"``; ``question`` (or QALD-5's ``body``) as a
list of ``{language, string, keywords}``; ``query`` as ``{sparql}``, ``{pseudo}`` or a plain
string; ``answers`` as SPARQL JSON results or QALD-5's flat ``{"string": ...}`` lists. A missing
``answers`` key means the file has no answers (``Question.answers is None``). Unknown fields
are ignored with one warning per distinct field.
"""

from __future__ import annotations

import json

from evaluators.formats.parsing.diagnostics import Diagnostics
from evaluators.formats.parsing.jsonfield import (
    check_keys,
    child,
    expect_list,
    expect_object,
    identifier,
    item,
    json_flag,
    keywords,
    opt_str,
    required,
)
from evaluators.formats.parsing.question_fields import (
    TextCollector,
    answer_type,
    is_out_of_scope,
    stripped,
    warn_duplicate_ids,
)
from evaluators.formats.parsing.sparql_results import answer_sets
from evaluators.model import Dataset, Question, QuestionText, SourceFormat

_TOP_KEYS = frozenset({"dataset", "questions"})
_DATASET_KEYS = frozenset({"id", "metadata"})
_QUESTION_KEYS = frozenset(
    {"id", "answertype", "aggregation", "onlydbo", "hybrid", "question", "body", "query", "answers"}
)
_TEXT_KEYS = frozenset({"language", "string", "keywords"})
_QUERY_KEYS = frozenset({"sparql", "pseudo", "schemaless"})


def parse(doc: object, diag: Diagnostics) -> Dataset:
    """Parse a decoded QALD JSON document.

    Args:
        doc: the decoded JSON value.
        diag: the file's diagnostics (warnings end up in the dataset).

    Returns:
        The dataset.

    Raises:
        DatasetFormatError: the document or a question has the wrong shape.
    """
    top = expect_object(doc, "$", diag)
    check_keys(top, _TOP_KEYS, "document", "$", diag)
    source_id, metadata = dataset_header(top, diag)
    path = child("$", "questions")
    entries = expect_list(required(top, "questions", "$", diag), path, diag)
    questions = tuple(parse_question(entry, item(path, i), diag) for i, entry in enumerate(entries))
    warn_duplicate_ids(questions, diag)
    return Dataset(SourceFormat.QALD_JSON, questions, source_id, metadata, diag.warnings())


def dataset_header(top: dict[str, object], diag: Diagnostics) -> tuple[str | None, str | None]:
    """Return the ``dataset.id`` and ``dataset.metadata`` of a QALD/eQALD document.

    Raises:
        DatasetFormatError: ``dataset`` is not an object or its id is not a string or number.
    """
    header = top.get("dataset")
    if header is None:
        return None, None
    path = child("$", "dataset")
    obj = expect_object(header, path, diag)
    check_keys(obj, _DATASET_KEYS, "dataset", path, diag)
    raw_id = obj.get("id")
    source_id = None
    if raw_id is not None and raw_id != "":
        source_id = identifier(raw_id, child(path, "id"), diag)
    metadata = obj.get("metadata")
    if metadata is not None and not isinstance(metadata, str):
        metadata = json.dumps(metadata, ensure_ascii=False, sort_keys=True)
    return source_id, metadata


def parse_question(
    value: object, path: str, diag: Diagnostics, *, require_id: bool = True
) -> Question:
    """Parse one QALD JSON question object.

    Args:
        value: the question's JSON value.
        path: its JSON path.
        diag: the file's diagnostics.
        require_id: whether a missing id is an error (system responses may omit it).

    Returns:
        The question.

    Raises:
        DatasetFormatError: a field has the wrong type, or the id is missing.
    """
    obj = expect_object(value, path, diag)
    check_keys(obj, _QUESTION_KEYS, "question", path, diag)
    if require_id or "id" in obj:
        qid = identifier(required(obj, "id", path, diag), child(path, "id"), diag)
    else:
        qid = ""
    label = opt_str(obj, "answertype", path, diag)
    kind = answer_type(label, diag, qid)
    sparql, pseudo, schemaless = _query(obj.get("query"), child(path, "query"), diag)
    answers = None
    if obj.get("answers") is not None:
        answers = answer_sets(
            obj["answers"], child(path, "answers"), diag, qid, kind.value if kind else None
        )
    texts_key = "question" if "question" in obj else "body"
    return Question(
        id=qid,
        texts=_texts(obj.get(texts_key), child(path, texts_key), diag, qid),
        answer_type=kind,
        answer_type_label=label,
        aggregation=json_flag(obj, "aggregation", path, diag, qid),
        only_dbo=json_flag(obj, "onlydbo", path, diag, qid),
        hybrid=json_flag(obj, "hybrid", path, diag, qid),
        sparql=sparql,
        pseudo_query=pseudo,
        schemaless_query=schemaless,
        answers=answers,
        out_of_scope=is_out_of_scope(sparql, pseudo),
    )


def _texts(
    value: object, path: str, diag: Diagnostics, question_id: str
) -> tuple[QuestionText, ...]:
    collector = TextCollector(diag, question_id)
    if isinstance(value, str):
        collector.add_text("en", value)
    elif value is not None:
        for i, entry in enumerate(expect_list(value, path, diag)):
            where = item(path, i)
            obj = expect_object(entry, where, diag)
            check_keys(obj, _TEXT_KEYS, "question text", where, diag)
            language = (opt_str(obj, "language", where, diag) or "").strip() or "en"
            text = opt_str(obj, "string", where, diag)
            if text is not None:
                collector.add_text(language, text)
            collector.add_keywords(
                language, keywords(obj.get("keywords"), child(where, "keywords"), diag)
            )
    return collector.build()


def _query(
    value: object, path: str, diag: Diagnostics
) -> tuple[str | None, str | None, str | None]:
    if value is None:
        return None, None, None
    if isinstance(value, str):
        return stripped(value), None, None
    obj = expect_object(value, path, diag)
    check_keys(obj, _QUERY_KEYS, "query", path, diag)
    return (
        stripped(opt_str(obj, "sparql", path, diag)),
        stripped(opt_str(obj, "pseudo", path, diag)),
        stripped(opt_str(obj, "schemaless", path, diag)),
    )

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
    opt_str,
    required,
    str_tuple,
)
from evaluators.formats.parsing.question_fields import (
    TextCollector,
    answer_type,
    flag,
    is_out_of_scope,
    split_keywords,
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
FLAGS = ("aggregation", "onlydbo", "hybrid")


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


def json_flag(
    obj: dict[str, object], key: str, path: str, diag: Diagnostics, question_id: str
) -> bool | None:
    """Read a flag written as a JSON boolean or as ``"true"``/``"false"``.

    Raises:
        DatasetFormatError: the value is neither a boolean, a string nor null.
    """
    value = obj.get(key)
    if value is None or isinstance(value, bool):
        return value
    return flag(opt_str(obj, key, path, diag) or "", key, diag, question_id)


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


def keywords(value: object, path: str, diag: Diagnostics) -> tuple[str, ...]:
    """Read keywords written as one comma-separated string or as a list of strings.

    Raises:
        DatasetFormatError: the value is neither a string, a list of strings nor null.
    """
    if value is None:
        return ()
    if isinstance(value, str):
        return split_keywords(value)
    return tuple(k.strip() for k in str_tuple(value, path, diag) if k.strip())


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


def stripped(text: str | None) -> str | None:
    """Return ``text`` without surrounding blanks, or ``None`` when nothing is left."""
    if text is None:
        return None
    return text.strip() or None


def warn_duplicate_ids(questions: tuple[Question, ...], diag: Diagnostics) -> None:
    """Warn about question ids that occur more than once (``Dataset.by_id`` keeps the first)."""
    seen: set[str] = set()
    for q in questions:
        if q.id in seen:
            diag.warn(
                f"duplicate question id {q.id!r}; lookups by id use the first",
                question_id=q.id,
                key=("duplicate-id", q.id),
            )
        seen.add(q.id)

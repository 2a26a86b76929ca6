"""Parse extended QALD JSON (eQALD, NLIWOD's ``ExtendedJson``) into a ``Dataset``.

Each entry of ``questions`` wraps a ``question`` object holding ``id``, ``answertype``,
``answeritemtype``, ``confidence``, ``metadata`` (``aggregation``, ``onlydbo``, ``hybrid``),
``language`` (one entry per language with ``question``, ``keywords``, ``SPARQL``, ``pseudo``,
``schemaless`` and ``annotations``) and ``answers`` (a SPARQL JSON result, or a JSON string
holding one). Unlike GERBIL, which keeps only the last language entry, every language is kept;
the English entry's queries (else the last entry that has one) become the question's queries.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.formats.eqald_annotation import read_annotations
from evaluators.formats.parsing.diagnostics import Diagnostics
from evaluators.formats.parsing.jsonfield import (
    check_keys,
    child,
    describe,
    expect_list,
    expect_object,
    identifier,
    item,
    json_flag,
    keywords,
    opt_str,
    required,
    str_tuple,
)
from evaluators.formats.parsing.question_fields import (
    FLAGS,
    TextCollector,
    answer_type,
    is_out_of_scope,
    stripped,
    warn_duplicate_ids,
)
from evaluators.formats.parsing.sparql_results import answer_sets
from evaluators.formats.qald_json import dataset_header
from evaluators.model import Annotation, Dataset, Question, SourceFormat

_TOP_KEYS = frozenset({"dataset", "questions"})
_ENTRY_KEYS = frozenset({"question"})
_QUESTION_KEYS = frozenset(
    {"id", "answertype", "answeritemtype", "confidence", "metadata", "language", "answers", *FLAGS}
)
_LANGUAGE_KEYS = frozenset(
    {"language", "question", "keywords", "SPARQL", "pseudo", "schemaless", "annotations"}
)
_QUERY_FIELDS = ("SPARQL", "pseudo", "schemaless")


def parse(doc: object, diag: Diagnostics) -> Dataset:
    """Parse a decoded eQALD document.

    Args:
        doc: the decoded JSON value.
        diag: the file's diagnostics.

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
    questions = tuple(parse_entry(e, item(path, i), diag) for i, e in enumerate(entries))
    warn_duplicate_ids(questions, diag)
    return Dataset(SourceFormat.EQALD, questions, source_id, metadata, diag.warnings())


def parse_entry(
    value: object, path: str, diag: Diagnostics, *, require_id: bool = True
) -> Question:
    """Parse one entry of ``questions`` (an object wrapping ``question``).

    Args:
        value: the entry's JSON value.
        path: its JSON path.
        diag: the file's diagnostics.
        require_id: whether a missing id is an error (system responses may omit it).

    Returns:
        The question.

    Raises:
        DatasetFormatError: a field has the wrong type, or the id is missing.
    """
    entry = expect_object(value, path, diag)
    check_keys(entry, _ENTRY_KEYS, "question entry", path, diag)
    path = child(path, "question")
    obj = expect_object(required(entry, "question", path, diag), path, diag)
    check_keys(obj, _QUESTION_KEYS, "question", path, diag)
    if require_id or "id" in obj:
        qid = identifier(required(obj, "id", path, diag), child(path, "id"), diag)
    else:
        qid = ""
    label = opt_str(obj, "answertype", path, diag)
    kind = answer_type(label, diag, qid)
    languages = _languages(obj.get("language"), child(path, "language"), diag, qid)
    flags = _flags(obj, path, diag, qid)
    answers = None
    if obj.get("answers") is not None:
        answers = answer_sets(
            obj["answers"], child(path, "answers"), diag, qid, kind.value if kind else None
        )
    item_types = obj.get("answeritemtype")
    sparql, pseudo, schemaless = (languages.query(name) for name in _QUERY_FIELDS)
    return Question(
        id=qid,
        texts=languages.texts.build(),
        answer_type=kind,
        answer_type_label=label,
        aggregation=flags[0],
        only_dbo=flags[1],
        hybrid=flags[2],
        sparql=sparql,
        pseudo_query=pseudo,
        schemaless_query=schemaless,
        answers=answers,
        answer_item_types=()
        if item_types is None
        else str_tuple(item_types, child(path, "answeritemtype"), diag),
        annotations=tuple(languages.annotations),
        confidence=_confidence(obj.get("confidence"), child(path, "confidence"), diag, qid),
        out_of_scope=is_out_of_scope(sparql, pseudo),
    )


@dataclass(slots=True)
class _Languages:
    texts: TextCollector
    queries: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)

    def query(self, name: str) -> str | None:
        """Return the English entry's query ``name``, else the last entry's that has one."""
        english = [q[name] for lang, q in self.queries if lang == "en" and name in q]
        if english:
            return english[0]
        others = [q[name] for _, q in self.queries if name in q]
        return others[-1] if others else None


def _languages(value: object, path: str, diag: Diagnostics, qid: str) -> _Languages:
    result = _Languages(TextCollector(diag, qid))
    if value is None:
        return result
    for i, entry in enumerate(expect_list(value, path, diag)):
        where = item(path, i)
        obj = expect_object(entry, where, diag)
        check_keys(obj, _LANGUAGE_KEYS, "language entry", where, diag)
        lang = (opt_str(obj, "language", where, diag) or "").strip() or "en"
        text = opt_str(obj, "question", where, diag)
        if text is not None:
            result.texts.add_text(lang, text)
        result.texts.add_keywords(
            lang, keywords(obj.get("keywords"), child(where, "keywords"), diag)
        )
        queries = {}
        for name in _QUERY_FIELDS:
            query = stripped(opt_str(obj, name, where, diag))
            if query is not None:
                queries[name] = query
        result.queries.append((lang, queries))
        if obj.get("annotations") is not None:
            result.annotations.extend(
                read_annotations(
                    obj["annotations"], child(where, "annotations"), lang, text or "", diag, qid
                )
            )
    return result


def _flags(
    obj: dict[str, object], path: str, diag: Diagnostics, qid: str
) -> tuple[bool | None, ...]:
    metadata = obj.get("metadata")
    meta_path = child(path, "metadata")
    meta = {} if metadata is None else expect_object(metadata, meta_path, diag)
    check_keys(meta, frozenset(FLAGS), "metadata", meta_path, diag)
    values = []
    for name in FLAGS:
        found = json_flag(meta, name, meta_path, diag, qid)
        if found is None:
            found = json_flag(obj, name, path, diag, qid)
        values.append(found)
    return tuple(values)


def _confidence(value: object, path: str, diag: Diagnostics, qid: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    diag.warn(
        f"confidence should be a number, found {describe(value)} at {path}; ignored",
        question_id=qid,
        key=("confidence",),
    )
    return None

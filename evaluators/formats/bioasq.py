"""Parse BioASQ task-b JSON (gold files and system responses, phases A and B) into a ``Dataset``.

Each question may carry ``id``, ``body``, ``type`` (yesno, factoid, list, summary),
``documents``, ``snippets``, ``concepts``, ``triples`` (ignored with a warning),
``exact_answer`` and ``ideal_answer``. The body is the English question text. Factoid and list
answers become tuples of synonym tuples: a list of lists is kept as is; a flat list (BioASQ 1-2
files and factoid responses) gives one single-name entity per string. Values are kept as
written: lower-casing, section cutting and de-duplication belong to the scoring code.
"""

from __future__ import annotations

from evaluators.formats.parsing.diagnostics import Diagnostics
from evaluators.formats.parsing.jsonfield import (
    check_keys,
    child,
    describe,
    expect_list,
    expect_object,
    expect_str,
    identifier,
    item,
    opt_str,
    required,
    str_tuple,
)
from evaluators.formats.parsing.question_fields import TextCollector, warn_duplicate_ids
from evaluators.model import BioasqGold, Dataset, Question, Snippet, SourceFormat

_TOP_KEYS = frozenset({"questions"})
_QUESTION_KEYS = frozenset(
    {
        "id",
        "body",
        "type",
        "documents",
        "snippets",
        "concepts",
        "triples",
        "exact_answer",
        "ideal_answer",
    }
)
_SNIPPET_KEYS = frozenset(
    {"document", "text", "beginSection", "endSection", "offsetInBeginSection", "offsetInEndSection"}
)
QUESTION_TYPES = frozenset({"yesno", "factoid", "list", "summary"})


def parse(doc: object, diag: Diagnostics) -> Dataset:
    """Parse a decoded BioASQ task-b document.

    Args:
        doc: the decoded JSON value.
        diag: the file's diagnostics.

    Returns:
        The dataset; each question's BioASQ parts are in ``Question.bioasq``.

    Raises:
        DatasetFormatError: the document or a question has the wrong shape.
    """
    top = expect_object(doc, "$", diag)
    check_keys(top, _TOP_KEYS, "document", "$", diag)
    path = child("$", "questions")
    entries = expect_list(required(top, "questions", "$", diag), path, diag)
    questions = tuple(_question(e, item(path, i), diag) for i, e in enumerate(entries))
    warn_duplicate_ids(questions, diag)
    return Dataset(SourceFormat.BIOASQ, questions, warnings=diag.warnings())


def parse_entry(
    value: object, path: str, diag: Diagnostics, *, require_id: bool = True
) -> Question:
    """Parse one question of a BioASQ document (a web service's reply holds one).

    Args:
        value: the decoded question object.
        path: its JSON path, for messages.
        diag: the diagnostics of the document.
        require_id: refuse a question without ``id`` (a reply's id may be missing: ``""``).

    Returns:
        The question with its BioASQ parts.

    Raises:
        DatasetFormatError: the question has the wrong shape.
    """
    return _question(value, path, diag, require_id=require_id)


def _question(value: object, path: str, diag: Diagnostics, *, require_id: bool = True) -> Question:
    obj = expect_object(value, path, diag)
    check_keys(obj, _QUESTION_KEYS, "question", path, diag)
    qid = (
        identifier(required(obj, "id", path, diag), child(path, "id"), diag)
        if require_id or "id" in obj
        else ""
    )
    texts = TextCollector(diag, qid)
    body = opt_str(obj, "body", path, diag)
    if body is not None:
        texts.add_text("en", body)
    kind = (opt_str(obj, "type", path, diag) or "").strip()
    if kind and kind not in QUESTION_TYPES:
        diag.warn(
            f"unknown BioASQ question type {kind!r}; expected one of "
            f"{', '.join(sorted(QUESTION_TYPES))}",
            question_id=qid,
            key=("type", kind),
        )
    if obj.get("triples"):
        diag.warn(
            "ignored the triples of BioASQ questions (not scored by qabench)",
            question_id=qid,
            key=("triples",),
        )
    yesno, entities = _exact(obj.get("exact_answer"), child(path, "exact_answer"), kind, diag, qid)
    gold = BioasqGold(
        question_type=kind,
        documents=_strings(obj, "documents", path, diag),
        snippets=_snippets(obj.get("snippets"), child(path, "snippets"), diag),
        concepts=_strings(obj, "concepts", path, diag),
        yesno=yesno,
        entities=entities,
        ideal_answers=_strings(obj, "ideal_answer", path, diag),
    )
    return Question(id=qid, texts=texts.build(), bioasq=gold)


def _strings(obj: dict[str, object], key: str, path: str, diag: Diagnostics) -> tuple[str, ...]:
    value = obj.get(key)
    return () if value is None else str_tuple(value, child(path, key), diag)


def _snippets(value: object, path: str, diag: Diagnostics) -> tuple[Snippet, ...]:
    if value is None:
        return ()
    result = []
    for i, entry in enumerate(expect_list(value, path, diag)):
        where = item(path, i)
        obj = expect_object(entry, where, diag)
        check_keys(obj, _SNIPPET_KEYS, "snippet", where, diag)
        result.append(
            Snippet(
                document=expect_str(
                    required(obj, "document", where, diag), child(where, "document"), diag
                ),
                text=opt_str(obj, "text", where, diag) or "",
                begin_section=opt_str(obj, "beginSection", where, diag) or "",
                end_section=opt_str(obj, "endSection", where, diag) or "",
                offset_begin=_offset(obj, "offsetInBeginSection", where, diag),
                offset_end=_offset(obj, "offsetInEndSection", where, diag),
            )
        )
    return tuple(result)


def _offset(obj: dict[str, object], key: str, path: str, diag: Diagnostics) -> int:
    value = required(obj, key, path, diag)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        diag.warn(
            f"snippet offsets written as strings (first at {child(path, key)})",
            key=("string-offset",),
        )
        return int(value)
    raise diag.error(
        f"expected a character offset (integer), found {describe(value)}", path=child(path, key)
    )


def _exact(
    value: object, path: str, kind: str, diag: Diagnostics, qid: str
) -> tuple[str | None, tuple[tuple[str, ...], ...]]:
    """Return (yes/no answer, entities) from ``exact_answer``."""
    if value is None:
        return None, ()
    if kind == "summary":
        diag.warn(
            "ignored exact_answer of summary questions", question_id=qid, key=("summary-exact",)
        )
        return None, ()
    if isinstance(value, str):
        return (value, ()) if kind in ("yesno", "") else (None, ((value,),))
    entries = expect_list(value, path, diag)
    if kind == "yesno":
        if len(entries) == 1 and isinstance(entries[0], str):
            diag.warn(
                "yes/no answer written as a one-item list; read its item",
                question_id=qid,
                key=("yesno-list",),
            )
            return entries[0], ()
        raise diag.error(f'expected "yes" or "no", found {describe(value)}', path=path)
    entities = []
    for i, entry in enumerate(entries):
        names = str_tuple(entry, item(path, i), diag)
        if names:
            entities.append(names)
    return None, tuple(entities)

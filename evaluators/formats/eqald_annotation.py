"""Read the ``annotations`` of an eQALD language entry into ``Annotation`` spans.

An annotation is an object with character offsets into the question string (``begin`` or
``start``, ``end`` exclusive), the covered ``text``, the linked ``resource`` (or ``uri``) and
a ``type``. Missing parts are derived when possible (``text`` from the offsets, ``end`` from
``begin`` and ``text``). NLIWOD writes annotations as bare strings; such a string is placed at
its first occurrence in the question. Spans outside the question are reported and skipped.
"""

from __future__ import annotations

from evaluators.formats.parsing.diagnostics import Diagnostics, quote
from evaluators.formats.parsing.jsonfield import (
    check_keys,
    child,
    describe,
    expect_list,
    expect_object,
    item,
    opt_str,
)
from evaluators.model import Annotation

_KEYS = frozenset({"begin", "start", "end", "text", "resource", "uri", "type"})


def read_annotations(
    value: object, path: str, language: str, question: str, diag: Diagnostics, qid: str
) -> list[Annotation]:
    """Read an ``annotations`` list of one language entry.

    Args:
        value: the field's value.
        path: its JSON path.
        language: the entry's language.
        question: the entry's question string (offsets point into it).
        diag: the file's diagnostics.
        qid: the question id, for warnings.

    Returns:
        The annotations that fit the question string, in file order.

    Raises:
        DatasetFormatError: the field is not a list, or an entry has wrong field types.
    """
    result = []
    for i, entry in enumerate(expect_list(value, path, diag)):
        where = item(path, i)
        if isinstance(entry, str):
            found = _placed(entry, language, question, where, diag, qid)
        else:
            found = _span(expect_object(entry, where, diag), where, language, question, diag, qid)
        if found is not None:
            result.append(found)
    return result


def _placed(
    text: str, language: str, question: str, where: str, diag: Diagnostics, qid: str
) -> Annotation | None:
    begin = question.find(text) if text else -1
    if begin < 0:
        diag.warn(
            f"annotation {quote(text)} at {where} does not occur in the question; skipped",
            question_id=qid,
            key=("annotation-missing", qid),
        )
        return None
    return Annotation(language, begin, begin + len(text), text)


def _offset(
    obj: dict[str, object], keys: tuple[str, ...], where: str, diag: Diagnostics
) -> int | None:
    for key in keys:
        value = obj.get(key)
        if value is None:
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise diag.error(
            f"expected a character offset (integer), found {describe(value)}",
            path=child(where, key),
        )
    return None


def _span(
    obj: dict[str, object], where: str, language: str, question: str, diag: Diagnostics, qid: str
) -> Annotation | None:
    check_keys(obj, _KEYS, "annotation", where, diag)
    begin = _offset(obj, ("begin", "start"), where, diag)
    end = _offset(obj, ("end",), where, diag)
    text = opt_str(obj, "text", where, diag)
    resource = opt_str(obj, "resource", where, diag) or opt_str(obj, "uri", where, diag)
    kind = opt_str(obj, "type", where, diag)
    if begin is None and text:
        found = _placed(text, language, question, where, diag, qid)
        begin = found.begin if found else None
    if begin is not None and end is None and text is not None:
        end = begin + len(text)
    if begin is None or end is None or not 0 <= begin <= end <= len(question):
        diag.warn(
            f"annotation at {where} has no span inside the question "
            f"(begin={begin}, end={end}, length {len(question)}); skipped",
            question_id=qid,
            key=("annotation-span", qid),
        )
        return None
    covered = question[begin:end]
    if text is not None and text != covered:
        diag.warn(
            f"annotation text {quote(text)} at {where} differs from the span "
            f"{quote(covered)}; kept the file's text",
            question_id=qid,
            key=("annotation-text", qid),
        )
    return Annotation(language, begin, end, covered if text is None else text, resource, kind)

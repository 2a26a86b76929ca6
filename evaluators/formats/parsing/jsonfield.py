"""Typed access to decoded JSON values, failing with the JSON path of a wrong value.

The JSON parsers read every field through these functions, so a wrong type anywhere becomes a
``DatasetFormatError`` such as ``at $.questions[3].id: expected a string or an integer, found
null``. Paths use ``$`` for the document root, ``.name`` for keys and ``[i]`` for list items.
"""

from __future__ import annotations

import re

from evaluators.formats.parsing.diagnostics import Diagnostics, quote
from evaluators.formats.parsing.question_fields import flag, split_keywords

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_:-]*\Z")


def child(path: str, key: str) -> str:
    """Return the path of ``key`` inside the object at ``path``.

    >>> child("$", "questions")
    '$.questions'
    >>> child("$.a", "odd key")
    "$.a['odd key']"
    """
    if key.isidentifier() or _PLAIN_KEY.match(key):
        return f"{path}.{key}"
    return f"{path}[{key!r}]"


def item(path: str, index: int) -> str:
    """Return the path of list item ``index`` inside the list at ``path``.

    >>> item("$.questions", 3)
    '$.questions[3]'
    """
    return f"{path}[{index}]"


def describe(value: object) -> str:
    """Describe a JSON value for an error message.

    >>> describe(None)
    'null'
    >>> describe([1, 2])
    'a list of 2 items'
    >>> describe("x")
    "the string 'x'"
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {quote(value)}"
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if isinstance(value, dict):
        keys = ", ".join(list(value)[:6])
        return f"an object with keys ({keys})" if keys else "an empty object"
    return type(value).__name__


def expect_object(value: object, path: str, diag: Diagnostics) -> dict[str, object]:
    """Return ``value`` as an object.

    Raises:
        DatasetFormatError: ``value`` is not a JSON object.
    """
    if not isinstance(value, dict):
        raise diag.error(f"expected an object, found {describe(value)}", path=path)
    return value


def expect_list(value: object, path: str, diag: Diagnostics) -> list[object]:
    """Return ``value`` as a list.

    Raises:
        DatasetFormatError: ``value`` is not a JSON array.
    """
    if not isinstance(value, list):
        raise diag.error(f"expected a list, found {describe(value)}", path=path)
    return value


def expect_str(value: object, path: str, diag: Diagnostics) -> str:
    """Return ``value`` as a string.

    Raises:
        DatasetFormatError: ``value`` is not a JSON string.
    """
    if not isinstance(value, str):
        raise diag.error(f"expected a string, found {describe(value)}", path=path)
    return value


def opt_str(obj: dict[str, object], key: str, path: str, diag: Diagnostics) -> str | None:
    """Return the string under ``key``, or ``None`` when it is missing or null.

    Raises:
        DatasetFormatError: the value is neither a string nor null.
    """
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise diag.error(f"expected a string, found {describe(value)}", path=child(path, key))


def identifier(value: object, path: str, diag: Diagnostics) -> str:
    """Return a question id, which files write as a string or an integer.

    Raises:
        DatasetFormatError: the id is missing, blank or of another type.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    raise diag.error(
        f"expected a question id (string or integer), found {describe(value)}", path=path
    )


def required(obj: dict[str, object], key: str, path: str, diag: Diagnostics) -> object:
    """Return the value under ``key``.

    Raises:
        DatasetFormatError: the key is missing.
    """
    if key not in obj:
        raise diag.error(f"missing required field {quote(key)}", path=path)
    return obj[key]


def str_tuple(value: object, path: str, diag: Diagnostics) -> tuple[str, ...]:
    """Return a list of strings (or a single string) as a tuple.

    Raises:
        DatasetFormatError: the value is not a string or a list of strings.
    """
    if isinstance(value, str):
        return (value,)
    items = expect_list(value, path, diag)
    return tuple(expect_str(v, item(path, i), diag) for i, v in enumerate(items))


def check_keys(
    obj: dict[str, object], known: frozenset[str], where: str, path: str, diag: Diagnostics
) -> None:
    """Record a warning for every key of ``obj`` that is not in ``known``.

    Args:
        obj: the object to check.
        known: the keys the format defines.
        where: the kind of object, e.g. ``"question"``, for the message.
        path: the object's JSON path.
        diag: the file's diagnostics.
    """
    if known.issuperset(obj):
        return
    for key in obj:
        if key not in known:
            diag.unknown_field(key, where, child(path, key))


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

"""Turn a file's bytes into text and JSON values, with size limits and error positions.

Everything a parser reads passes through here: the size check (before the content is read),
byte-order marks, strict UTF-8 decoding, and JSON decoding. Each failure becomes a
``DatasetFormatError`` naming the file, the line and column, and what was expected. Nothing here
knows any benchmark format, and nothing writes or logs.
"""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path

from evaluators.errors import DatasetFormatError, DatasetTooLargeError
from evaluators.formats.parsing.diagnostics import Diagnostics, quote

# Byte-order marks, longest first: the UTF-32 LE mark starts with the UTF-16 LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# A JSON escape that may leave a lone surrogate behind (json.loads accepts those).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_JSON_WHITESPACE = " \t\r\n"


def read_file(path: Path, max_bytes: int) -> bytes:
    """Read a whole file after checking its size against ``max_bytes``.

    Args:
        path: the file to read.
        max_bytes: the largest accepted size in bytes.

    Returns:
        The file's bytes.

    Raises:
        DatasetTooLargeError: the file is larger than ``max_bytes`` (checked before reading).
        DatasetFormatError: the file cannot be opened or read.
    """
    source = str(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise _too_large(source, size, max_bytes)
        with path.open("rb") as handle:
            # Read one byte more than allowed, in case the file grew after stat().
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise DatasetFormatError(
            f"cannot read the file ({exc.strerror or exc}); expected a readable benchmark file",
            source=source,
        ) from exc
    if len(data) > max_bytes:
        raise _too_large(source, len(data), max_bytes)
    return data


def _too_large(source: str, size: int, max_bytes: int) -> DatasetTooLargeError:
    return DatasetTooLargeError(
        f"the file has {size} bytes, more than the limit of {max_bytes} bytes; "
        "raise datasets.max_file_bytes if the file is genuine",
        source=source,
    )


def split_bom(data: bytes) -> tuple[str | None, bytes]:
    """Return the encoding named by a byte-order mark (or ``None``) and the bytes after it.

    Args:
        data: the raw bytes.

    Returns:
        The codec name and the remaining bytes.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding, data[len(bom) :]
    return None, data


def decode_text(data: bytes, source: str, *, encoding: str | None = None) -> str:
    """Decode bytes as UTF-8 (or as the byte-order mark says), strictly.

    Args:
        data: the raw bytes.
        source: the file name used in messages.
        encoding: an encoding declared by the document itself (XML), used when no mark is there.

    Returns:
        The text, without a byte-order mark.

    Raises:
        DatasetFormatError: the bytes are not valid in the encoding, with their position.
    """
    bom_encoding, body = split_bom(data)
    codec = bom_encoding or encoding or "utf-8"
    try:
        return body.decode(codec)
    except UnicodeDecodeError as exc:
        raise _decode_error(body, exc, codec, source) from exc


def _decode_error(
    body: bytes, exc: UnicodeDecodeError, codec: str, source: str
) -> DatasetFormatError:
    line = body.count(b"\n", 0, exc.start) + 1
    line_start = body.rfind(b"\n", 0, exc.start) + 1
    column = len(body[line_start : exc.start].decode(codec, errors="replace")) + 1
    bad = body[exc.start : exc.start + 4].hex(" ")
    hint = "expected UTF-8 text (or UTF-16 with a byte order mark); re-save the file as UTF-8"
    if b"\x00" in body[:64]:
        hint = "the file looks like UTF-16 or UTF-32 without a byte order mark; re-save as UTF-8"
    return DatasetFormatError(
        f"invalid {codec} byte(s) {bad} ({exc.reason}); {hint}",
        source=source,
        line=line,
        column=column,
    )


def load_json(text: str, diag: Diagnostics) -> object:
    """Decode JSON text, reporting the position of the first syntax error.

    Raw control characters inside strings (a common hand-editing slip) are accepted with a
    warning; everything else must be strict JSON.

    Args:
        text: the decoded document.
        diag: where warnings go; its source names the file in errors.

    Returns:
        The decoded value (dicts, lists, strings, numbers, booleans, ``None``).

    Raises:
        DatasetFormatError: the text is empty or not JSON, nests too deeply, or holds lone
            surrogates.
    """
    if not text.strip(_JSON_WHITESPACE):
        raise diag.error("the content is empty; expected a JSON or XML benchmark document")
    try:
        value = _decode_json(text, diag, what="a JSON document")
    except json.JSONDecodeError as exc:
        if not exc.msg.startswith("Invalid control character"):
            raise _json_error(exc, diag, "") from exc
        try:
            value = _decode_json(text, diag, what="a JSON document", strict=False)
        except json.JSONDecodeError as lenient_exc:
            raise _json_error(lenient_exc, diag, "") from lenient_exc
        diag.warn(
            "accepted raw control characters inside JSON strings "
            f"(first at line {exc.lineno}, column {exc.colno}); strict JSON escapes them"
        )
    if _SURROGATE_ESCAPE.search(text):
        check_surrogates(value, "$", diag)
    return value


def load_embedded_json(text: str, path: str, diag: Diagnostics) -> object:
    """Decode JSON that a document carries inside a string field (eQALD ``answers``).

    Args:
        text: the string's content.
        path: the JSON path of the string, for messages.
        diag: the file's diagnostics.

    Returns:
        The decoded value.

    Raises:
        DatasetFormatError: the string is not JSON; the message gives the position in it.
    """
    try:
        value = _decode_json(text, diag, what=f"the JSON inside {path}")
    except json.JSONDecodeError as exc:
        raise _json_error(exc, diag, path) from exc
    check_surrogates(value, path, diag)
    return value


def _decode_json(text: str, diag: Diagnostics, *, what: str, strict: bool = True) -> object:
    try:
        return json.loads(text, strict=strict)  # typed Any by the stdlib: a JSON value
    except json.JSONDecodeError:
        raise
    except RecursionError as exc:
        raise diag.error(f"{what} nests too deeply; expected a benchmark file") from exc
    except ValueError as exc:
        # e.g. an integer with more digits than Python converts
        raise diag.error(f"{what} cannot be decoded ({exc}); expected plain JSON") from exc


def _json_error(exc: json.JSONDecodeError, diag: Diagnostics, path: str) -> DatasetFormatError:
    found = exc.doc[exc.pos : exc.pos + 20]
    near = f" near {quote(found, 20)}" if found else " at the end of the input (truncated?)"
    if path:
        return diag.error(
            f"the string does not hold valid JSON: {exc.msg} at line {exc.lineno}, "
            f"column {exc.colno} of the string{near}",
            path=path,
        )
    return diag.error(
        f"invalid JSON: {exc.msg}{near}; expected a well-formed JSON document",
        line=exc.lineno,
        column=exc.colno,
    )


def check_surrogates(value: object, path: str, diag: Diagnostics) -> None:
    """Reject strings holding lone UTF-16 surrogates (escaped as ``\\udXXX`` in the JSON).

    Args:
        value: a decoded JSON value.
        path: its JSON path.
        diag: the file's diagnostics.

    Raises:
        DatasetFormatError: a key or string contains a lone surrogate.
    """
    stack: list[tuple[object, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            _check_string(item, where, diag)
        elif isinstance(item, dict):
            for key, child in item.items():
                _check_string(key, where, diag)
                stack.append((child, f"{where}.{key}"))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{i}]") for i, child in enumerate(item))


def _check_string(text: str, where: str, diag: Diagnostics) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise diag.error(
            "the string contains a lone UTF-16 surrogate escape; expected valid Unicode text",
            path=where,
        ) from exc


def first_significant_char(text: str) -> str:
    """Return the first character that is not JSON/XML whitespace (``""`` if none).

    Args:
        text: decoded document text.

    Returns:
        One character or the empty string.
    """
    stripped = text.lstrip(_JSON_WHITESPACE)
    return stripped[:1]

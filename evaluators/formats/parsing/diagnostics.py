"""Collect the warnings of one parse and build its errors, both naming the file.

A parser creates one ``Diagnostics`` per file. Repeated warnings (the same unknown field in
every question, say) are folded into one ``ParseWarning`` that counts its occurrences. This
module does no I/O and no logging: the warnings end up in ``Dataset.warnings``.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluators.errors import DatasetFormatError
from evaluators.model import ParseWarning

# Values quoted in messages are cut to this many characters.
QUOTE_LIMIT = 60


def quote(value: str, limit: int = QUOTE_LIMIT) -> str:
    """Return ``value`` as a quoted string, shortened to ``limit`` characters.

    Args:
        value: the text to quote.
        limit: the maximum number of characters kept.

    Returns:
        The text in single quotes, with an ellipsis when it was cut.

    >>> quote("abc")
    "'abc'"
    >>> quote("abcdef", limit=3)
    "'abc…'"
    """
    if len(value) > limit:
        value = value[:limit] + "…"
    return repr(value)


@dataclass(slots=True)
class _Entry:
    message: str
    question_id: str | None
    count: int = 1


class Diagnostics:
    """The warnings collected while parsing one file, and a factory for its errors."""

    __slots__ = ("_entries", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self._entries: dict[object, _Entry] = {}

    def warn(self, message: str, *, question_id: str | None = None, key: object = None) -> None:
        """Record a warning; warnings sharing a ``key`` are counted, not repeated.

        Args:
            message: what was ignored or repaired (the first occurrence's wording is kept).
            question_id: the question concerned, if any.
            key: a hashable identity for folding repeats; ``None`` keeps every warning.
        """
        if key is None:
            key = (len(self._entries), message)
        entry = self._entries.get(key)
        if entry is None:
            self._entries[key] = _Entry(message, question_id)
        else:
            entry.count += 1

    def unknown_field(self, name: str, where: str, path: str) -> None:
        """Record an ignored field: one warning per distinct field name and context.

        Args:
            name: the field (or XML attribute or element) name.
            where: the kind of object it appeared in, e.g. ``"question"``.
            path: the JSON path or XML location of the first occurrence.
        """
        self.warn(
            f"ignored unknown field {quote(name)} in {where} (first at {path})",
            key=("unknown", where, name),
        )

    def warnings(self) -> tuple[ParseWarning, ...]:
        """Return the warnings in the order they first occurred."""
        result = []
        for entry in self._entries.values():
            message = entry.message
            if entry.count > 1:
                message += f" [{entry.count} occurrences]"
            result.append(ParseWarning(message, entry.question_id))
        return tuple(result)

    def error(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> DatasetFormatError:
        """Return (not raise) a ``DatasetFormatError`` for this file.

        Args:
            message: what was wrong and what was expected.
            path: the JSON path of the offending value, prefixed to the message.
            line: 1-based line, when known.
            column: 1-based column, when known.

        Returns:
            The error, ready to be raised by the caller.
        """
        if path:
            message = f"at {path}: {message}"
        return DatasetFormatError(message, source=self.source, line=line, column=column)

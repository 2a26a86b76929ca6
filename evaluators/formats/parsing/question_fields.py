"""Question-level fields shared by all formats: texts per language, flags and answer types.

These rules are the same whether a value came from an XML attribute or a JSON field: keywords
split on commas, ``"true"``/``"false"`` flags, the spelling variants of QALD answer types, and
the ``OUT OF SCOPE`` marker in queries. Pure functions and a small builder; no I/O.
"""

from __future__ import annotations

from evaluators.formats.parsing.diagnostics import Diagnostics, quote
from evaluators.model import AnswerType, Question, QuestionText

# Spellings found in real QALD files, mapped to the answer type they mean.
_ANSWER_TYPES: dict[str, AnswerType] = {
    "resource": AnswerType.RESOURCE,
    "resouce": AnswerType.RESOURCE,  # QALD-7 typo
    "uri": AnswerType.RESOURCE,
    "list": AnswerType.RESOURCE,  # QALD-5 "Give me all ..." questions
    "string": AnswerType.STRING,
    "literal": AnswerType.STRING,
    "number": AnswerType.NUMBER,
    "num": AnswerType.NUMBER,
    "date": AnswerType.DATE,
    "boolean": AnswerType.BOOLEAN,
}
OUT_OF_SCOPE = "OUT OF SCOPE"
# The QALD question flags, as attributes (XML) or fields (JSON).
FLAGS = ("aggregation", "onlydbo", "hybrid")


def split_keywords(text: str) -> tuple[str, ...]:
    """Split a keyword string on commas, trimming blanks and dropping empty items.

    >>> split_keywords("University of Oxford, official color,")
    ('University of Oxford', 'official color')
    """
    return tuple(part.strip() for part in text.split(",") if part.strip())


def answer_type(label: str | None, diag: Diagnostics, question_id: str) -> AnswerType | None:
    """Map an ``answertype`` value to an ``AnswerType`` (``None`` when absent or unknown).

    Args:
        label: the value as written.
        diag: receives a warning for an unknown label.
        question_id: the question, for the warning.

    Returns:
        The answer type, or ``None``.
    """
    if label is None or not label.strip():
        return None
    found = _ANSWER_TYPES.get(label.strip().lower())
    if found is None:
        known = ", ".join(t.value for t in AnswerType)
        diag.warn(
            f"unknown answertype {quote(label)}; expected one of {known}; left unset",
            question_id=question_id,
            key=("answertype", label),
        )
    return found


def flag(text: str, name: str, diag: Diagnostics, question_id: str) -> bool | None:
    """Read a ``"true"``/``"false"`` flag (any case); other values warn and give ``None``.

    Args:
        text: the value as written.
        name: the flag's name (``aggregation``, ``onlydbo``, ``hybrid``).
        diag: receives a warning for other values.
        question_id: the question, for the warning.

    Returns:
        The flag's value, or ``None``.
    """
    value = text.strip().lower()
    if value in ("true", "false"):
        return value == "true"
    diag.warn(
        f"{name} should be true or false, found {quote(text)}; left unset",
        question_id=question_id,
        key=("flag", name, text),
    )
    return None


def is_out_of_scope(*queries: str | None) -> bool:
    """Return whether any query is the ``OUT OF SCOPE`` marker (or contains it).

    >>> is_out_of_scope("  OUT OF SCOPE ", None)
    True
    >>> is_out_of_scope("SELECT * WHERE { ?s ?p ?o }")
    False
    """
    return any(q is not None and OUT_OF_SCOPE in q.upper() for q in queries)


class TextCollector:
    """Gather question strings and keywords per language, in file order.

    The first string of a language wins; a later one is reported and ignored, so that
    ``Question.text(lang)`` is unambiguous. Keywords of a language without a string yield an
    entry with an empty text.
    """

    __slots__ = ("_diag", "_keywords", "_order", "_question_id", "_texts")

    def __init__(self, diag: Diagnostics, question_id: str) -> None:
        self._diag = diag
        self._question_id = question_id
        self._order: list[str] = []
        self._texts: dict[str, str] = {}
        self._keywords: dict[str, tuple[str, ...]] = {}

    def _note(self, language: str) -> None:
        if language not in self._order:
            self._order.append(language)

    def add_text(self, language: str, text: str) -> None:
        """Add the question string in ``language`` (trimmed)."""
        text = text.strip()
        if self._texts.get(language):
            if text and text != self._texts[language]:
                self._diag.warn(
                    f"question {quote(self._question_id)} has a second {language!r} string "
                    f"{quote(text, 40)}; kept the first",
                    question_id=self._question_id,
                )
            return
        self._note(language)
        self._texts[language] = text

    def add_keywords(self, language: str, keywords: tuple[str, ...]) -> None:
        """Add keywords in ``language``; repeated keyword entries are concatenated."""
        if not keywords:
            return
        self._note(language)
        self._keywords[language] = self._keywords.get(language, ()) + keywords

    def build(self) -> tuple[QuestionText, ...]:
        """Return the collected texts in the order their languages first appeared."""
        return tuple(
            QuestionText(lang, self._texts.get(lang, ""), self._keywords.get(lang, ()))
            for lang in self._order
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

"""Split titles and abstracts into sentences, as character spans of the original text.

A boundary is a ``.``, ``!`` or ``?`` (optionally followed by closing quotes or brackets), then
whitespace, then a character that is not a lowercase letter; a blank line is always a boundary.
A period does not end a sentence after a listed abbreviation ("e.g.", "et al.", "Fig.",
"vs." ...) or after an initial that belongs to a run of initials ("J. R. Smith"); a lone
capital before an uppercase word ("hepatitis B. The ...") does end one. Decimals never match
because a boundary needs whitespace. Pure; offsets are Python string indices (code points).
"""

from __future__ import annotations

import re

ABBREVIATIONS = frozenset(
    (
        *("e.g", "i.e", "eg", "ie", "al", "fig", "figs", "vs", "approx", "ca", "cf", "dr"),
        *("mr", "mrs", "ms", "prof", "no", "nos", "vol", "pp", "ref", "refs", "eq", "eqs"),
        *("resp", "incl", "st", "jr", "inc", "ltd", "co", "sp", "spp", "var", "tab", "suppl"),
        *("dept", "univ"),
    )
)
_PARAGRAPH = re.compile(r"(?:(?!\n[ \t]*\n).)+", re.DOTALL)
# closing quotes: ASCII, U+201D and U+2019; openers: ASCII, U+201C and U+2018
_BOUNDARY = re.compile("[.!?]+[\"'\u201d\u2019)\\]]*(\\s+)")
_INITIAL = re.compile(r"[A-Z]\.")
_OPENERS = "([{\"'\u201c\u2018"


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Return the ``(begin, end)`` spans (end exclusive) of the sentences in ``text``.

    Spans never start or end with whitespace and never overlap; text between them is only
    whitespace.

    Args:
        text: a title or an abstract.

    Returns:
        The spans in text order (empty for blank text).

    Examples:
        >>> text = "We used e.g. aspirin (Fig. 2). It worked in 3.5% of cases. Next?"
        >>> [text[b:e] for b, e in sentence_spans(text)]
        ['We used e.g. aspirin (Fig. 2).', 'It worked in 3.5% of cases.', 'Next?']
    """
    spans: list[tuple[int, int]] = []
    for paragraph in _PARAGRAPH.finditer(text):
        start = paragraph.start()
        for match in _BOUNDARY.finditer(text, paragraph.start(), paragraph.end()):
            following = match.end()
            if following < paragraph.end() and _ends_sentence(text, match.start(), following):
                spans.append((start, match.start(1)))
                start = following
        spans.append((start, paragraph.end()))
    return [trimmed for span in spans if (trimmed := _trim(text, *span))[0] < trimmed[1]]


def _ends_sentence(text: str, terminator: int, following: int) -> bool:
    if text[following].islower():
        return False
    if text[terminator] != "." or text.startswith("..", terminator):
        return True
    word_start = terminator
    while word_start > 0 and not text[word_start - 1].isspace():
        word_start -= 1
    word = text[word_start:terminator].lstrip(_OPENERS)
    if word.lower() in ABBREVIATIONS:
        return False
    if len(word) == 1 and word.isupper():
        before = text[:word_start].rstrip()
        return not (_INITIAL.fullmatch(before[-2:]) or _INITIAL.match(text, following))
    return True


def _trim(text: str, begin: int, end: int) -> tuple[int, int]:
    while begin < end and text[begin].isspace():
        begin += 1
    while end > begin and text[end - 1].isspace():
        end -= 1
    return begin, end

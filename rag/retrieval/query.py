"""The search query language: strict syntax checking, broadening and question-to-query rewriting.

Whoosh's parser is lenient: it silently reads an unclosed parenthesis, a dangling ``AND`` or an
unknown ``field:`` as plain words, so a typo changes the query without a word. This module
lexes a query the way Whoosh's plugins tag it and rejects such input with ``QuerySyntaxError``
and the character position. It also derives the fallback queries: ``broadened`` (no phrases,
no required or excluded parts, every group OR-ed) and ``content_words`` (an OR of the words of
a question without stop words). Pure: strings in, strings out; it never runs a search.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field

from rag.errors import QuerySyntaxError

BINARY_OPERATORS = frozenset({"AND", "OR", "ANDNOT", "ANDMAYBE"})
OPERATORS = BINARY_OPERATORS | {"NOT"}
# Words of questions that say nothing about the topic; added to the index's stop words when a
# question is turned into a query.
QUESTION_WORDS = frozenset(
    (
        *("what", "which", "who", "whom", "whose", "how", "why", "where", "when"),
        *("does", "do", "did", "is", "are", "was", "were", "has", "have", "had"),
        *("there", "any", "list", "name", "describe", "please"),
    )
)
_FIELD = re.compile(r"([A-Za-z_]\w*):")
_WORD = re.compile(r"\w+(?:\.?\w+)*")  # the token shape of Whoosh's default tokenizer
_BOOST = re.compile(r"\^(?:\d+(?:\.\d+)?|\.\d+)")
_FUZZY = re.compile(r"~\d?(?:/[1-9]\d*)?")
_PHRASE_TAIL = re.compile(r"(?:~[1-9]\d*)?(?:\^\d*\.?\d+)?")
_STOPS = frozenset(' \t\r\n\f\v()"')


@dataclass(frozen=True, slots=True)
class Atom:
    """One operand or operator of a query as written."""

    kind: str  # term | phrase | range | op | group
    text: str  # the source text without the +/- marker (for a group: "field:" or "")
    start: int
    marker: str = ""  # "+", "-" or ""
    children: tuple[Atom, ...] = field(default=())


def check_query(query: str, fields: Collection[str]) -> tuple[Atom, ...]:
    """Check a query strictly and return its atoms.

    Args:
        query: the query as typed.
        fields: the field names a ``field:`` prefix may use.

    Returns:
        The top-level atoms (groups nest their children).

    Raises:
        QuerySyntaxError: for an empty query, unbalanced parentheses or quotes, an operator
            without operands, an unknown field, or a malformed boost, fuzzy or range suffix.
    """
    if not query.strip():
        raise QuerySyntaxError("the query is empty; type some words", query=query, position=0)
    atoms = _Lexer(query, fields).group(0, None)
    if not broadened(atoms):
        raise QuerySyntaxError(
            "the query only excludes (NOT, -); add a term to search for", query=query, position=0
        )
    return atoms


def broadened(atoms: tuple[Atom, ...]) -> str:
    """Return the broadened form of a checked query ("" if nothing positive is left).

    Phrases become their words, ``+`` markers and AND-like operators are dropped, ``-``/``NOT``
    parts are removed; fields, wildcards, fuzzy terms and boosts stay. With the parser's OR
    default, the result matches any positive part of the original.
    """
    return " ".join(_broadened_parts(atoms))


def content_words(text: str, stop_words: Collection[str]) -> str:
    """Return an OR query of the distinct content words of a question ("" if none).

    Words are lowercased (so ``AND``/``OR``/``NOT`` are plain words), stop words and question
    words are dropped, and every syntax character disappears.
    """
    seen: dict[str, None] = {}
    for word in _WORD.findall(text):
        lowered = word.lower()
        if lowered not in stop_words and lowered not in QUESTION_WORDS:
            seen.setdefault(lowered, None)
    return " ".join(seen)


def markers(atoms: tuple[Atom, ...]) -> Iterator[Atom]:
    """Yield every atom carrying a ``+`` or ``-`` marker, depth first."""
    for atom in atoms:
        if atom.marker:
            yield atom
        yield from markers(atom.children)


def _broadened_parts(atoms: tuple[Atom, ...]) -> list[str]:
    parts: list[str] = []
    skip = False
    for atom in atoms:
        if atom.kind == "op":
            skip = atom.text in ("NOT", "ANDNOT")
            continue
        if skip or atom.marker == "-":
            skip = False
            continue
        if atom.kind == "group":
            inner = _broadened_parts(atom.children)
            if inner:
                parts.append(f"{atom.text}({' '.join(inner)})")
        elif atom.kind == "phrase":
            prefix, _, rest = atom.text.partition('"')
            parts.extend(f"{prefix}{word}" for word in _WORD.findall(rest.rpartition('"')[0]))
        else:
            parts.append(atom.text)
    return parts


class _Lexer:
    """Tag a query as Whoosh's plugins would and check operator/operand order."""

    def __init__(self, query: str, fields: Collection[str]) -> None:
        self.query = query
        self.fields = fields
        self.pos = 0

    def fail(self, message: str, position: int) -> QuerySyntaxError:
        return QuerySyntaxError(message, query=self.query, position=position)

    def group(self, opened_at: int, prefix: str | None) -> tuple[Atom, ...]:
        atoms: list[Atom] = []
        pending: Atom | None = None  # an operator still waiting for its right operand
        while True:
            self._skip_space()
            if self.pos >= len(self.query) or self.query[self.pos] == ")":
                break
            atom = self._atom()
            if atom.kind == "op":
                if atom.text in BINARY_OPERATORS and (pending or not atoms):
                    after = f" after {pending.text!r}" if pending else ""
                    raise self.fail(f"{atom.text!r} needs a term before it{after}", atom.start)
                pending = atom
            else:
                pending = None
            atoms.append(atom)
        if pending is not None:
            raise self.fail(f"{pending.text!r} needs a term after it", pending.start)
        at_end = self.pos >= len(self.query)
        if prefix is None and not at_end:
            raise self.fail("unmatched ')'; remove it or add a '(' before", self.pos)
        if prefix is not None and at_end:
            raise self.fail("unclosed '('; add a ')'", opened_at)
        if prefix is not None and not atoms:
            raise self.fail("empty group '()'; put terms inside or remove it", opened_at)
        if prefix is None and not atoms:
            raise self.fail("the query has no terms", 0)
        self.pos += 0 if prefix is None else 1
        return tuple(atoms)

    def _skip_space(self) -> None:
        while self.pos < len(self.query) and self.query[self.pos].isspace():
            self.pos += 1

    def _atom(self) -> Atom:
        q, start = self.query, self.pos
        marker = ""
        if q[start] in "+-":
            marker = q[start]
            self.pos += 1
            if self.pos >= len(q) or q[self.pos].isspace() or q[self.pos] == ")":
                raise self.fail(f"{marker!r} must be followed directly by a term", start)
        body = self.pos
        prefix = self._field_prefix()
        char = q[self.pos]
        if char == "(":
            self.pos += 1
            children = self.group(self.pos - 1, prefix)
            return Atom("group", prefix, start, marker, children)
        if char == '"':
            self._phrase()
            return Atom("phrase", q[body : self.pos], start, marker)
        if char in "[{":
            self._range()
            return Atom("range", q[body : self.pos], start, marker)
        end = self.pos
        while end < len(q) and q[end] not in _STOPS:
            end += 1
        word = q[self.pos : end]
        self.pos = end
        if not marker and not prefix and word in OPERATORS:
            return Atom("op", word, start)
        self._check_word(word, end - len(word))
        return Atom("term", q[body:end], start, marker)

    def _field_prefix(self) -> str:
        match = _FIELD.match(self.query, self.pos)
        if not match:
            return ""
        after = match.end()
        if after >= len(self.query) or self.query[after].isspace() or self.query[after] == ")":
            raise self.fail(f"field {match.group(0)!r} needs a term after it", self.pos)
        if match.group(1) not in self.fields:
            raise self.fail(
                f"unknown field {match.group(1)!r}; use one of {', '.join(sorted(self.fields))}",
                self.pos,
            )
        self.pos = after
        return match.group(0)

    def _phrase(self) -> None:
        opening = self.pos
        closing = self.query.find('"', opening + 1)
        if closing < 0:
            raise self.fail("unterminated phrase; add the closing '\"'", opening)
        if not self.query[opening + 1 : closing].strip():
            raise self.fail('empty phrase ""; put words inside or remove it', opening)
        tail = _PHRASE_TAIL.match(self.query, closing + 1)
        self.pos = tail.end() if tail else closing + 1
        self._expect_boundary("a phrase")

    def _range(self) -> None:
        opening = self.pos
        closing = min(
            (i for i in (self.query.find("]", opening), self.query.find("}", opening)) if i >= 0),
            default=-1,
        )
        if closing < 0:
            raise self.fail("unclosed range; write [low TO high]", opening)
        if " TO " not in f" {self.query[opening + 1 : closing]} ":
            raise self.fail("a range needs 'TO', as in [2000 TO 2010]", opening)
        self.pos = closing + 1
        self._expect_boundary("a range")

    def _expect_boundary(self, what: str) -> None:
        if self.pos < len(self.query) and self.query[self.pos] not in _STOPS:
            raise self.fail(f"unexpected {self.query[self.pos]!r} after {what}", self.pos)

    def _check_word(self, word: str, at: int) -> None:
        if not word.strip("*?"):
            raise self.fail("a wildcard needs at least one letter, as in cardio*", at)
        caret = word.find("^")
        if caret == 0 or (caret > 0 and not _BOOST.fullmatch(word[caret:])):
            raise self.fail("a boost is written term^2 or term^0.5", at + max(caret, 0))
        core = word[:caret] if caret > 0 else word
        tilde = core.find("~")
        if tilde == 0 or (tilde > 0 and not _FUZZY.fullmatch(core[tilde:])):
            raise self.fail(
                "fuzzy matching is written term~ or term~2 (edit distance 0-9)",
                at + max(tilde, 0),
            )

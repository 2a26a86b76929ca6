"""Lexical facts about SPARQL text that the endpoint must know before evaluating it.

pyoxigraph exposes no parsed query to Python, yet the public endpoint has to refuse ``SERVICE``
(both pyoxigraph and rdflib would otherwise call any URL from the server), find the dataset a
query names with ``FROM``/``FROM NAMED`` (so it can be intersected with the visible graphs), and
add ``USING`` clauses for the update protocol's ``using-graph-uri``. A small tokenizer does that:
IRIs, strings and comments are recognised first, so a keyword inside them never counts. This
module neither evaluates nor rewrites queries beyond inserting ``USING`` clauses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urljoin

from pyoxigraph import NamedNode

_CODEPOINT = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_TOKEN = re.compile(
    r"""
    (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
  | (?P<lstr>\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"|'''(?:[^'\\]|\\.|'(?!''))*''')
  | (?P<str>"(?:[^"\\\n\r]|\\.)*"|'(?:[^'\\\n\r]|\\.)*')
  | (?P<comment>\#[^\n\r]*)
  | (?P<var>[?$][\w\u00B7\u0300-\u036F\u203F-\u2040]+)
  | (?P<pname>(?:[A-Za-z\u00C0-\uFFFF][\w.\-\u00B7\u00C0-\uFFFF]*)?
               :(?:[\w\-.:%\u00B7\u00C0-\uFFFF]|\\[_~.\-!$&'()*+,;=/?\#@%])*)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<open>\{)
  | (?P<close>\})
  | (?P<space>\s+)
  | (?P<other>.)
    """,
    re.X | re.S,
)


# ``analyse`` reads only the tokens that decide something: the words it looks for and the
# brackets. Each match of _SIGNIFICANT is a run of every other token of _TOKEN, each read as
# _TOKEN reads it (the same patterns, tried in the same order, each token atomic: a run never
# splits a token differently to make the next one match), then one significant token, or the
# end of the text. A word is significant when it is one of _WORDS in any case; every other
# word, whitespace and single character (but brackets) is passed over as _TOKEN's ``word``,
# ``space`` and ``other`` read them.
_WORDS = ("SERVICE", "FROM", "SELECT", "ASK", "CONSTRUCT", "DESCRIBE")
_KEYWORD = "|".join("".join(f"[{c}{c.lower()}]" for c in word) for word in _WORDS)
_SIGNIFICANT = re.compile(
    r"""
    (?>
        <[^<>"{}|^`\\\x00-\x20]*>
      | \"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"|'''(?:[^'\\]|\\.|'(?!''))*'''
      | "(?:[^"\\\n\r]|\\.)*"|'(?:[^'\\\n\r]|\\.)*'
      | \#[^\n\r]*
      | [?$][\w\u00B7\u0300-\u036F\u203F-\u2040]+
      | (?:[A-Za-z\u00C0-\uFFFF][\w.\-\u00B7\u00C0-\uFFFF]*)?
        :(?:[\w\-.:%\u00B7\u00C0-\uFFFF]|\\[_~.\-!$&'()*+,;=/?\#@%])*
      | (?!(?:"""
    + _KEYWORD
    + r""")(?![A-Za-z0-9_]))[A-Za-z_][A-Za-z0-9_]*
      | \s+
      | [^A-Za-z_{}()\[\]\s]
    )*+
    (?:
        (?P<word>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<open>[{(\[])
      | (?P<close>[})\]])
      | \Z
    )
    """,
    re.X | re.S,
)


@dataclass(frozen=True, slots=True)
class Token:
    """One lexical token: its kind (``iri``, ``word``, ``pname``, ...), text and offset."""

    kind: str
    text: str
    start: int


@dataclass(frozen=True, slots=True)
class QueryDataset:
    """The RDF dataset a query names with ``FROM`` and ``FROM NAMED`` (absolute IRIs)."""

    default: tuple[str, ...] = ()
    named: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        """Return whether the query names no dataset at all."""
        return not self.default and not self.named


def decode_codepoints(text: str) -> str:
    r"""Replace ``\uXXXX`` and ``\UXXXXXXXX`` escapes (SPARQL 1.1 Query, section 19.2).

    >>> decode_codepoints(r"\u0053ERVICE")
    'SERVICE'
    """

    def _char(match: re.Match[str]) -> str:
        code = int(match.group(1) or match.group(2), 16)
        return chr(code) if code <= 0x10FFFF else match.group(0)

    return _CODEPOINT.sub(_char, text)


def tokens(text: str) -> list[Token]:
    """Return the significant tokens of SPARQL text (no whitespace, strings or comments kept).

    Strings are kept as ``str`` tokens (their content is never inspected).
    """
    out: list[Token] = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or "other"
        if kind in ("space", "comment"):
            continue
        if kind == "lstr":
            kind = "str"
        out.append(Token(kind, match.group(0), match.start()))
    return out


_OPENING = {"{", "(", "["}
_CLOSING = {"}", ")", "]"}


def nesting_depth(query: str) -> int:
    r"""Return the deepest nesting of ``{ }``, ``( )`` and ``[ ]`` outside IRIs, strings, comments.

    ``\u`` escapes are decoded too (SPARQL 1.1 Query, section 19.2), and the deeper of both
    readings counts, so an escaped bracket cannot hide nesting; an escaped ``#`` in a local
    name (``ex:a\#``) starts no comment.

    >>> nesting_depth("SELECT * { { ?s ?p (1) } } # {{")
    3
    >>> nesting_depth(r"ASK { ?s ex:a\# ?o {{}} }")
    3
    """
    return _depth(query, tokens(query))


def _depth(query: str, toks: list[Token]) -> int:
    """Return the nesting depth of ``query`` whose tokens are ``toks`` (both readings)."""
    deepest = _token_depth(toks)
    decoded = decode_codepoints(query) if "\\u" in query or "\\U" in query else query
    if decoded != query:
        deepest = max(deepest, _token_depth(tokens(decoded)))
    return deepest


def _token_depth(toks: list[Token]) -> int:
    depth = deepest = 0
    for token in toks:
        if token.text in _OPENING and token.kind in ("open", "other"):
            depth += 1
            deepest = max(deepest, depth)
        elif token.text in _CLOSING and token.kind in ("close", "other"):
            depth = max(0, depth - 1)
    return deepest


def _words(toks: list[Token]) -> list[str]:
    return [t.text.upper() if t.kind == "word" else "" for t in toks]


def uses_service(query: str) -> bool:
    """Return whether a query or update contains the ``SERVICE`` keyword (outside IRIs/strings).

    >>> uses_service('SELECT * { SERVICE <http://x/> { ?s ?p ?o } }')
    True
    >>> uses_service('SELECT * { ?s <http://x/SERVICE> "SERVICE" } # SERVICE')
    False
    """
    return any("SERVICE" in _words(tokens(t)) for t in (query, decode_codepoints(query)))


def uses_load(update: str) -> bool:
    """Return whether an update contains the ``LOAD`` operation keyword (outside IRIs/strings).

    >>> uses_load('LOAD <http://example.org/data.ttl> INTO GRAPH <http://x/g>')
    True
    >>> uses_load('INSERT DATA { <http://x/LOAD> <http://x/p> "LOAD" } # LOAD')
    False
    """
    return any("LOAD" in _words(tokens(t)) for t in (update, decode_codepoints(update)))


def _resolve(token: Token, prefixes: dict[str, str], base: str | None) -> str | None:
    if token.kind == "iri":
        iri = token.text[1:-1]
        return urljoin(base, iri) if base else iri
    if token.kind == "pname":
        prefix, _, local = token.text.partition(":")
        if prefix in prefixes:
            return prefixes[prefix] + local
    return None


def query_dataset(query: str, base: str | None = None) -> QueryDataset:
    """Return the graphs a query names in ``FROM`` and ``FROM NAMED`` clauses.

    Args:
        query: SPARQL query text.
        base: the base IRI relative IRIs resolve against (a ``BASE`` in the query wins).

    >>> query_dataset('PREFIX e: <http://e/> SELECT * FROM e:a FROM NAMED <http://e/b> {}')
    QueryDataset(default=('http://e/a',), named=('http://e/b',))
    """
    toks = tokens(query)
    words = _words(toks)
    prefixes: dict[str, str] = {}
    default: list[str] = []
    named: list[str] = []
    for i, word in enumerate(words):
        if word == "BASE" and i + 1 < len(toks) and toks[i + 1].kind == "iri":
            base = _resolve(toks[i + 1], prefixes, base)
        elif word == "PREFIX" and i + 2 < len(toks) and toks[i + 1].kind == "pname":
            iri = _resolve(toks[i + 2], prefixes, base)
            if iri is not None:
                prefixes[toks[i + 1].text.rstrip(":").split(":")[0]] = iri
        elif word == "FROM":
            is_named = i + 1 < len(words) and words[i + 1] == "NAMED"
            at = i + 2 if is_named else i + 1
            if at < len(toks):
                iri = _resolve(toks[at], prefixes, base)
                if iri is not None:
                    (named if is_named else default).append(iri)
    return QueryDataset(tuple(default), tuple(named))


def has_dataset_keywords(update: str) -> bool:
    """Return whether an update uses ``USING`` or ``WITH`` (the protocol forbids mixing them).

    >>> has_dataset_keywords("WITH <http://g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }")
    True
    """
    return bool({"USING", "WITH"} & set(_words(tokens(update))))


def add_using(update: str, default: list[NamedNode], named: list[NamedNode]) -> str:
    """Insert ``USING``/``USING NAMED`` clauses before each top-level ``WHERE`` of an update.

    This is how the update protocol's ``using-graph-uri`` and ``using-named-graph-uri``
    parameters take effect (SPARQL 1.1 Protocol, section 2.2.3). ``DELETE WHERE`` shorthand
    cannot carry ``USING``; its ``WHERE`` is left alone.

    >>> add_using("INSERT { ?s ?p 1 } WHERE { ?s ?p ?o }", [NamedNode("http://g")], [])
    'INSERT { ?s ?p 1 } USING <http://g> WHERE { ?s ?p ?o }'
    """
    # Graph names are serialised by pyoxigraph (validated IRIs), never pasted as raw text.
    clauses = " ".join([f"USING {g}" for g in default] + [f"USING NAMED {g}" for g in named])
    if not clauses:
        return update
    toks = tokens(update)
    words = _words(toks)
    depth = 0
    inserts: list[int] = []
    for i, tok in enumerate(toks):
        if tok.kind == "open":
            depth += 1
        elif tok.kind == "close":
            depth -= 1
        elif depth == 0 and words[i] == "WHERE" and (i == 0 or words[i - 1] != "DELETE"):
            inserts.append(tok.start)
    for offset in reversed(inserts):
        update = update[:offset] + clauses + " " + update[offset:]
    return update


def query_form(query: str) -> str | None:
    """Return ``SELECT``, ``ASK``, ``CONSTRUCT`` or ``DESCRIBE`` (``None`` if none is found).

    >>> query_form("PREFIX s: <http://s/> CONSTRUCT { ?s ?p ?o } WHERE { SELECT * {} }")
    'CONSTRUCT'
    """
    for word in _words(tokens(query)):
        if word in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE"):
            return word
    return None


@dataclass(frozen=True, slots=True)
class QueryFacts:
    """What the endpoint needs to know about a query, from one pass over its tokens."""

    form: str | None
    uses_service: bool
    dataset: QueryDataset
    # Deepest nesting of brackets (see ``nesting_depth``).
    depth: int = 0


def analyse(query: str, base: str | None = None) -> QueryFacts:
    """Return the form, the use of ``SERVICE`` and the ``FROM`` dataset of ``query``.

    One pass over the tokens, keeping none of them, for a text without ``\\u`` escapes (the
    public endpoint reads every query with it); a text with escapes is read both ways
    (``_analyse_escaped``).

    >>> analyse("ASK FROM <http://g> { SERVICE <http://x> {} }").uses_service
    True
    >>> analyse("SELECT * { ?s ?p ([1]) }").depth
    3
    """
    if "\\u" in query or "\\U" in query:
        return _analyse_escaped(query, base)
    form: str | None = None
    service = named_dataset = False
    depth = deepest = 0
    for match in _SIGNIFICANT.finditer(query):
        kind = match.lastgroup
        if kind == "word":
            word = match.group(kind).upper()
            if word == "SERVICE":
                service = True
            elif word == "FROM":
                named_dataset = True
            elif form is None:
                form = word
        elif kind == "open":
            depth += 1
            deepest = max(deepest, depth)
        elif kind == "close":
            depth = max(0, depth - 1)
    dataset = query_dataset(query, base) if named_dataset else QueryDataset()
    return QueryFacts(form, service, dataset, deepest)


_FORMS = frozenset({"SELECT", "ASK", "CONSTRUCT", "DESCRIBE"})


def _analyse_escaped(query: str, base: str | None = None) -> QueryFacts:
    """``analyse`` over the token list, for a text with ``\\u`` escapes: ``SERVICE`` and
    the nesting are looked for in the decoded text too."""
    toks = tokens(query)
    words = _words(toks)
    service = "SERVICE" in words or uses_service(query)
    form = next((w for w in words if w in _FORMS), None)
    dataset = query_dataset(query, base) if "FROM" in words else QueryDataset()
    return QueryFacts(form, service, dataset, _depth(query, toks))

"""Gold and system markings from a SPARQL query: resources, properties, relations, item types.

The query is parsed with rdflib's SPARQL parser; prefixed names and property paths are resolved
with rdflib's algebra helpers, and the triple patterns are then visited in document order. Two
modes:

* ``STRICT`` (our default): every triple pattern, including those inside FILTER (NOT) EXISTS;
  ``rdf:type C`` or Wikidata's ``wdt:P31 C`` (also followed by subclass steps, ``wdt:P31/
  wdt:P279*``) on a projected variable makes ``C`` an answer item type (not a resource, and
  the type property is then no property); property paths contribute each IRI they name as a property
  and relations (a sequence becomes a chain through wildcards, ``^p`` swaps the ends, other paths
  keep their SPARQL text as predicate); a variable predicate is a wildcard; well-known prefixes
  (``dbo:``, ``res:``, ``wdt:`` ...) that a query uses without declaring are supplied; duplicates
  are dropped.
* ``GERBIL``: GERBIL QA's ``QAUtils`` as it behaves: ``rdf:type`` is an ordinary property and its
  class an ordinary resource, no answer item types, only the WHERE pattern outside FILTER/BIND/
  VALUES is visited, undeclared prefixes make the query unparsable, duplicates are kept, and the
  first property path or variable predicate stops the walk (its subject is still recorded).
  Hybrid ``text:"..."`` triples are rewritten the way GERBIL rewrites them.

Variables and blank nodes become ``None`` (a wildcard whose name does not matter).
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urljoin

from pyoxigraph import Literal, NamedNode
from pyparsing import ParseException, ParseResults
from rdflib import Literal as RdfLiteral
from rdflib import URIRef, Variable
from rdflib.paths import AlternativePath, InvPath, MulPath, Path, SequencePath
from rdflib.plugins.sparql.algebra import translatePath, traverse
from rdflib.plugins.sparql.parser import parseQuery
from rdflib.plugins.sparql.parserutils import CompValue

from vocab.prefixes import KNOWLEDGE_BASES
from vocab.standard import RDF, XSD

RDF_TYPE = RDF.type.value
# rdflib's pyparsing grammar must not run in two threads at once; every caller of parseQuery
# that may run beside scoring (the asking threads check system queries) holds this lock.
PARSER_LOCK = threading.RLock()
OKBQA_TEXT = "http://okbqa.org/text#query"
WIKIDATA_INSTANCE_OF = "http://www.wikidata.org/prop/direct/P31"
WIKIDATA_SUBCLASS_OF = "http://www.wikidata.org/prop/direct/P279"
RDFS_SUBCLASS_OF = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
# "the subject is an instance of the object": rdf:type, and Wikidata's "instance of" (wdt:P31)
TYPE_PROPERTIES = frozenset({RDF_TYPE, WIKIDATA_INSTANCE_OF})
SUBCLASS_PROPERTIES = frozenset({RDFS_SUBCLASS_OF, WIKIDATA_SUBCLASS_OF})


class MarkingMode(StrEnum):
    """How markings are derived from a query."""

    STRICT = "strict"
    GERBIL = "gerbil"


Term = NamedNode | Literal


@dataclass(frozen=True, slots=True)
class Relation:
    """A triple pattern; ``None`` is a variable or blank node. The predicate is an IRI or a path."""

    subject: Term | None
    predicate: str | None
    object: Term | None


@dataclass(frozen=True, slots=True)
class Markings:
    """What a query mentions. ``problem`` says why markings are missing or incomplete."""

    resources: tuple[str, ...] = ()
    properties: tuple[str, ...] = ()
    relations: tuple[Relation, ...] = ()
    answer_item_types: tuple[str, ...] = ()
    problem: str | None = None


def gerbil_text_rewrite(sparql: str) -> str:
    """Rewrite hybrid ``text:"x"`` predicates as GERBIL does: a fresh ``?textN`` variable, plus a
    triple ``?textN <http://okbqa.org/text#query> "x"`` right after ``where {``.

    >>> gerbil_text_rewrite('SELECT ?n WHERE { ?x text:"founder of" ?n }')
    'SELECT ?n WHERE { ?text0 <http://okbqa.org/text#query> "founder of" . ?x ?text0 ?n }'
    """
    where = sparql.lower().find("where {")
    if 'text:"' not in sparql or where < 0:
        return sparql
    texts: list[str] = []

    def fresh(match: re.Match[str]) -> str:
        texts.append(match.group(1))
        return f"?text{len(texts) - 1}"

    rest = re.sub(r'text:"([^"]*)"', fresh, sparql[where + 7 :])
    inserted = "".join(f' ?text{i} <{OKBQA_TEXT}> "{t}" .' for i, t in enumerate(texts))
    return sparql[: where + 7] + inserted + rest


class _Stop(Exception):
    """GERBIL's walker threw: the remaining triples are dropped."""


def _resolver(prefixes: dict[str, str], base: str | None) -> Callable[[Any], Any]:
    # one post-order pass: prefixed names, literals, relative IRIs, then property paths
    def visit(node: Any) -> Any:
        if isinstance(node, CompValue):
            if node.name == "pname":
                prefix = node.prefix or ""
                if prefix not in prefixes:
                    raise ValueError(f"undeclared prefix {prefix}:")
                return URIRef(prefixes[prefix] + (node.localname or ""))
            if node.name == "literal":
                return RdfLiteral(node.string, lang=node.lang, datatype=node.datatype)
            return translatePath(node)
        if isinstance(node, URIRef) and ":" not in node and base:
            return URIRef(urljoin(base, str(node)))
        return None

    return visit


def _parse(sparql: str, mode: MarkingMode) -> tuple[CompValue, bool]:
    """Return the query tree with IRIs and paths resolved, and whether it projects all variables.

    Raises:
        ValueError: if the query does not parse or uses an undeclared prefix.
    """
    try:
        with PARSER_LOCK:
            parsed = parseQuery(sparql)
    except ParseException as exc:
        raise ValueError(f"the query does not parse: {exc}") from exc
    prefixes = {} if mode is MarkingMode.GERBIL else dict(KNOWLEDGE_BASES)
    base: str | None = None
    for decl in parsed[0]:
        if decl.name == "PrefixDecl":
            prefixes[decl.prefix or ""] = str(decl.iri)
        elif decl.name == "Base":
            base = str(decl.iri)
    query = traverse(parsed[1], visitPost=_resolver(prefixes, base))
    # CompValue.get returns the key itself for a missing key; attribute access gives None
    return query, query.name == "SelectQuery" and not query.projection


def _term(node: Any) -> Term | None:
    if isinstance(node, URIRef):
        try:
            return NamedNode(str(node))
        except ValueError:
            return Literal(str(node), datatype=XSD.anyURI)
    if isinstance(node, RdfLiteral):
        text = str(node)
        try:
            if node.language:
                return Literal(text, language=node.language)
            if node.datatype:
                return Literal(text, datatype=NamedNode(str(node.datatype)))
        except ValueError:
            pass
        return Literal(text)
    return None


def _gerbil_literal(node: RdfLiteral) -> Literal:
    # Jena's getLiteralValue().toString(): integers lose leading zeros and signs, the rest stays
    text = str(node)
    if node.datatype == URIRef(XSD.integer.value) and re.fullmatch(r"[+-]?\d+", text):
        return Literal(str(int(text)))
    return Literal(text)


def _path_iris(path: Any) -> list[str]:
    if isinstance(path, URIRef):
        return [str(path)]
    if isinstance(path, SequencePath | AlternativePath):
        return [iri for part in path.args for iri in _path_iris(part)]
    if isinstance(path, InvPath):
        return _path_iris(path.arg)
    if isinstance(path, MulPath):
        return _path_iris(path.path)
    return []  # a negated property set names what is *not* there


def _path_relations(s: Term | None, path: Any, o: Term | None) -> list[Relation]:
    if isinstance(path, URIRef):
        return [Relation(s, str(path), o)]
    if isinstance(path, InvPath) and isinstance(path.arg, URIRef):
        return [Relation(o, str(path.arg), s)]
    if isinstance(path, SequencePath) and all(
        isinstance(p, URIRef) or (isinstance(p, InvPath) and isinstance(p.arg, URIRef))
        for p in path.args
    ):
        ends: list[Term | None] = [s, *([None] * (len(path.args) - 1)), o]
        out: list[Relation] = []
        for i, step in enumerate(path.args):
            out.extend(_path_relations(ends[i], step, ends[i + 1]))
        return out
    return [Relation(s, path.n3(), o)]


def _states_type(p: Any) -> bool:
    """Whether the predicate says "the subject is an instance of the object".

    ``rdf:type`` and ``wdt:P31``, alone or followed by any number of subclass steps
    (``wdt:P31/wdt:P279*``, ``rdf:type/rdfs:subClassOf*``, the Wikidata idiom).

    >>> _states_type(URIRef(WIKIDATA_INSTANCE_OF))
    True
    >>> _states_type(SequencePath(URIRef(RDF_TYPE), MulPath(URIRef(RDFS_SUBCLASS_OF), "*")))
    True
    >>> _states_type(URIRef(WIKIDATA_SUBCLASS_OF))
    False
    """
    if isinstance(p, URIRef):
        return str(p) in TYPE_PROPERTIES
    if not isinstance(p, SequencePath) or not p.args:
        return False
    first, *rest = p.args
    return (
        isinstance(first, URIRef)
        and str(first) in TYPE_PROPERTIES
        and all(
            isinstance(step, MulPath)
            and isinstance(step.path, URIRef)
            and str(step.path) in SUBCLASS_PROPERTIES
            for step in rest
        )
    )


class _Collector:
    """Accumulates markings while the walker visits triple patterns."""

    def __init__(self, mode: MarkingMode, projected: set[str] | None) -> None:
        self.mode = mode
        self.projected = projected  # None: SELECT * (every variable is projected)
        self.resources: list[str] = []
        self.properties: list[str] = []
        self.relations: list[Relation] = []
        self.item_types: list[str] = []

    def _is_projected(self, node: Any) -> bool:
        return isinstance(node, Variable) and (
            self.projected is None or str(node) in self.projected
        )

    def triple(self, s: Any, p: Any, o: Any) -> None:
        if isinstance(s, URIRef):
            self.resources.append(str(s))
        if self.mode is MarkingMode.GERBIL:
            if not isinstance(p, URIRef):
                raise _Stop("a property path or variable predicate stops GERBIL's walk")
            self.properties.append(str(p))
            if isinstance(o, URIRef):
                self.resources.append(str(o))
            obj = _gerbil_literal(o) if isinstance(o, RdfLiteral) else _term(o)
            subject = _term(s) if isinstance(s, URIRef) else None
            self.relations.append(Relation(subject, str(p), obj))
            return
        if self._is_projected(s) and isinstance(o, URIRef) and _states_type(p):
            self.item_types.append(str(o))
            if isinstance(p, URIRef):
                self.relations.append(Relation(None, str(p), _term(o)))
            else:
                self.relations.extend(_path_relations(None, p, _term(o)))
            return
        if isinstance(o, URIRef):
            self.resources.append(str(o))
        if isinstance(p, Path | URIRef):
            self.properties.extend(_path_iris(p))
            self.relations.extend(_path_relations(_term(s), p, _term(o)))
        else:
            self.relations.append(Relation(_term(s), None, _term(o)))

    def walk(self, node: Any) -> None:
        if isinstance(node, CompValue):
            if node.name == "TriplesBlock":
                for flat in node.triples:
                    for i in range(0, len(flat) - 2, 3):
                        self.triple(flat[i], flat[i + 1], flat[i + 2])
                return
            if self.mode is MarkingMode.GERBIL:
                if node.name in ("Filter", "Bind", "InlineData", "ValuesClause"):
                    return
                if node.name in (
                    "SelectQuery",
                    "SubSelect",
                    "AskQuery",
                    "ConstructQuery",
                    "DescribeQuery",
                ):
                    self.walk(node.where)
                    return
            for key, value in node.items():
                if key != "template":
                    self.walk(value)
        elif isinstance(node, list | ParseResults):
            for item in node:
                self.walk(item)


def _unique(items: list[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(items))


# Queries whose markings are kept (a few MB): parsing a query is scoring's costliest step, and
# the same gold and system queries come back in every evaluation of a dataset.
MARKINGS_CACHE = 20_000


@functools.lru_cache(maxsize=MARKINGS_CACHE)
def query_markings(sparql: str | None, mode: MarkingMode = MarkingMode.STRICT) -> Markings:
    """Return the markings a SPARQL query gives in ``mode`` (kept per process: a pure function
    of its arguments, whose result is immutable).

    A query that does not parse gives no markings and a ``problem``; in ``GERBIL`` mode a property
    path or variable predicate gives the markings found before it and a ``problem``.

    >>> m = query_markings("SELECT ?c WHERE { ?c a <http://dbpedia.org/ontology/City> }")
    >>> m.answer_item_types, m.properties
    (('http://dbpedia.org/ontology/City',), ())
    """
    if not sparql or not sparql.strip():
        return Markings(problem="no SPARQL query")
    text = gerbil_text_rewrite(sparql) if mode is MarkingMode.GERBIL else sparql
    try:
        query, select_all = _parse(text, mode)
    except ValueError as exc:
        return Markings(problem=str(exc))
    projected: set[str] | None = set()
    if select_all:
        projected = None
    elif query.name == "SelectQuery":
        projected = {str(v.var or v.evar) for v in query.projection}
    collector = _Collector(mode, projected)
    problem = None
    try:
        collector.walk(query)
    except _Stop as stop:
        problem = str(stop)
    if mode is MarkingMode.GERBIL:
        return Markings(
            tuple(collector.resources),
            tuple(collector.properties),
            tuple(collector.relations),
            (),
            problem,
        )
    return Markings(
        _unique(collector.resources),
        _unique(collector.properties),
        _unique(collector.relations),
        _unique(collector.item_types),
        problem,
    )

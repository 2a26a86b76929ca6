"""Serialise RDF documents in a negotiated form, JSON-LD compacted with an embedded context.

pyoxigraph writes expanded JSON-LD; pyld compacts it with the prefixes of the vocabularies the
document uses (the whole table is published at ``/context.jsonld``), and the compacted document
carries that context inline, so a JSON-LD processor reads it offline and wherever the server
answers. Compaction costs milliseconds, so callers cache documents per store generation. A
document is a graph: N-Quads and TriG chosen by ``Accept`` hold its triples in the default
graph; asked for by name (``.nq``, ``?format=nq``) they keep each triple's graph.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from pyld import jsonld
from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad, RdfFormat, Triple, serialize

from server.web.representations import JSONLD, QUAD_FORMATS, Representation
from vocab.prefixes import PUBLISHED
from vocab.standard import (
    RDF,
)

# In Turtle and TriG output: a string literal, an IRI, or any other run of non-space text.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|<[^>]*>|[^\s"<]+')
_ESCAPE = re.compile(r"\\(.)")


def _full_iri(token: str) -> str:
    prefix, colon, local = token.partition(":")
    namespace = PUBLISHED.get(prefix)
    if not colon or namespace is None or "\\" not in local:
        return token
    tail = ""
    while local and local[-1] in ";,." and not local.endswith("\\" + local[-1]):
        local, tail = local[:-1], local[-1] + tail
    plain = _ESCAPE.sub(r"\1", local)
    return f"<{namespace}{plain}>{tail}"


def plain_prefixed_names(text: str) -> str:
    r"""Write prefixed names that need backslash escapes (``gerbil:avg_millis\/doc``) as full
    IRIs: Turtle allows the escapes, but rdflib.js and other readers stop at them.

    >>> plain_prefixed_names('<a> gerbil:avg_millis\\/doc "x\\\\/y" .')
    '<a> <http://w3id.org/gerbil/vocab#avg_millis/doc> "x\\\\/y" .'
    """
    if "\\" not in text:
        return text
    if '"""' in text:
        # a long string may span lines: read the whole text as tokens
        return _TOKENS.sub(_plain_token, text)
    # The serialiser writes every other literal on one line: only lines with a backslash
    # can hold an escaped name (on a 47 kB experiment document, 1.4 ms -> 0.2 ms).
    return "\n".join(
        _TOKENS.sub(_plain_token, line) if "\\" in line else line for line in text.split("\n")
    )


def _plain_token(match: re.Match[str]) -> str:
    token = match.group()
    return token if token[0] in '"<' else _full_iri(token)


def context_document() -> dict[str, dict[str, str]]:
    """Return the JSON-LD context document (prefix definitions)."""
    return {"@context": dict(PUBLISHED)}


def _triples(quads: Iterable[Quad]) -> list[Triple]:
    # The same triple may sit in two graphs; a triple document states it once.
    return list(dict.fromkeys(q.triple for q in quads))


def _expanded(triples: Sequence[Triple]) -> list[dict[str, Any]]:
    # pyoxigraph writes expanded JSON-LD quickly but keeps rdf:type as a property; JSON-LD
    # readers expect @type, so move it (pyld's own from_rdf does the same, ten times slower).
    nodes: list[dict[str, Any]] = json.loads(serialize(triples, format=JSONLD.rdf_format) or b"[]")
    rdf_type = RDF.type.value
    for node in nodes:
        types = node.pop(rdf_type, None)
        if types is not None:
            if all("@id" in t for t in types):
                node["@type"] = [t["@id"] for t in types]
            else:
                node[rdf_type] = types
    return nodes


def _used_context(triples: Sequence[Triple]) -> dict[str, dict[str, str]]:
    # Compacting against only the prefixes a document uses gives the same result as the full
    # context (unused prefix definitions never apply) and saves most of pyld's time.
    used: set[str] = set()
    for triple in triples:
        for term in (triple.subject, triple.predicate, triple.object):
            iri = getattr(term, "value", "") if isinstance(term, NamedNode) else ""
            datatype = term.datatype.value if isinstance(term, Literal) else ""
            for prefix, namespace in PUBLISHED.items():
                if iri.startswith(namespace) or datatype.startswith(namespace):
                    used.add(prefix)
    return {"@context": {p: n for p, n in PUBLISHED.items() if p in used}}


def compact_jsonld(triples: Sequence[Triple]) -> bytes:
    """Return ``triples`` as compacted JSON-LD with its context embedded."""
    context = _used_context(triples)
    compacted: dict[str, Any] = jsonld.compact(_expanded(triples), context, {"skipExpansion": True})
    compacted["@context"] = context["@context"]
    return json.dumps(compacted, ensure_ascii=False, indent=1).encode("utf-8")


def serialize_document(
    quads: Sequence[Quad], rep: Representation, *, as_graph: bool = True
) -> bytes:
    """Serialise a document's quads in the RDF form ``rep``.

    Args:
        quads: the document.
        rep: the chosen RDF representation (not HTML).
        as_graph: write N-Quads and TriG as triples in the default graph (what ``Accept``
            gets); ``False`` keeps each quad's graph (the ``.nq``/``.trig`` document URLs).

    Raises:
        ValueError: if ``rep`` is not an RDF form.
    """
    if rep.rdf_format is None:
        raise ValueError(f"{rep.label} is not an RDF serialisation")
    if rep in QUAD_FORMATS and not as_graph:
        return _written(serialize(quads, format=rep.rdf_format, prefixes=PUBLISHED), rep)
    triples = _triples(quads)
    if rep == JSONLD:
        return compact_jsonld(triples)
    if rep in QUAD_FORMATS:
        in_default = [Quad(t.subject, t.predicate, t.object, DefaultGraph()) for t in triples]
        return _written(serialize(in_default, format=rep.rdf_format, prefixes=PUBLISHED), rep)
    return _written(serialize(triples, format=rep.rdf_format, prefixes=PUBLISHED), rep)


def _written(data: bytes | None, rep: Representation) -> bytes:
    if data is None:
        return b""
    if rep.rdf_format not in (RdfFormat.TURTLE, RdfFormat.TRIG) or b"\\" not in data:
        return data
    return plain_prefixed_names(data.decode("utf-8")).encode("utf-8")

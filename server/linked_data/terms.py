"""Turn RDF terms and quads into plain values the templates render (links, labels, tables).

IRIs under the base IRI become site-relative links (so a copy of the site served elsewhere
keeps working), vocabulary terms link to ``/vocab#Term``, other IRIs stay external. Literal
text is passed as data: the templates autoescape it, and nothing here marks markup safe.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from urllib.parse import urlencode

from pyoxigraph import BlankNode, Literal, NamedNode, Quad, RdfFormat, parse

from vocab.prefixes import PUBLISHED
from vocab.project import QAB
from vocab.standard import DCTERMS, RDFS, XSD

_XSD = XSD.iri


@dataclass(frozen=True, slots=True)
class TermView:
    """One RDF term ready for display."""

    kind: str  # uri | bnode | literal
    value: str
    label: str
    href: str | None = None
    lang: str = ""
    datatype: str = ""


@dataclass(frozen=True, slots=True)
class PropertyRow:
    """One property of a subject with all its values."""

    predicate: TermView
    values: tuple[TermView, ...]


@dataclass(frozen=True, slots=True)
class SubjectView:
    """One subject of a document and its properties."""

    subject: TermView
    rows: tuple[PropertyRow, ...]


def curie(iri: str) -> str:
    """Return ``prefix:local`` for IRIs in a known namespace, else the IRI.

    >>> curie("http://purl.org/dc/terms/title")
    'dct:title'
    """
    for prefix, namespace in PUBLISHED.items():
        if iri.startswith(namespace) and len(iri) > len(namespace):
            return f"{prefix}:{iri[len(namespace) :]}"
    return iri


def href(iri: str, base: str) -> str | None:
    """Return the link target for ``iri``: a site path for our IRIs, else the IRI itself.

    Only ``http``/``https`` IRIs become links: an IRI such as ``javascript:...`` that came from
    the store is shown as text, never as a clickable target (stored XSS).

    >>> href("http://x.test/experiment/1", "http://x.test")
    '/experiment/1'
    >>> href("https://w3id.org/qabench/vocab#Experiment", "http://x.test")
    '/vocab#Experiment'
    >>> href("javascript:alert(1)", "http://x.test") is None
    True
    """
    if iri.startswith(base + "/"):
        return iri[len(base) :]
    if iri.startswith(QAB.iri):
        return "/vocab#" + iri[len(QAB.iri) :]
    if iri.lower().startswith(("http://", "https://")):
        return iri
    return None


@functools.cache
def vocabulary_labels() -> dict[str, str]:
    """Return the ``rdfs:label`` of every term of our vocabulary (read once)."""
    data = resources.files("vocab").joinpath("project.ttl").read_bytes()
    return {
        t.subject.value: t.object.value
        for t in parse(data, RdfFormat.TURTLE)
        if t.predicate == RDFS.label
        and isinstance(t.subject, NamedNode)
        and isinstance(t.object, Literal)
        and t.object.language in (None, "en")
    }


# Predicates whose values name a resource for people, best first.
_LABELS = (DCTERMS.title, RDFS.label)


def labels_in(quads: Iterable[Quad]) -> dict[str, str]:
    """Return a label for every IRI ``quads`` give a title or label (titles win)."""
    found: dict[str, tuple[int, str]] = {}
    for quad in quads:
        if quad.predicate in _LABELS and isinstance(quad.object, Literal):
            rank = _LABELS.index(quad.predicate)
            key = quad.subject.value if isinstance(quad.subject, NamedNode) else ""
            if key and (key not in found or rank < found[key][0]):
                found[key] = (rank, quad.object.value)
    return {k: v for k, (_, v) in found.items()}


def term_view(term: object, base: str, labels: dict[str, str] | None = None) -> TermView:
    """Return the display form of an RDF term; IRIs show their label when one is known
    (``labels``, else our vocabulary's), else a prefixed name, else the IRI."""
    if isinstance(term, NamedNode):
        label = (labels or {}).get(term.value) or vocabulary_labels().get(term.value)
        return TermView("uri", term.value, label or curie(term.value), href(term.value, base))
    if isinstance(term, BlankNode):
        return TermView("bnode", term.value, "_:" + term.value)
    if isinstance(term, Literal):
        datatype = "" if term.language else curie(term.datatype.value)
        if datatype == "xsd:string":
            datatype = ""
        return TermView("literal", term.value, term.value, None, term.language or "", datatype)
    return TermView("literal", str(term), str(term))


def title_of(quads: list[Quad], iri: NamedNode) -> str:
    """Return the best human title of ``iri`` in ``quads`` (title, label, identifier, IRI)."""
    for predicate in (DCTERMS.title, RDFS.label, DCTERMS.identifier):
        for quad in quads:
            if quad.subject == iri and quad.predicate == predicate:
                return str(getattr(quad.object, "value", quad.object))
    return iri.value


def describe(quads: list[Quad], focus: NamedNode, base: str | None = None) -> list[SubjectView]:
    """Group ``quads`` by subject (``focus`` first), then by predicate.

    Args:
        quads: the document.
        focus: the resource the document is about (listed first).
        base: the base IRI for links (defaults to the focus IRI's scheme and host).
    """
    if base is None:
        scheme, _, rest = focus.value.partition("://")
        base = f"{scheme}://{rest.split('/', 1)[0]}"
    grouped: dict[str, dict[str, list[object]]] = {}
    terms: dict[str, object] = {}
    labels = labels_in(quads)
    for quad in quads:
        key = str(quad.subject)
        terms[key] = quad.subject
        values = grouped.setdefault(key, {}).setdefault(quad.predicate.value, [])
        if quad.object not in values:
            values.append(quad.object)
    order = sorted(grouped, key=lambda k: (k != str(focus), k))
    views = []
    for key in order:
        rows = tuple(
            PropertyRow(
                term_view(NamedNode(p), base),
                tuple(term_view(v, base, labels) for v in sorted(vals, key=str)),
            )
            for p, vals in sorted(grouped[key].items())
        )
        views.append(SubjectView(term_view(terms[key], base, labels), rows))
    return views


def query_link(query: str, fmt: str | None = None) -> str:
    """Return the ``/sparql`` URL that runs ``query`` (optionally in format ``fmt``)."""
    params = {"query": query}
    if fmt:
        params["format"] = fmt
    return "/sparql?" + urlencode(params)

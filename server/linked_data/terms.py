"""Turn RDF terms and quads into plain values the templates render (links, labels, tables).

IRIs under the base IRI become site-relative links (so a copy of the site served elsewhere
keeps working), vocabulary terms link to ``/vocab#Term``, other IRIs stay external. Literal
text is passed as data: the templates autoescape it, and nothing here marks markup safe.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyoxigraph import BlankNode, Literal, NamedNode, Quad

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


def term_view(term: object, base: str) -> TermView:
    """Return the display form of an RDF term."""
    if isinstance(term, NamedNode):
        return TermView("uri", term.value, curie(term.value), href(term.value, base))
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
                tuple(term_view(v, base) for v in sorted(vals, key=str)),
            )
            for p, vals in sorted(grouped[key].items())
        )
        views.append(SubjectView(term_view(terms[key], base), rows))
    return views

"""Serve our vocabulary (``vocab/project.ttl``) at ``/vocab``, each term dereferenceable.

``/vocab`` negotiates between HTML (one section per term, anchored ``#Term`` so the hash IRIs
of the namespace land on their definition) and every RDF form; ``/vocab/Term`` is the document
of one term (the same forms); ``/context.jsonld`` is the JSON-LD context our documents use.
The file is read with ``importlib.resources`` and parsed once per store generation.
"""

from __future__ import annotations

import json
from importlib import resources

from flask import Blueprint, Response, render_template
from pyoxigraph import DefaultGraph, NamedNode, Quad, RdfFormat, parse

from server.linked_data.pipeline import Reader, Resource, serve
from server.linked_data.serialisation import context_document
from server.linked_data.terms import describe
from server.services import services
from server.web.negotiation import split_extension
from server.web.problems import Problem
from server.web.representations import PAGE_FORMATS, Representation
from vocab.project import QAB

bp = Blueprint("vocabulary", __name__)


def vocabulary_quads() -> list[Quad]:
    """Return the vocabulary's triples (cached per generation)."""
    svc = services()

    def _parse() -> list[Quad]:
        data = resources.files("vocab").joinpath("project.ttl").read_bytes()
        return [
            Quad(t.subject, t.predicate, t.object, DefaultGraph())
            for t in parse(data, RdfFormat.TURTLE)
        ]

    return svc.remember("vocabulary", _parse)


def _respond(quads: list[Quad], stem: str, extension: str | None, focus: NamedNode) -> Response:
    def _html(reader: Reader, found: list[Quad]) -> str:
        subjects = describe(found, focus, reader.base)
        terms = [
            s
            for s in subjects
            if s.subject.value.startswith(QAB.iri) and s.subject.value != QAB.iri
        ]
        return render_template(
            "vocabulary.html",
            terms=terms,
            focus=focus.value,
            single=focus != NamedNode(QAB.iri),
            local=_local,
            alternates=[(f"{stem}.{r.extension}", r.media_type, r.label) for r in PAGE_FORMATS],
        )

    resource = Resource(
        formats=PAGE_FORMATS,
        load=lambda _reader: quads,
        html=_html,
        quads=lambda _reader, found: found,
        max_age=3600,
        public=True,
    )
    return serve(resource, stem, extension)


def _local(iri: str) -> str:
    return iri[len(QAB.iri) :] if iri.startswith(QAB.iri) else iri


@bp.route("/vocab")
@bp.route("/vocab.<ext>")
def vocabulary(ext: str | None = None) -> Response:
    """The whole vocabulary."""
    return _respond(vocabulary_quads(), "/vocab", ext, NamedNode(QAB.iri))


@bp.route("/vocab/<name>")
def term(name: str) -> Response:
    """One term of the vocabulary: its own triples."""
    local, extension = split_extension(name)
    if local not in QAB:
        raise Problem(404, f"{local!r} is not a term of the qabench vocabulary; see /vocab.")
    iri = QAB[local]
    quads = [q for q in vocabulary_quads() if q.subject == iri]
    return _respond(quads, f"/vocab/{local}", extension, iri)


# The context is a JSON-LD document of its own (no triples, so not one of the RDF forms).
CONTEXT = Representation("context", "application/ld+json", "jsonld", "JSON-LD context")


@bp.route("/context.jsonld")
def context() -> Response:
    """The JSON-LD context of our documents."""
    resource: Resource[None] = Resource(
        formats=(CONTEXT,),
        load=lambda _reader: None,
        extra=((CONTEXT, lambda _reader, _data: json.dumps(context_document(), indent=1)),),
        documents=False,
        max_age=86400,
        public=True,
    )
    return serve(resource, "/context.jsonld")

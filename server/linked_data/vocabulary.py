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

from server.linked_data.serialisation import context_document, serialize_document
from server.linked_data.terms import describe
from server.services import services
from server.web import caching
from server.web.negotiation import HTML, PAGE_FORMATS, decorate, negotiate, split_extension
from server.web.problems import Problem
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

    return svc.cache.get_or_make(svc.generation, "vocabulary", _parse)


def _respond(quads: list[Quad], stem: str, extension: str | None, focus: NamedNode) -> Response:
    svc = services()
    choice = negotiate(PAGE_FORMATS, extension)
    rep = choice.rep
    etag = svc.etag(stem, rep.key, str(choice.as_graph))
    fresh = caching.not_modified(etag, svc.modified)
    if fresh:
        response = Response(status=304)
    elif rep == HTML:
        subjects = describe(quads, focus, svc.base)
        terms = [
            s
            for s in subjects
            if s.subject.value.startswith(QAB.iri) and s.subject.value != QAB.iri
        ]
        body = render_template(
            "vocabulary.html",
            terms=terms,
            focus=focus.value,
            single=focus != NamedNode(QAB.iri),
            local=_local,
            alternates=[(f"{stem}.{r.extension}", r.media_type, r.label) for r in PAGE_FORMATS],
        )
        response = Response(body, mimetype="text/html")
    else:
        data = serialize_document(quads, rep, as_graph=choice.as_graph)
        response = Response(data, mimetype=rep.media_type)
    caching.finish(
        response, etag, weak=rep == HTML, last_modified=svc.modified, not_modified_now=fresh
    )
    response.headers["Cache-Control"] = "public, max-age=3600"
    return decorate(response, stem, PAGE_FORMATS, choice)


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


@bp.route("/context.jsonld")
def context() -> Response:
    """The JSON-LD context of our documents."""
    response = Response(json.dumps(context_document(), indent=1), mimetype="application/ld+json")
    response.headers["Cache-Control"] = "public, max-age=86400"
    return response

"""The pages of datasets (``/dataset/{name}``) and dataset versions (``/dataset/{name}/v{n}``).

The URL says which page it is: a dataset lists its versions, a version its metadata and then its
questions one page at a time (read from the version graph, if the reader may see it). Both
rearrange the resource's document (``server.linked_data.documents``); anything else under
``/dataset/`` (a question, a check report) gets the generic page.
"""

from __future__ import annotations

import re
from collections import defaultdict

from flask import Blueprint, Response, render_template, request
from pyoxigraph import Literal, NamedNode, Quad, QuerySolutions

from server.linked_data.documents import document
from server.linked_data.routes import alternate_links, generic_page, serve_resource
from server.linked_data.terms import TermView, describe, term_view, title_of
from server.pages.pagination import page_number, paginate
from server.services import Services, Visibility
from server.sparql.page import query_link
from store import graphs, queries
from vocab.project import QAB
from vocab.standard import DCTERMS

bp = Blueprint("dataset", __name__)

# /dataset/{name} and /dataset/{name}/v{n}: the two shapes with a page of their own.
_DATASET = re.compile(r"[^/]+")
_VERSION = re.compile(r"[^/]+/v[0-9]+")

Props = dict[NamedNode, list[object]]


def _index(quads: list[Quad]) -> dict[str, Props]:
    out: dict[str, Props] = defaultdict(lambda: defaultdict(list))
    for q in quads:
        out[str(q.subject)][q.predicate].append(q.object)
    return out


def _first(props: Props, predicate: NamedNode) -> object | None:
    values = props.get(predicate)
    return values[0] if values else None


def _views(svc: Services, values: list[object]) -> list[TermView]:
    return [term_view(v, svc.base) for v in values]


def dataset_view(svc: Services, iri: NamedNode, quads: list[Quad], vis: Visibility) -> str:
    """Render a benchmark dataset: metadata and its versions."""
    index = _index(quads)
    versions = []
    for version in index[str(iri)].get(QAB.version, []):
        props = index.get(str(version), {})
        versions.append(
            {
                "link": term_view(version, svc.base),
                "number": _first(props, QAB.versionNumber),
                "questions": _first(props, QAB.questionCount),
                "languages": ", ".join(
                    sorted(str(getattr(v, "value", v)) for v in props.get(DCTERMS.language, []))
                ),
                "sha256": _first(props, QAB.sha256),
            }
        )
    versions.sort(key=lambda v: str(getattr(v["number"], "value", "")))
    focus = [s for s in describe(quads, iri, svc.base) if s.subject.value == iri.value]
    return render_template(
        "dataset.html",
        title=title_of(quads, iri),
        iri=iri.value,
        subjects=focus,
        versions=versions,
        alternates=alternate_links(),
    )


def _question(svc: Services, qiri: NamedNode, graph: NamedNode) -> dict[str, object]:
    props: Props = defaultdict(list)
    for quad in svc.store.quads(qiri, None, None, graph):
        props[quad.predicate].append(quad.object)
    answers: list[object] = []
    for answer_set in props.get(QAB.answerSet, []):
        if isinstance(answer_set, NamedNode):
            for quad in svc.store.quads(answer_set, None, None, graph):
                if quad.predicate in (QAB.answer, QAB.booleanAnswer):
                    answers.append(quad.object)
    # In a stable order of their own: stores return quads in no particular order.
    gold: list[TermView] = [term_view(a, svc.base) for a in sorted(answers, key=str)]
    texts = sorted(
        (t.language or "", t.value) for t in props.get(QAB.text, []) if isinstance(t, Literal)
    )
    return {
        "link": term_view(qiri, svc.base),
        "id": getattr(_first(props, QAB.questionId), "value", qiri.value.rsplit("/", 1)[-1]),
        "texts": texts,
        "keywords": [getattr(k, "value", "") for k in props.get(QAB.keywords, [])],
        "answer_type": [term_view(t, svc.base) for t in props.get(QAB.answerType, [])],
        "sparql": [getattr(s, "value", "") for s in props.get(QAB.sparql, [])],
        "gold": gold,
    }


def _questions(svc: Services, graph: NamedNode) -> list[NamedNode]:
    result = svc.store.query(
        queries.load("page_version_questions"), default_graph=[graph], named_graphs=[]
    )
    assert isinstance(result, QuerySolutions)
    return [row["question"] for row in result if isinstance(row["question"], NamedNode)]


def version_view(svc: Services, iri: NamedNode, quads: list[Quad], vis: Visibility) -> str:
    """Render a dataset version: metadata, then its questions one page at a time."""
    focus = [s for s in describe([q for q in quads if q.subject == iri], iri, svc.base)]
    graph = next((q.object for q in quads if q.subject == iri and q.predicate == QAB.graph), None)
    ordered: list[NamedNode] = []
    if isinstance(graph, NamedNode) and vis.can_see(graph):
        # The ordered question list of a version is read once per store generation.
        ordered = svc.cache.get_or_make(
            svc.generation, f"version-questions {graph.value}", lambda: _questions(svc, graph)
        )
    page = paginate(ordered, len(ordered), page_number(), svc.config.server.page_size)
    questions = [_question(svc, q, graph) for q in page.rows if isinstance(graph, NamedNode)]
    links = page.neighbours(request.path)
    sparql = (
        queries.load("page_version_questions").replace(
            "SELECT", f"# version graph: {graph}\nSELECT", 1
        )
        if graph is not None
        else ""
    )
    return render_template(
        "version.html",
        title=title_of(quads, iri),
        iri=iri.value,
        subjects=focus,
        questions=questions,
        page=page.number,
        pages=page.pages,
        total=page.total,
        prev_url=links.get("prev"),
        next_url=links.get("next"),
        alternates=alternate_links(),
        query_href=query_link(sparql) if sparql else None,
    )


def dataset_page(svc: Services, iri: NamedNode, vis: Visibility) -> str:
    """Render what a URL under ``/dataset/`` names: a dataset, a version, or anything else.

    A version's page reads the version's catalog entry and the page of questions it shows,
    never the whole version graph (its RDF forms carry that), and is rendered once per store
    generation, page and reader.

    Raises:
        Problem: 404 when the reader can see nothing about ``iri``, or the page is past the end.
    """
    rest = iri.value.removeprefix(f"{svc.base}/dataset/")
    if _DATASET.fullmatch(rest):
        quads = document(svc, iri, vis)
        if quads:
            return dataset_view(svc, iri, quads, vis)
    elif _VERSION.fullmatch(rest):
        catalog = graphs.catalog_graph(svc.base)
        entry = list(svc.store.quads(iri, None, None, catalog)) if vis.can_see(catalog) else []
        if entry:
            return svc.cache.get_or_make(
                svc.generation,
                f"version-page {request.full_path} {vis.key}",
                lambda: version_view(svc, iri, entry, vis),
            )
    return generic_page(svc, iri, vis)


@bp.route("/dataset/<path:rest>")
def dataset(rest: str) -> Response:
    """A dataset, one of its versions, or one question of a version."""
    return serve_resource("dataset", rest, dataset_page)

"""HTML views of datasets and dataset versions, registered by RDF class.

``resources`` calls these with the document it already read from visible graphs; they only
rearrange that document (and, for a version's questions, read the page of questions asked for
from the version graph the document came from). Experiments, tasks and systems have pages of
their own that read the store directly (``experiment_views``, ``task_views``, ``system_views``).
"""

from __future__ import annotations

from collections import defaultdict

from flask import Flask, render_template, request
from pyoxigraph import Literal, NamedNode, Quad, QuerySolutions

from server.linked_data.routes import alternate_links, register_html_view
from server.linked_data.terms import TermView, describe, term_view, title_of
from server.services import Services, Visibility
from server.sparql.page import query_link
from store import queries
from vocab.project import QAB
from vocab.standard import DCTERMS

PAGE_SIZE = 50

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
    gold: list[TermView] = []
    for answer_set in props.get(QAB.answerSet, []):
        if isinstance(answer_set, NamedNode):
            for quad in svc.store.quads(answer_set, None, None, graph):
                if quad.predicate in (QAB.answer, QAB.booleanAnswer):
                    gold.append(term_view(quad.object, svc.base))
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


def version_view(svc: Services, iri: NamedNode, quads: list[Quad], vis: Visibility) -> str:
    """Render a dataset version: metadata, then its questions one page at a time."""
    focus = [s for s in describe([q for q in quads if q.subject == iri], iri, svc.base)]
    graph = next((q.object for q in quads if q.subject == iri and q.predicate == QAB.graph), None)
    questions: list[dict[str, object]] = []
    total = 0
    page = max(request.args.get("page", 1, type=int) or 1, 1)
    if isinstance(graph, NamedNode) and vis.can_see(graph):
        result = svc.store.query(
            queries.load("page_version_questions"), default_graph=[graph], named_graphs=[]
        )
        assert isinstance(result, QuerySolutions)
        rows = list(result)
        total = len(rows)
        for row in rows[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]:
            questions.append(_question(svc, row["question"], graph))
    pages = max((total + PAGE_SIZE - 1) // PAGE_SIZE, 1)
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
        page=page,
        pages=pages,
        total=total,
        alternates=alternate_links(),
        query_href=query_link(sparql) if sparql else None,
    )


def register(app: Flask) -> None:
    """Register the dataset views with the resource views (experiments: ``experiment_views``)."""
    register_html_view(app, QAB.Dataset, dataset_view)
    register_html_view(app, QAB.DatasetVersion, version_view)

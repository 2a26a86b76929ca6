"""The pages of datasets (``/dataset/{name}``) and dataset versions (``/dataset/{name}/v{n}``).

A dataset opens with its title and its versions: questions, languages, answer types, the check
report's counts and a link to each version's results. A version opens with the same facts for
itself and its check report (findings by severity and code), then its questions in their
natural order (file position, then the id's natural order) one page at a time, each with its
texts, gold answers, query and the findings that concern it. Both read the catalog entry, the
check graph and the page of questions shown, never a whole version graph (its RDF forms carry
that). Anything else under ``/dataset/`` (a question, a check report) gets the generic page.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from flask import Blueprint, Response, render_template, request
from pyoxigraph import Literal, NamedNode, QuerySolutions

from evaluators.datasets.library import VersionInfo, list_versions
from evaluators.model import question_order
from server.linked_data.routes import alternate_links, generic_page, serve_resource
from server.linked_data.terms import TermView, query_link, term_view, vocabulary_labels
from server.pages.task_rows import short_view
from server.services import Services, Visibility
from server.web.pagination import page_number, paginate
from server.web.problems import Problem
from store import graphs, queries
from vocab import iris
from vocab.project import QAB

bp = Blueprint("dataset", __name__)

# The finding severities, gravest first.
SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True, slots=True)
class Finding:
    """One finding of a version's check report."""

    code: str
    severity: str
    message: str
    question: str | None


@dataclass(frozen=True, slots=True)
class Version:
    """What the pages show of one version: its catalog facts, answer types and check."""

    info: VersionInfo
    answer_types: tuple[tuple[str, int], ...]
    findings: tuple[Finding, ...] | None  # None: never checked
    by_question: dict[str, list[Finding]] = field(default_factory=dict)

    @property
    def path(self) -> str:
        """Return the version's page."""
        return f"/dataset/{iris.segment(self.info.name)}/v{self.info.version}"

    @property
    def severity_counts(self) -> list[tuple[str, int]]:
        """Return how many findings of each severity there are (gravest first)."""
        counts = Counter(f.severity for f in self.findings or ())
        return [(s, counts[s]) for s in SEVERITIES if counts[s]]

    @property
    def code_counts(self) -> list[tuple[str, str, int]]:
        """Return ``(severity, code, count)`` of every kind of finding, gravest first."""
        counts = Counter((f.severity, f.code) for f in self.findings or ())
        order = {s: n for n, s in enumerate(SEVERITIES)}
        ranked = sorted(counts.items(), key=lambda kv: (order.get(kv[0][0], 9), -kv[1], kv[0]))
        return [(sev, code, n) for (sev, code), n in ranked]

    @property
    def general(self) -> list[Finding]:
        """Return the findings about the whole version (no question)."""
        return [f for f in self.findings or () if f.question is None]


def _text(store_value: object) -> str:
    return store_value.value if isinstance(store_value, Literal | NamedNode) else ""


def _answer_types(svc: Services, version: NamedNode) -> tuple[tuple[str, int], ...]:
    catalog = graphs.catalog_graph(svc.base)
    labels = vocabulary_labels()
    found: list[tuple[str, int]] = []
    for link in svc.store.quads(version, QAB.answerTypeCount, None, catalog):
        node = link.object
        if not isinstance(node, NamedNode):
            continue
        props = {q.predicate: q.object for q in svc.store.quads(node, None, None, catalog)}
        kind, count = props.get(QAB.answerType), props.get(QAB.count)
        if isinstance(kind, NamedNode) and isinstance(count, Literal):
            label = labels.get(kind.value, kind.value.rsplit("#", 1)[-1]).lower()
            found.append((label, int(count.value)))
    return tuple(sorted(found, key=lambda kv: (-kv[1], kv[0])))


def _findings(svc: Services, info: VersionInfo) -> tuple[Finding, ...] | None:
    graph = graphs.check_graph(svc.base, info.name, info.version)
    report = iris.sub_iri(NamedNode(info.iri), "check")
    nodes = [q.object for q in svc.store.quads(report, QAB.finding, None, graph)]
    if not nodes and next(svc.store.quads(report, None, None, graph), None) is None:
        return None
    found = []
    for node in nodes:
        if not isinstance(node, NamedNode):
            continue
        props = {q.predicate: q.object for q in svc.store.quads(node, None, None, graph)}
        position = props.get(QAB.position)
        question = props.get(QAB.questionId)
        finding = Finding(
            _text(props.get(QAB.code)),
            _text(props.get(QAB.severity)),
            _text(props.get(QAB.message)),
            _text(question) if question is not None else None,
        )
        found.append((int(_text(position) or 0), finding))
    return tuple(f for _, f in sorted(found, key=lambda pf: pf[0]))


def _version(svc: Services, info: VersionInfo, vis: Visibility) -> Version:
    check = graphs.check_graph(svc.base, info.name, info.version)
    findings = _findings(svc, info) if vis.can_see(check) else None
    by_question: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings or ():
        if finding.question is not None:
            by_question[finding.question].append(finding)
    return Version(info, _answer_types(svc, NamedNode(info.iri)), findings, dict(by_question))


def _versions(svc: Services, vis: Visibility, name: str) -> list[Version]:
    if not vis.can_see(graphs.catalog_graph(svc.base)):
        return []
    return svc.remember(
        f"dataset-versions {name} {vis.key}",
        lambda: [_version(svc, info, vis) for info in list_versions(svc.store, svc.base, name)],
    )


def dataset_page(svc: Services, iri: NamedNode, vis: Visibility) -> str:
    """Render what a URL under ``/dataset/`` names: a dataset, a version, or anything else.

    Raises:
        Problem: 404 when the reader can see nothing about ``iri``, or the page is past the end.
    """
    ref = iris.parse(svc.base, iri.value)
    if ref is not None and ref.exact and ref.kind in ("dataset", "version"):
        versions = _versions(svc, vis, ref.parts[0])
        if ref.kind == "dataset" and versions:
            return _dataset_view(svc, iri, versions)
        chosen = [v for v in versions if v.info.version == ref.number]
        if ref.kind == "version" and chosen:
            return _version_view(svc, iri, chosen[0], vis)
    return generic_page(svc, iri, vis)


def _dataset_view(svc: Services, iri: NamedNode, versions: list[Version]) -> str:
    latest = versions[-1].info
    return render_template(
        "dataset.html",
        title=latest.title or latest.name,
        iri=iri.value,
        name=latest.name,
        versions=versions,
        alternates=alternate_links(),
    )


@dataclass(frozen=True, slots=True)
class QuestionView:
    """One question as the version page shows it."""

    link: TermView
    id: str
    position: int
    texts: list[tuple[str, str]]
    keywords: list[str]
    answer_types: list[str]
    sparql: list[str]
    gold: list[TermView]
    findings: list[Finding]


def _ordered_questions(svc: Services, graph: NamedNode) -> list[tuple[NamedNode, int, str]]:
    """Return the questions of a version graph in natural order: (IRI, position, id)."""
    result = svc.store.query(
        queries.load("page_version_questions"), default_graph=[graph], named_graphs=[]
    )
    assert isinstance(result, QuerySolutions)
    found = []
    for row in result:
        node, position = row["question"], row["position"]
        if isinstance(node, NamedNode):
            ref = iris.parse(svc.base, node.value)
            qid = ref.parts[2] if ref is not None and ref.kind == "question" else node.value
            text = _text(position)
            found.append((node, int(text) if text.lstrip("-").isdigit() else 1 << 30, qid))
    found.sort(key=lambda q: (q[1], question_order(q[2])))
    return found


def _question(
    svc: Services, node: NamedNode, position: int, qid: str, graph: NamedNode, version: Version
) -> QuestionView:
    props: dict[NamedNode, list[object]] = defaultdict(list)
    for quad in svc.store.quads(node, None, None, graph):
        props[quad.predicate].append(quad.object)
    answers: list[object] = []
    for answer_set in props.get(QAB.answerSet, []):
        if isinstance(answer_set, NamedNode):
            for quad in svc.store.quads(answer_set, None, None, graph):
                if quad.predicate in (QAB.answer, QAB.booleanAnswer):
                    answers.append(quad.object)
    labels = vocabulary_labels()
    texts = sorted(
        (t.language or "", t.value) for t in props.get(QAB.text, []) if isinstance(t, Literal)
    )
    own_id = _text(next(iter(props.get(QAB.questionId, [])), None)) or qid
    return QuestionView(
        term_view(node, svc.base),
        own_id,
        position,
        texts,
        [_text(k) for k in props.get(QAB.keywords, [])],
        [labels.get(_text(t), _text(t).rsplit("#", 1)[-1]) for t in props.get(QAB.answerType, [])],
        [_text(s) for s in props.get(QAB.sparql, [])],
        # In a stable order of their own: stores return quads in no particular order.
        [short_view(a, svc.base) for a in sorted(answers, key=str)],  # type: ignore[arg-type]
        version.by_question.get(own_id, []),
    )


def _version_view(svc: Services, iri: NamedNode, version: Version, vis: Visibility) -> str:
    graph = NamedNode(version.info.graph)
    ordered: list[tuple[NamedNode, int, str]] = []
    if vis.can_see(graph):
        # The ordered question list of a version is read once per store generation.
        ordered = svc.remember(
            f"version-questions {graph.value}",
            lambda: _ordered_questions(svc, graph),
        )
    page = paginate(ordered, len(ordered), page_number(), svc.config.server.page_size)
    questions = [_question(svc, n, p, q, graph, version) for n, p, q in page.rows]
    links = page.neighbours(request.path)
    sparql = queries.load("page_version_questions").replace(
        "SELECT", f"# version graph: {graph}\nSELECT", 1
    )
    return render_template(
        "version.html",
        title=f"{version.info.title or version.info.name} v{version.info.version}",
        iri=iri.value,
        version=version,
        questions=questions,
        page=page,
        prev_url=links.get("prev"),
        next_url=links.get("next"),
        alternates=alternate_links(),
        query_href=query_link(sparql),
    )


@bp.route("/dataset/<path:rest>")
def dataset(rest: str) -> Response:
    """A dataset, one of its versions, or one question of a version."""
    if not rest.strip("/"):
        raise Problem(404, "Name a dataset after /dataset/.")
    return serve_resource("dataset", rest, dataset_page)

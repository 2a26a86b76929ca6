"""Documents sized for their readers: experiments, tasks and linked graphs a page at a time.

An experiment graph holds aggregate results and, per question, observations and diagnostics
(hundreds of thousands of quads for a few tasks on a large dataset). Its documents split it:

* the experiment's document holds the experiment, its tasks, systems, asking runs and
  aggregate results with their cube structures, ``DOCUMENT_TASKS`` tasks a page;
* a task's document holds the task and its aggregate results, then the per-question results
  (question results, their observations, undefined values and matched pairs, the stored
  reply) in the dataset's natural order, cut by quads: a page holds at most
  ``DOCUMENT_TASK_QUADS`` quads whatever one question holds (a system answering thousands of
  IRIs per question made a page of 100 questions exceed every bound, issue 41), so one
  question's quads may continue on the next page. Where each page starts is laid out once
  per store generation (``task_layout``: one pass counting each question's quads); a page
  then reads only its own questions;
* a resource naming a graph with ``qab:graph`` (a dataset version, a knowledge base), and a
  graph's own document, hold ``DOCUMENT_GRAPH_QUADS`` of the graph's quads a page.

Every page says where it is (``with_view``: a ``hydra:view``; ``neighbours``: the ``Link``
entries); nothing is cut without a link to the rest. Reads follow the subjects a page holds,
except the one pass over a task's observations that groups them by question (``remember``ed).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import islice
from typing import Protocol, TypeVar

from pyoxigraph import BlankNode, DefaultGraph, NamedNode, Quad

from evaluators.model import question_order
from store.layouts import PAGE_QUADS, GraphLayout
from store.protocol import RdfStore
from vocab import iris
from vocab.project import QAB
from vocab.qb import QB
from vocab.standard import DCTERMS, HYDRA, PROV, RDF

# Tasks of an experiment's page, and quads of a task's or a graph's page (pages stay far under
# ``MAX_DOCUMENT_QUADS``: a task's aggregate results are about 300 quads).
DOCUMENT_TASKS = 50
DOCUMENT_TASK_QUADS = 50_000
DOCUMENT_GRAPH_QUADS = PAGE_QUADS
# No document page holds more (pages keep them far smaller; this bounds what nothing pages).
MAX_DOCUMENT_QUADS = 250_000


@dataclass(frozen=True, slots=True)
class Part:
    """One page of a document: its quads, number and page count (``exact`` False: at least)."""

    quads: list[Quad]
    page: int = 1
    pages: int = 1
    exact: bool = True


T = TypeVar("T")
_NODES = (NamedNode, BlankNode)


class Source(Protocol):
    """A store (or a view), its base IRI and a memo kept while the data stays the same:
    ``server.services.Services``, or a query worker's view (``part_jobs``)."""

    @property
    def store(self) -> RdfStore: ...

    @property
    def base(self) -> str: ...

    def remember(self, key: str, make: Callable[[], T]) -> T: ...

    def remember_graph(
        self, graph: NamedNode, key: str, make: Callable[[], T], wait: float | None = None
    ) -> T: ...


def page_count(total: int, size: int) -> int:
    """Return how many pages of ``size`` rows ``total`` rows fill (an empty list has one).

    >>> page_count(0, 50), page_count(50, 50), page_count(51, 50)
    (1, 1, 2)
    """
    return max(1, -(-total // size))


def _followed(svc: Source, node: object, experiment: str) -> bool:
    """Return whether the aggregate part of ``experiment``'s documents follows a link to
    ``node``: anything in the graph but the per-question results and replies."""
    if isinstance(node, BlankNode):
        return True
    if not isinstance(node, NamedNode):
        return False
    ref = iris.parse(svc.base, node.value)
    return ref is None or ref.experiment != experiment or "question" not in ref.rest


def _walk(
    svc: Source,
    start: Iterable[NamedNode | BlankNode],
    graph: NamedNode,
    experiment: str,
    skip: Iterable[NamedNode] = (),
) -> dict[Quad, None]:
    """Collect the quads of ``start`` and of the aggregate nodes they link to (never those
    of ``skip``: the tasks of other pages)."""
    out: dict[Quad, None] = {}
    # every node met, once: whether it is followed is decided once (the same classes, measures
    # and dimension values are linked from every observation)
    met: set[str] = {str(node) for node in skip}
    todo: deque[NamedNode | BlankNode] = deque()
    for node in start:
        if str(node) not in met:
            met.add(str(node))
            todo.append(node)
    quads, skipped = svc.store.quads, QAB.questionResult
    while todo:
        for quad in quads(todo.popleft(), None, None, graph):
            if quad.predicate == skipped:
                continue
            out[quad] = None
            obj = quad.object
            if isinstance(obj, _NODES) and (key := str(obj)) not in met:
                met.add(key)
                if _followed(svc, obj, experiment):
                    todo.append(obj)
    return out


def _aggregates(svc: Source, task: NamedNode, graph: NamedNode) -> list[NamedNode]:
    """Return a task's data sets and the observations of its aggregate ones."""
    found: list[NamedNode] = []
    for made in svc.store.quads(None, PROV.wasGeneratedBy, task, graph):
        ds = made.subject
        if not isinstance(ds, NamedNode):
            continue
        found.append(ds)
        if next(svc.store.quads(ds, RDF.type, QAB.AggregateDataSet, graph), None):
            found += [
                q.subject
                for q in svc.store.quads(None, QB.dataSet, ds, graph)
                if isinstance(q.subject, NamedNode)
            ]
    return found


def _tasks(svc: Source, experiment: NamedNode, graph: NamedNode) -> list[NamedNode]:
    found = [
        q.object
        for q in svc.store.quads(experiment, QAB.task, None, graph)
        if isinstance(q.object, NamedNode)
    ]
    return sorted(found, key=lambda t: (iris.task_number_of(t.value) or 0, t.value))


def experiment_part(svc: Source, iri: NamedNode, graph: NamedNode, page: int) -> Part:
    """Return page ``page`` of an experiment's document (its tasks ``DOCUMENT_TASKS`` a page)."""
    ref = iris.parse(svc.base, iri.value)
    experiment = ref.parts[0] if ref is not None else ""
    tasks = _tasks(svc, iri, graph)
    pages = page_count(len(tasks), DOCUMENT_TASKS)
    shown = tasks[(page - 1) * DOCUMENT_TASKS : page * DOCUMENT_TASKS]
    runs = [
        q.subject
        for q in svc.store.quads(None, DCTERMS.isPartOf, iri, graph)
        if isinstance(q.subject, NamedNode)
    ]
    start: list[NamedNode | BlankNode] = [iri, *runs, *shown]
    for task in shown:
        start += _aggregates(svc, task, graph)
    others = [t for t in tasks if t not in shown]
    out = _walk(svc, start, graph, experiment, others)
    if page > 1:
        # the experiment's own statements are on the first page; later pages hold tasks
        out = {q: None for q in out if q.subject != iri or q.predicate == QAB.task}
    return Part(list(out), page, pages)


@dataclass(frozen=True, slots=True)
class QuestionNodes:
    """One question's results in a task (one per experiment type) and their observations."""

    key: str  # the question id as its IRIs write it
    results: list[NamedNode]
    observations: list[NamedNode]
    replies: list[NamedNode]


def question_results(svc: Source, task: NamedNode, graph: NamedNode) -> list[QuestionNodes]:
    """Return a task's per-question nodes grouped by question, in natural question order
    (read once per store generation)."""

    def _group() -> list[QuestionNodes]:
        groups: dict[str, QuestionNodes] = {}
        prefix = task.value + "/question/"

        def _of(node: NamedNode, below: str) -> QuestionNodes:
            key = node.value[len(below) :].split("/", 1)[0]
            return groups.setdefault(key, QuestionNodes(key, [], [], []))

        for quad in svc.store.quads(task, QAB.questionResult, None, graph):
            if isinstance(quad.object, NamedNode):
                _of(quad.object, prefix).results.append(quad.object)
        for quad in svc.store.quads(None, QAB.ofTask, task, graph):
            subject = quad.subject
            if isinstance(subject, NamedNode) and subject.value.startswith(prefix):
                _of(subject, prefix).observations.append(subject)
        run = _asking_run(svc, task, graph)
        if run is not None:
            # the system's stored replies, scored or not (an aborted task has only these)
            for quad in svc.store.quads(None, QAB.askedIn, run, graph):
                if isinstance(quad.subject, NamedNode):
                    _of(quad.subject, run.value + "/question/").replies.append(quad.subject)
        return [groups[k] for k in sorted(groups, key=question_order)]

    return svc.remember(f"question-results {task.value}", _group)


def _task_head(svc: Source, task: NamedNode, graph: NamedNode) -> list[Quad]:
    """Return what the first page of a task's document holds before its questions."""
    ref = iris.parse(svc.base, task.value)
    experiment = ref.parts[0] if ref is not None else ""
    return list(_walk(svc, [task, *_aggregates(svc, task, graph)], graph, experiment))


def _question_quads(
    svc: Source, task: NamedNode, graph: NamedNode, group: QuestionNodes
) -> list[Quad]:
    """Return one question's quads in a task's document, each once, in a fixed order."""
    out: dict[Quad, None] = {}
    for node in group.results:
        out[Quad(task, QAB.questionResult, node, graph)] = None
        out.update(dict.fromkeys(_subtree(svc, node, graph)))
    for node in group.observations:
        out.update(dict.fromkeys(svc.store.quads(node, None, None, graph)))
    for node in group.replies:
        out.update(dict.fromkeys(_subtree(svc, node, graph)))
    return list(out)


def task_layout(svc: Source, task: NamedNode, graph: NamedNode) -> list[tuple[int, int]]:
    """Return where each page of a task's document starts: (question index, quads of that
    question on earlier pages), laid out once per store generation by counting."""

    def _layout() -> list[tuple[int, int]]:
        budget = DOCUMENT_TASK_QUADS
        starts = [(0, 0)]
        used = len(_task_head(svc, task, graph))
        for index, group in enumerate(question_results(svc, task, graph)):
            size, offset = len(_question_quads(svc, task, graph, group)), 0
            while size - offset > budget - used:
                offset += max(0, budget - used)  # (a head alone over the budget: next page)
                starts.append((index, offset))
                used = 0
            used += size - offset
        return starts

    return svc.remember(f"task-layout {task.value} {DOCUMENT_TASK_QUADS}", _layout)


def task_part(svc: Source, task: NamedNode, graph: NamedNode, page: int) -> Part:
    """Return page ``page`` of a task's document: on the first the task and its aggregate
    results, then per-question results up to ``DOCUMENT_TASK_QUADS`` quads a page."""
    starts = task_layout(svc, task, graph)
    pages = len(starts)
    if page > pages:
        return Part([], page, pages)
    groups = question_results(svc, task, graph)
    out = _task_head(svc, task, graph) if page == 1 else []
    first, skip = starts[page - 1]
    last, keep = starts[page] if page < pages else (len(groups), 0)
    for index in range(first, min(last + 1, len(groups))):
        quads = _question_quads(svc, task, graph, groups[index])
        end = keep if index == last else len(quads)
        out += quads[skip if index == first else 0 : end]
    return Part(out, page, pages)


def _asking_run(svc: Source, task: NamedNode, graph: NamedNode) -> NamedNode | None:
    """Return the asking run whose replies a task scored (same system, version, language)."""
    own = {q.predicate: q.object for q in svc.store.quads(task, None, None, graph)}
    wanted = (own.get(QAB.system), own.get(QAB.datasetVersion), own.get(DCTERMS.language))
    for quad in svc.store.quads(None, RDF.type, QAB.AskingRun, graph):
        run = quad.subject
        if not isinstance(run, NamedNode):
            continue
        have = {q.predicate: q.object for q in svc.store.quads(run, None, None, graph)}
        if (
            have.get(QAB.system),
            have.get(QAB.datasetVersion),
            have.get(DCTERMS.language),
        ) == wanted:
            return run
    return None


def _subtree(svc: Source, node: NamedNode, graph: NamedNode) -> list[Quad]:
    """Return the quads of ``node`` and of the nodes below it that it links to."""
    out: list[Quad] = []
    todo: deque[NamedNode | BlankNode] = deque([node])
    seen: set[str] = set()
    while todo:
        current = todo.popleft()
        if str(current) in seen:
            continue
        seen.add(str(current))
        for quad in svc.store.quads(current, None, None, graph):
            out.append(quad)
            obj = quad.object
            if isinstance(obj, BlankNode) or (
                isinstance(obj, NamedNode) and obj.value.startswith(node.value + "/")
            ):
                todo.append(obj)
    return out


def graph_part(svc: Source, graph: NamedNode, page: int) -> Part:
    """Return page ``page`` of a graph's quads (``DOCUMENT_GRAPH_QUADS`` a page), reading only
    the subjects of that page through the index: the graph's page layout (``store.layouts``)
    says which (skipping to page N read N pages first: page 53 of a 2.6 M-quad graph took
    22.8 s against 0.5 s for page 1, issue 41). The layout is made in the server's background
    (``server.memory.GraphValues``: a knowledge base's graph after a start, any graph after a
    write to it) and the reader waits for it within a bound.

    Raises:
        server.memory.NotReadyError: if the layout is not ready within the bound (503).
    """
    layout = graph_layout(svc, graph)
    out: list[Quad] = []
    for subject, begin, end in layout.page(page):
        out += islice(svc.store.quads(subject, None, None, graph), begin, end)
    return Part(out, page, layout.pages)


def graph_layout(
    svc: Source,
    graph: NamedNode,
    wait: float | None = None,
    made: Callable[[GraphLayout], None] | None = None,
) -> GraphLayout:
    """Return the page layout of ``graph``, made once until a write touches it (waiting up to
    ``wait`` seconds, the configured bound unless given). ``made`` is called with the layout
    once it is made, if this call is the one that has it made."""

    def make() -> GraphLayout:
        layout = svc.store.layout(graph, DOCUMENT_GRAPH_QUADS)
        if made is not None:
            made(layout)
        return layout

    return svc.remember_graph(graph, f"graph-layout {DOCUMENT_GRAPH_QUADS}", make, wait)


def page_url(path: str, number: int) -> str:
    """Return the URL (path and query) of page ``number`` of the document at ``path``."""
    return path + (f"?page={number}" if number > 1 else "")


def neighbours(part: Part) -> dict[str, int]:
    """Return the pages a page links to: ``first``, ``last`` (when known), ``prev``, ``next``."""
    found = {"first": 1}
    if part.exact:
        found["last"] = part.pages
    if part.page > 1:
        found["prev"] = part.page - 1
    if part.page < part.pages:
        found["next"] = part.page + 1
    return found


def with_view(node: NamedNode, part: Part, base: str, path: str) -> list[Quad]:
    """Return the page's quads and, for one of several pages, its ``hydra:view`` (at ``path``)."""
    if part.pages <= 1 or not part.quads:
        return part.quads
    here = NamedNode(base + page_url(path, part.page))
    g = DefaultGraph()
    names = {"first": HYDRA.first, "last": HYDRA.last, "prev": HYDRA.previous, "next": HYDRA.next}
    view = [Quad(node, HYDRA.view, here, g), Quad(here, RDF.type, HYDRA.PartialCollectionView, g)]
    for rel, number in neighbours(part).items():
        view.append(Quad(here, names[rel], NamedNode(base + page_url(path, number)), g))
    return [*part.quads, *view]

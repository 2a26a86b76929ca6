"""Resource documents: the triples about one IRI, read only from graphs the reader may see.

A document holds, in every visible graph where the IRI is a subject, the triples about the IRI
and about the nodes it owns: blank nodes and IRIs below it (``<iri>/...``) that it links to,
and members that point at it with ``qab:ofTask`` or ``qb:dataSet``, with the classes the graph
gives the outside resources it links to (a language of the EU authority). Experiments, tasks and
resources naming a graph with ``qab:graph`` (dataset versions, knowledge bases) come a page at a
time (``server.linked_data.parts``): an experiment's document holds its tasks' aggregate
results, a task's the per-question results of one page of questions, a resource's one page of
its graph. An IRI that is never a subject but has members (a cube's ``qb:DataSet``) gets the
document of its members. Reads go through the store's quad index with an explicit graph, so a
private graph is never touched for a reader who may not see it. No document is cut silently:
pages link the rest, and a document that would still exceed ``MAX_DOCUMENT_QUADS`` is refused
with a problem that says where to read it.
"""

from __future__ import annotations

import logging
from collections import deque
from itertools import islice
from typing import NamedTuple
from urllib.parse import urlsplit

from pyoxigraph import BlankNode, NamedNode, Quad

from server.linked_data.part_jobs import PAGES, READERS, DocumentJob
from server.linked_data.parts import MAX_DOCUMENT_QUADS, Part, graph_part
from server.memory import PAGE_GATE
from server.replica.views import ViewNotReadyError
from server.services import Services, Visibility
from server.sparql.workers import PoolError
from server.web.problems import Problem
from server.web.representations import HTML, Representation
from store import graphs
from vocab import iris
from vocab.project import QAB
from vocab.qb import QB
from vocab.standard import RDF

log = logging.getLogger(__name__)

# Links from members back to the resource that owns them.
_MEMBER_LINKS = (QAB.ofTask, QB.dataSet)
# How long a part waits for the view of the newest write, and for a free query worker, before
# the serving process reads it itself. An HTML page waits for a worker only while one writes
# another page or document (done in milliseconds): pages written here hold the interpreter lock
# every request needs, and at 8 readers of random cold pages the HTML p99 dropped by 9-17 ms
# (bench/scale.py --random-on; docs/server.md). Workers busy with queries may be held for
# seconds: then the page is written here at once. RDF documents never wait: their p99 rose to
# 72-93 ms when they did (58-68 ms without waiting).
PART_VIEW_WAIT_SECONDS = 0.5
PART_WORKER_WAIT_SECONDS = 0.03
# The worker-time account of the parts read for pages (``server.sparql.fairness``).
PAGES_CLIENT = "qabench pages"
# At most this many graphs contribute to one document, found among this many quads.
MAX_DOCUMENT_GRAPHS = 20
MAX_SCANNED_QUADS = 50_000


def _owned(node: object, iri: NamedNode) -> bool:
    if isinstance(node, BlankNode):
        return True
    return isinstance(node, NamedNode) and node.value.startswith((iri.value + "/", iri.value + "#"))


def _describe(svc: Services, iri: NamedNode, graph: NamedNode, out: dict[Quad, None]) -> None:
    seen: set[str] = set()
    outside: set[NamedNode] = set()
    todo: deque[NamedNode | BlankNode] = deque([iri])
    for link in _MEMBER_LINKS:
        todo.extend(
            q.subject
            for q in svc.store.quads(None, link, iri, graph)
            if isinstance(q.subject, NamedNode | BlankNode)
        )
    while todo and len(out) <= MAX_DOCUMENT_QUADS:
        node = todo.popleft()
        if str(node) in seen:
            continue
        seen.add(str(node))
        for quad in svc.store.quads(node, None, None, graph):
            out[quad] = None
            obj = quad.object
            if isinstance(obj, NamedNode | BlankNode) and _owned(obj, iri):
                todo.append(obj)
            elif isinstance(obj, NamedNode) and quad.predicate != RDF.type:
                outside.add(obj)
    # The classes the graph states of outside resources the document links to (a language of
    # the EU authority is a dct:LinguisticSystem): no document here describes them, and a
    # reader (or a DCAT-AP validator) needs them beside the link. Resources under the base
    # have documents of their own; their classes would make them look described here.
    for obj in sorted((o for o in outside if not o.value.startswith(svc.base + "/")), key=str):
        if len(out) > MAX_DOCUMENT_QUADS:
            break
        out.update(dict.fromkeys(svc.store.quads(obj, RDF.type, None, graph)))


def experiment_graph_of(svc: Services, iri: NamedNode) -> NamedNode | None:
    """Return the graph of the experiment ``iri`` if ``iri`` names one (by its URL layout)."""
    return graphs.experiment_graph_of(svc.base, iri.value)


def owner_graph(svc: Services, iri: NamedNode) -> NamedNode | None:
    """Return the experiment graph that holds ``iri`` by its URL layout (experiments, tasks and
    everything below them), or ``None`` for resources that are not an experiment's."""
    ref = iris.parse(svc.base, iri.value)
    experiment = ref.experiment if ref is not None else None
    return graphs.experiment_graph(svc.base, experiment) if experiment else None


def document(svc: Services, iri: NamedNode, vis: Visibility) -> list[Quad]:
    """Return the (first page of the) document of ``iri`` for a reader with visibility ``vis``
    (empty: unknown or not visible)."""
    return document_part(svc, iri, vis, 1).quads


def document_part(svc: Services, iri: NamedNode, vis: Visibility, page: int) -> Part:
    """Return page ``page`` of the document of ``iri`` (no quads: unknown or not visible).

    Raises:
        Problem: 500 when a document would exceed ``MAX_DOCUMENT_QUADS``.
    """
    owner = owner_graph(svc, iri)
    if owner is not None and not vis.can_see(owner):
        # Decided before the store is read: a private experiment's resources and missing ones
        # take the same (constant) time, so timing cannot tell which private ids exist.
        return Part([])
    # A refusal is remembered for the store generation: computing it again cost seconds.
    refused: dict[str, Problem] = svc.remember("document-refusals", dict)
    key = f"{iri.value} {page} {vis.key}"
    if key in refused:
        raise refused[key]
    try:
        if owner is not None and (kind := _paged_kind(svc, iri)) is not None:
            return _bounded(READERS[kind](svc, iri, owner, page), iri, owner)
        out = _described(svc, iri, vis, owner)
        linked = [q.object for q in list(out) if q.subject == iri and q.predicate == QAB.graph]
        visible = [t for t in linked if isinstance(t, NamedNode) and vis.can_see(t)]
        if not visible:
            return _bounded(Part(list(out)), iri, owner)
        part = graph_part(svc, visible[0], page)
        return _bounded(Part([*out, *part.quads], part.page, part.pages, part.exact), iri, owner)
    except Problem as problem:
        refused[key] = problem
        raise


def _paged_kind(svc: Services, iri: NamedNode) -> str | None:
    """Return ``experiment`` or ``task`` when ``iri`` is one (their documents come a page at
    a time), else None."""
    ref = iris.parse(svc.base, iri.value)
    if ref is None or not ref.exact or ref.kind not in READERS:
        return None
    return ref.kind if ref.kind == "experiment" or ref.number else None


class PageContext(NamedTuple):
    """What an HTML page written by a query worker needs of its request: the ``(url, media
    type, label)`` of its other forms, its query parameters (no access token) and rows a page."""

    alternates: tuple[tuple[str, str, str], ...]
    args: tuple[tuple[str, str], ...]
    page_size: int


def document_elsewhere(
    svc: Services,
    iri: NamedNode,
    vis: Visibility,
    page: int,
    path: str,
    rep: Representation,
    as_graph: bool,
    context: PageContext | None = None,
) -> tuple[bytes, Part] | None:
    """Return page ``page`` of an experiment's or a task's document in the RDF form ``rep`` as
    a query worker wrote it from the public view (``server.linked_data.part_jobs``), and where
    it is (a ``Part`` without quads); None where this process writes it: for a reader whose
    tokens open private experiments, for what is not public, before the workers were started
    (commands, tests of the application alone), when no view or worker is at hand at once, or
    for a page the worker leaves (empty, past the end, too large). The HTML page of an
    experiment or a task (``rep`` HTML, with the request's ``context``) is written the same way."""
    owner = owner_graph(svc, iri)
    kind = _paged_kind(svc, iri)
    if owner is None or kind is None or not _public(svc, owner, vis):
        return None
    if rep.rdf_format is None and not (rep == HTML and kind in PAGES and context is not None):
        return None
    try:
        view = svc.view(PART_VIEW_WAIT_SECONDS)
        if owner.value not in view.graphs:
            return None
        # waiting for another process computes nothing here: another page may (its slot)
        PAGE_GATE.step_out()
        where = (str(view.path), svc.base, kind, iri.value, owner.value, page, path)
        job = DocumentJob(*where, rep.media_type, as_graph, *(context or ()))
        wait = PART_WORKER_WAIT_SECONDS if rep == HTML and svc.pool.documents_running else 0.0
        outcome = svc.pool.run(job, PAGES_CLIENT, wait=wait)
    except (PoolError, ViewNotReadyError) as exc:
        log.debug("writing %s here: %s", iri.value, exc)
        return None
    if outcome.failure is not None:
        log.debug("writing %s here: %s", iri.value, outcome.message)
        return None
    return outcome.data, Part([], page, outcome.pages, outcome.exact)


def _public(svc: Services, graph: NamedNode, vis: Visibility) -> bool:
    # An anonymous reader (no token opens anything) who may see ``graph``, with workers running.
    return not vis.unlocked and vis.can_see(graph) and svc.pool.started


def _bounded(part: Part, iri: NamedNode, graph: NamedNode | None = None) -> Part:
    if len(part.quads) > MAX_DOCUMENT_QUADS:
        where = urlsplit(graph.value).path if graph is not None else "/dump.nq"
        raise Problem(
            500,
            f"The document of {iri.value} would hold {len(part.quads)} quads, more than the "
            f"{MAX_DOCUMENT_QUADS} a document may; read its graph a page at a time at {where} "
            "(or query it at /sparql).",
            extensions={"graph": where},
        )
    return part


def _described(
    svc: Services, iri: NamedNode, vis: Visibility, owner: NamedNode | None
) -> dict[Quad, None]:
    """Return the triples about ``iri`` and the nodes it owns, from the graphs that hold it."""
    out: dict[Quad, None] = {}
    found: dict[str, NamedNode] = {}
    # Shared resources (a cube's structure definition) are repeated in every experiment graph:
    # describe them from a bounded number of visible graphs. An experiment's resources are
    # described from its own graph only.
    scanned = () if owner is not None else islice(svc.store.quads(subject=iri), MAX_SCANNED_QUADS)
    if owner is not None:
        found[owner.value] = owner
    for quad in scanned:
        graph = quad.graph_name
        if isinstance(graph, NamedNode) and vis.can_see(graph):
            found[graph.value] = graph
            if len(found) >= MAX_DOCUMENT_GRAPHS:
                break
    if not found and owner is None:
        # Described nowhere, but possibly the target of members (a cube's qb:DataSet).
        found = {
            q.graph_name.value: q.graph_name
            for link in _MEMBER_LINKS
            for q in islice(svc.store.quads(None, link, iri), MAX_SCANNED_QUADS)
            if isinstance(q.graph_name, NamedNode)
        }
    for name in sorted(found)[:MAX_DOCUMENT_GRAPHS]:
        # Every graph read below is checked here, whichever way it was found.
        if vis.can_see(found[name]):
            _describe(svc, iri, found[name], out)
    return out

"""Experiment and task documents written by the query workers, beside the serving process.

Reading a cold part of an experiment's or a task's document costs 5-10 ms at 10,000 experiments,
nearly all of it the store decoding terms (every IRI longer than 16 bytes is a lookup of its
own), and pattern lookups hold Python's interpreter lock while they do: the one interpreter
that serves every request stops for them. For an anonymous reader the public view
(``server.replica.views``) holds exactly what the reader may see, so a query worker
(``server.sparql.workers``: the same processes, isolation and time limit as public SPARQL
queries) reads the page there and writes it in the asked form; the serving process sends the
bytes on. The document is the same either way: the worker reads it with
``server.linked_data.parts`` and writes it with ``server.linked_data.serialisation``, as the
serving process does. A page the worker does not write (empty, past the end, too large) is
left to the serving process, which answers it as always.

The HTML pages of experiments and tasks go the same way: their reads (5-10 ms cold) and
rendering run in the worker with ``server.pages.experiments``/``tasks`` and the Flask-free
``server.rendering``, the code the serving process renders them with, so the bytes are the
same. A page the worker cannot render (no such task or experiment type, past the last page)
is left to the serving process, which answers it with its 400 or 404.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import NamedTuple, TypeVar

from pyoxigraph import NamedNode

from server.linked_data.parts import (
    MAX_DOCUMENT_QUADS,
    Source,
    experiment_part,
    task_part,
    with_view,
)
from server.linked_data.serialisation import serialize_document
from server.pages.experiments import Viewer, cached_task, experiment_html
from server.pages.tasks import TaskView, filters_of, task_html
from server.sparql.jobs import QueryOutcome
from server.web.representations import DOCUMENT_FORMATS, HTML
from store.errors import StoreError
from store.protocol import RdfStore
from vocab import iris

T = TypeVar("T")

# The kinds of part a worker reads, by the IRI kind of the resource whose document it is.
READERS = {"experiment": experiment_part, "task": task_part}
# Values a worker remembers per view (a task's questions grouped, read once for all its pages).
REMEMBERED_PER_VIEW = 64
# The RDF forms a worker writes, by media type.
_FORMS = {rep.media_type: rep for rep in DOCUMENT_FORMATS if rep.rdf_format is not None}


class DocumentJob(NamedTuple):
    """Page ``page`` of the document of ``iri`` (an experiment or a task: ``kind``), whose
    quads are in ``graph``, read from the view at ``view``; written in the form of media type
    ``media`` (``as_graph``: quad forms hold triples only), for the URL path ``path`` (where
    its ``hydra:view`` points), with base IRI ``base``."""

    view: str
    base: str
    kind: str
    iri: str
    graph: str
    page: int
    path: str
    media: str
    as_graph: bool
    # an HTML page's other forms (url, media type, label), the request's query parameters
    # (no access token) and rows a page
    alternates: tuple[tuple[str, str, str], ...] = ()
    args: tuple[tuple[str, str], ...] = ()
    page_size: int = 0


def _experiment_page(source: Source, iri: NamedNode, graph: NamedNode, job: DocumentJob) -> str:
    return experiment_html(source, iri, graph, Viewer(job.alternates))


def _task_page(source: Source, iri: NamedNode, graph: NamedNode, job: DocumentJob) -> str:
    ref = iris.parse(job.base, iri.value)
    task = cached_task(source, ref.parts[0], ref.number) if ref is not None else None
    if task is None:
        raise LookupError("no such task: the serving process answers 404")
    chosen = filters_of(job.args, [r.experiment_type for r in task.results], job.page)
    if isinstance(chosen, str):
        raise LookupError("no such experiment type: the serving process answers 400")
    # The view holds exactly the graphs an anonymous reader may see.
    view = TaskView(job.path, job.page_size, job.alternates, source.store.has_graph)
    return task_html(source, iri, graph, task, chosen, view)


# The HTML pages a worker writes, by IRI kind: as an anonymous reader sees them.
PAGES = {"experiment": _experiment_page, "task": _task_page}


class Memo:
    """What a worker remembers, per view: values stay right while their view does."""

    def __init__(self, views: int) -> None:
        self._views = views
        self._memos: OrderedDict[str, OrderedDict[str, object]] = OrderedDict()

    def of(self, view: str) -> OrderedDict[str, object]:
        """Return the memo of ``view`` (the least recently used view's is dropped)."""
        memo = self._memos.setdefault(view, OrderedDict())
        self._memos.move_to_end(view)
        while len(self._memos) > self._views:
            self._memos.popitem(last=False)
        return memo


class _ViewSource:
    """A view as a ``parts.Source``."""

    def __init__(self, store: RdfStore, base: str, memo: OrderedDict[str, object]) -> None:
        self._store = store
        self._base = base
        self._memo = memo

    @property
    def store(self) -> RdfStore:
        return self._store

    @property
    def base(self) -> str:
        return self._base

    def remember_graph(
        self, graph: NamedNode, key: str, make: Callable[[], T], wait: float | None = None
    ) -> T:
        # made here and now; a view never changes: what one graph gives stays right while
        # the view does
        return self.remember(f"{key} {graph.value}", make)

    def remember(self, key: str, make: Callable[[], T]) -> T:
        if key in self._memo:
            self._memo.move_to_end(key)
            return self._memo[key]  # type: ignore[return-value]
        value = make()
        self._memo[key] = value
        while len(self._memo) > REMEMBERED_PER_VIEW:
            self._memo.popitem(last=False)
        return value


def write_document(store: RdfStore, job: DocumentJob, memo: Memo) -> QueryOutcome:
    """Read and write ``job``'s page from ``store`` (the view, in a worker): the outcome's body
    is the document, ``pages``/``exact`` say where it is; failures are reported in it (a page
    left to the serving process is one)."""
    if job.media == HTML.media_type:
        return _write_page(store, job, memo)
    read, rep = READERS.get(job.kind), _FORMS.get(job.media)
    if read is None or rep is None:
        return QueryOutcome("", failure="evaluation", message="not a document a worker writes")
    source = _ViewSource(store, job.base, memo.of(job.view))
    node = NamedNode(job.iri)
    try:
        part = read(source, node, NamedNode(job.graph), job.page)
        if not part.quads or job.page > part.pages or len(part.quads) > MAX_DOCUMENT_QUADS:
            return QueryOutcome("", failure="evaluation", message="left to the serving process")
        quads = with_view(node, part, job.base, job.path)
        body = serialize_document(quads, rep, as_graph=job.as_graph)
    except (StoreError, OSError, ValueError, RuntimeError) as exc:
        return QueryOutcome("", failure="evaluation", message=str(exc))
    return QueryOutcome(
        "document",
        rep.media_type,
        len(part.quads),
        pages=part.pages,
        exact=part.exact,
        body=(body,),
    )


def _write_page(store: RdfStore, job: DocumentJob, memo: Memo) -> QueryOutcome:
    page = PAGES.get(job.kind)
    if page is None:
        return QueryOutcome("", failure="evaluation", message="not a page a worker writes")
    source = _ViewSource(store, job.base, memo.of(job.view))
    try:
        body = page(source, NamedNode(job.iri), NamedNode(job.graph), job).encode("utf-8")
    except Exception as exc:
        return QueryOutcome("", failure="evaluation", message=f"{type(exc).__name__}: {exc}")
    return QueryOutcome("document", HTML.media_type, 0, body=(body,))

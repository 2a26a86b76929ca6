"""Experiment and task document parts read by the query workers, beside the serving process.

Reading a cold part of an experiment's or a task's document costs 5-10 ms at 10,000 experiments,
nearly all of it the store decoding terms (every IRI longer than 16 bytes is a lookup of its
own), and pattern lookups hold Python's interpreter lock while they do: the one interpreter
that serves every request stops for them. For an anonymous reader the public view
(``server.replica.views``) holds exactly what the reader may see, so the part is read there
by a query worker (``server.sparql.workers``, the same processes, isolation and time limit as
public SPARQL queries), which sends it back as N-Quads written by the engine; the serving
process parses them (about 1 ms for 1,000 quads) and goes on as if it had read them itself.
The part is the same either way: ``server.linked_data.parts`` reads it in both places.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import NamedTuple, TypeVar

from pyoxigraph import NamedNode, RdfFormat, parse, serialize

from server.linked_data.parts import Part, experiment_part, task_part
from server.sparql.jobs import QueryOutcome
from store.errors import StoreError
from store.protocol import RdfStore

T = TypeVar("T")

# The kinds of part a worker reads, by the IRI kind of the resource whose document it is.
READERS = {"experiment": experiment_part, "task": task_part}
# Values a worker remembers per view (a task's questions grouped, read once for all its pages).
REMEMBERED_PER_VIEW = 64
NQUADS_MEDIA = "application/n-quads"


class PartJob(NamedTuple):
    """Page ``page`` of the document of ``iri`` (an experiment or a task: ``kind``), whose
    quads are in ``graph``, read from the view at ``view`` with base IRI ``base``."""

    view: str
    base: str
    kind: str
    iri: str
    graph: str
    page: int


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

    def remember(self, key: str, make: Callable[[], T]) -> T:
        if key in self._memo:
            self._memo.move_to_end(key)
            return self._memo[key]  # type: ignore[return-value]
        value = make()
        self._memo[key] = value
        while len(self._memo) > REMEMBERED_PER_VIEW:
            self._memo.popitem(last=False)
        return value


def read_part(store: RdfStore, job: PartJob, memo: Memo) -> QueryOutcome:
    """Read ``job``'s part from ``store`` (the view, in a worker) as an outcome whose body is
    the part's quads in N-Quads; failures are reported in the outcome."""
    read = READERS.get(job.kind)
    if read is None:
        return QueryOutcome("", failure="evaluation", message=f"no part of a {job.kind}")
    source = _ViewSource(store, job.base, memo.of(job.view))
    try:
        part = read(source, NamedNode(job.iri), NamedNode(job.graph), job.page)
        body = serialize(part.quads, format=RdfFormat.N_QUADS) or b""
    except (StoreError, OSError, ValueError, RuntimeError) as exc:
        return QueryOutcome("", failure="evaluation", message=str(exc))
    return QueryOutcome(
        "part",
        NQUADS_MEDIA,
        len(part.quads),
        pages=part.pages,
        exact=part.exact,
        body=(body,),
    )


def part_of(outcome: QueryOutcome, page: int) -> Part:
    """Return the part a worker read (``read_part``'s outcome).

    Raises:
        SyntaxError: if the body is not N-Quads.
    """
    quads = list(parse(outcome.data, format=RdfFormat.N_QUADS))
    if len(quads) != outcome.rows:
        raise SyntaxError(f"a worker sent {len(quads)} quads of a part of {outcome.rows}")
    return Part(quads, page, outcome.pages, outcome.exact)

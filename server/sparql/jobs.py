"""One public SPARQL query as a job for a worker process, and its evaluation over a view.

The job carries everything decided in the main process (the view holding exactly the graphs the
reader may see, any dataset the query or the protocol names restricted to those graphs,
negotiated media types, row cap); the outcome carries serialised bytes or a typed failure, so
nothing but plain values crosses the process boundary. Runs inside the worker processes of
``server.sparql.workers``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from pyoxigraph import (
    NamedNode,
    QueryBoolean,
    QuerySolutions,
    Triple,
    serialize,
)

from server.sparql import guard
from server.sparql.results import Row, row_size, write_solutions
from store.errors import QuerySyntaxError, StoreError
from store.formats import rdf_serialization, results_format
from store.triplestore import TripleStore
from vocab.prefixes import PUBLISHED

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class QueryJob:
    """A query and the decisions the main process took about it.

    ``view`` is the directory of the view to evaluate over. ``default_graphs``/``named_graphs``
    of ``None`` mean "every graph of the view" (the union default graph); a tuple restricts
    the dataset to exactly those graphs.
    """

    query: str
    base_iri: str
    view: str
    default_graphs: tuple[str, ...] | None
    named_graphs: tuple[str, ...] | None
    results_media: str | None
    rdf_media: str | None
    max_rows: int
    truncation_note: str
    # Bytes of the serialised result before truncation (0: no byte cap).
    max_bytes: int = 0


@dataclass(frozen=True, slots=True)
class QueryOutcome:
    """What a worker answers: a body, or a failure kind with its message and position.

    ``failure`` is ``None`` on success, else ``syntax``, ``federation`` (SERVICE, refused
    before evaluation), ``evaluation`` or ``not-acceptable``.
    ``form`` is ``solutions``, ``boolean`` or ``graph``.
    """

    form: str
    media_type: str = ""
    body: bytes = b""
    rows: int = 0
    truncated: bool = False
    # True when the byte cap (not the row cap) cut the result short.
    byte_limited: bool = False
    failure: str | None = None
    message: str = ""
    line: int | None = None
    column: int | None = None


def _graphs(names: tuple[str, ...] | None) -> list[NamedNode] | None:
    return None if names is None else [NamedNode(n) for n in names]


def _collect(items: Iterable[T], job: QueryJob, size: Callable[[T], int]) -> tuple[list[T], str]:
    """Collect items up to the row cap and (estimated) byte cap; say which cap cut them."""
    kept: list[T] = []
    budget = job.max_bytes or None
    for item in items:
        if len(kept) == job.max_rows:
            return kept, "rows"
        if budget is not None:
            budget -= size(item)
            if budget < 0:
                return kept, "bytes"
        kept.append(item)
    return kept, ""


def _within(
    kept: list[T], cut: str, job: QueryJob, write: Callable[[list[T], bool], bytes]
) -> tuple[bytes, list[T], str]:
    """Serialise ``kept``; drop rows from the end until the body fits the byte cap."""
    body = write(kept, bool(cut))
    while job.max_bytes and len(body) > job.max_bytes and kept:
        # Escaping can make the body larger than the estimate: keep a proportional share.
        keep = min(len(kept) - 1, len(kept) * job.max_bytes // len(body))
        kept, cut = kept[:keep], "bytes"
        body = write(kept, True)
    return body, kept, cut


def _solutions(result: QuerySolutions, job: QueryJob) -> QueryOutcome:
    if job.results_media is None:
        return QueryOutcome("solutions", failure="not-acceptable")
    variables = [v.value for v in result.variables]
    solutions: Iterator[Row] = ([solution[name] for name in variables] for solution in result)
    rows, cut = _collect(solutions, job, row_size)
    fmt = results_format(job.results_media)

    def write(kept: list[Row], truncated: bool) -> bytes:
        link = job.truncation_note if truncated else None
        return write_solutions(variables, kept, fmt, link)

    body, rows, cut = _within(rows, cut, job, write)
    return QueryOutcome(
        "solutions", job.results_media, body, len(rows), bool(cut), byte_limited=cut == "bytes"
    )


def _graph(result: Iterable[Triple], job: QueryJob) -> QueryOutcome:
    if job.rdf_media is None:
        return QueryOutcome("graph", failure="not-acceptable")
    triples, cut = _collect(result, job, lambda t: row_size((t.subject, t.predicate, t.object)))
    fmt = rdf_serialization(job.rdf_media).rdf_format

    def write(kept: list[Triple], _truncated: bool) -> bytes:
        return serialize(kept, format=fmt, prefixes=PUBLISHED) or b""

    body, triples, cut = _within(triples, cut, job, write)
    return QueryOutcome(
        "graph", job.rdf_media, body, len(triples), bool(cut), byte_limited=cut == "bytes"
    )


def evaluate_job(store: TripleStore, job: QueryJob) -> QueryOutcome:
    """Evaluate ``job`` over ``store`` and serialise the (capped) result.

    Args:
        store: the view, opened read-only.
        job: the query and its dataset, formats and row cap.

    Returns:
        The outcome; failures are reported in it rather than raised, so they can cross the
        process boundary as plain values.
    """
    # Checked on the parsed query before anything is evaluated (server.sparql.guard).
    refused = guard.refusal(job.query)
    if refused is not None:
        return QueryOutcome(
            "",
            failure=refused.kind,
            message=refused.message,
            line=refused.line,
            column=refused.column,
        )
    default = _graphs(job.default_graphs)
    try:
        result = store.query(
            job.query,
            default_graph=list(default) if default is not None else None,
            named_graphs=_graphs(job.named_graphs),
            union_default_graph=default is None,
            base_iri=job.base_iri,
        )
        if isinstance(result, QueryBoolean):
            if job.results_media is None:
                return QueryOutcome("boolean", failure="not-acceptable")
            body = result.serialize(format=results_format(job.results_media)) or b""
            return QueryOutcome("boolean", job.results_media, body, 1)
        if isinstance(result, QuerySolutions):
            return _solutions(result, job)
        return _graph(result, job)  # QueryTriples iterates Triple
    except QuerySyntaxError as exc:
        return QueryOutcome(
            "", failure="syntax", message=str(exc), line=exc.line, column=exc.column
        )
    except (StoreError, OSError, ValueError, RuntimeError) as exc:
        # RuntimeError: pyoxigraph reports unsupported features (custom functions) this way.

        return QueryOutcome("", failure="evaluation", message=str(exc))

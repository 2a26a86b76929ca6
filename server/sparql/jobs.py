"""One public SPARQL query as a job for a worker process, and its evaluation over a replica.

The job carries everything decided in the main process (dataset restricted to visible graphs,
negotiated media types, row cap); the outcome carries serialised bytes or a typed failure, so
nothing but plain values crosses the process boundary. Runs inside the worker processes of
``server.sparql.workers``.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyoxigraph import (
    BlankNode,
    Literal,
    NamedNode,
    QueryBoolean,
    QuerySolutions,
    Triple,
    serialize,
)

from server.sparql.results import write_solutions
from store.errors import QuerySyntaxError, StoreError
from store.formats import rdf_serialization, results_format
from store.triplestore import TripleStore
from vocab.prefixes import PUBLISHED


@dataclass(frozen=True, slots=True)
class QueryJob:
    """A query and the decisions the main process took about it.

    ``default_graphs``/``named_graphs`` of ``None`` mean "every graph of the replica" (the
    union default graph); a tuple restricts the dataset to exactly those graphs.
    """

    query: str
    base_iri: str
    default_graphs: tuple[str, ...] | None
    named_graphs: tuple[str, ...] | None
    use_private: bool
    results_media: str | None
    rdf_media: str | None
    max_rows: int
    truncation_note: str


@dataclass(frozen=True, slots=True)
class QueryOutcome:
    """What a worker answers: a body, or a failure kind with its message and position.

    ``failure`` is ``None`` on success, else ``syntax``, ``evaluation`` or ``not-acceptable``.
    ``form`` is ``solutions``, ``boolean`` or ``graph``.
    """

    form: str
    media_type: str = ""
    body: bytes = b""
    rows: int = 0
    truncated: bool = False
    failure: str | None = None
    message: str = ""
    line: int | None = None
    column: int | None = None


def _graphs(names: tuple[str, ...] | None) -> list[NamedNode] | None:
    return None if names is None else [NamedNode(n) for n in names]


def _solutions(result: QuerySolutions, job: QueryJob) -> QueryOutcome:
    if job.results_media is None:
        return QueryOutcome("solutions", failure="not-acceptable")
    variables = [v.value for v in result.variables]
    rows: list[list[NamedNode | BlankNode | Literal | Triple | None]] = []
    for solution in result:
        if len(rows) == job.max_rows:
            truncated = True
            break
        rows.append([solution[name] for name in variables])
    else:
        truncated = False
    link = job.truncation_note if truncated else None
    body = write_solutions(variables, rows, results_format(job.results_media), link)
    return QueryOutcome("solutions", job.results_media, body, len(rows), truncated)


def _graph(result: object, job: QueryJob) -> QueryOutcome:
    if job.rdf_media is None:
        return QueryOutcome("graph", failure="not-acceptable")
    triples: list[Triple] = []
    truncated = False
    for triple in result:  # type: ignore[attr-defined]  # QueryTriples iterates Triple
        if len(triples) == job.max_rows:
            truncated = True
            break
        triples.append(triple)
    fmt = rdf_serialization(job.rdf_media).rdf_format
    body = serialize(triples, format=fmt, prefixes=PUBLISHED) or b""
    return QueryOutcome("graph", job.rdf_media, body, len(triples), truncated)


def evaluate_job(store: TripleStore, job: QueryJob) -> QueryOutcome:
    """Evaluate ``job`` over ``store`` and serialise the (capped) result.

    Args:
        store: the worker's replica.
        job: the query and its dataset, formats and row cap.

    Returns:
        The outcome; failures are reported in it rather than raised, so they can cross the
        process boundary as plain values.
    """
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
        return _graph(result, job)
    except QuerySyntaxError as exc:
        return QueryOutcome(
            "", failure="syntax", message=str(exc), line=exc.line, column=exc.column
        )
    except (StoreError, OSError, ValueError, RuntimeError) as exc:
        # RuntimeError: pyoxigraph reports unsupported features (custom functions) this way.

        return QueryOutcome("", failure="evaluation", message=str(exc))

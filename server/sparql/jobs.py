"""One public SPARQL query as a job for a worker process, and its evaluation over a view.

The job carries everything decided in the main process (the view holding exactly the graphs the
reader may see, any dataset the query or the protocol names restricted to those graphs,
negotiated media types, row and byte caps); the outcome is a small record, and the body travels
beside it as bytes the engine wrote (``server.sparql.results``). Jobs and outcomes are plain
tuples, so crossing the process boundary costs little. Runs inside the worker processes of
``server.sparql.workers``.

**The row cap is applied by the engine.** A SELECT is evaluated with ``LIMIT max_rows + 1``
added at its end, on a line of its own: Oxigraph's parser accepts that exactly when the query
has no top-level ``LIMIT`` or trailing ``VALUES`` of its own, and then the limit is the
top-level solution modifier of the query (nothing after a complete query can nest inside it).
A query the parser refuses that way (it has its own ``LIMIT``, or a trailing ``VALUES``) runs
as it was sent (such texts are remembered per worker), and so does a text whose engine result
is not a solution sequence; the serialisation stops one row past the cap in every case. A
``CONSTRUCT`` or ``DESCRIBE`` is never given a ``LIMIT`` (it limits solutions, not triples):
its triples are counted as they stream into the serialiser.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import NamedTuple

from pyoxigraph import NamedNode, QueryBoolean, QuerySolutions, QueryTriples

from server.sparql import guard
from server.sparql.results import Written, capped_solutions, capped_triples
from store.errors import QuerySyntaxError, StoreError
from store.formats import rdf_serialization, results_format
from store.triplestore import TripleStore
from vocab.prefixes import PUBLISHED

# Texts whose added LIMIT the engine refused, remembered per worker (by digest).
REMEMBERED_TEXTS = 1024


class QueryJob(NamedTuple):
    """A query and the decisions the main process took about it.

    ``view`` is the directory of the view to evaluate over. ``default_graphs``/``named_graphs``
    of ``None`` mean "every graph of the view" (the union default graph); a tuple restricts
    the dataset to exactly those graphs. ``form`` is the query form the endpoint read
    (``SELECT`` gets the engine's row limit).
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
    # Bytes of the body sent (0: no byte cap).
    max_bytes: int = 0
    form: str | None = None


class QueryOutcome(NamedTuple):
    """What a worker answers: a body (in chunks), or a failure kind with its message and position.

    ``failure`` is ``None`` on success, else ``syntax``, ``federation`` (SERVICE, refused
    before evaluation), ``evaluation``, ``not-acceptable`` or ``memory``.
    ``form`` is ``solutions``, ``boolean`` or ``graph``. Workers send ``body`` empty and the
    bytes after the record; the pool puts them in.
    """

    form: str
    media_type: str = ""
    rows: int = 0
    truncated: bool = False
    # True when the byte cap (not the row cap) cut the result short.
    byte_limited: bool = False
    failure: str | None = None
    message: str = ""
    line: int | None = None
    column: int | None = None
    # A document part (``server.linked_data.part_jobs``): how many pages its document has.
    pages: int = 0
    exact: bool = True
    body: tuple[bytes, ...] = ()

    def with_body(self, body: tuple[bytes, ...]) -> QueryOutcome:
        """Return this outcome with ``body``."""
        return self._replace(body=body)

    @property
    def data(self) -> bytes:
        """Return the whole body as one bytes object."""
        return self.body[0] if len(self.body) == 1 else b"".join(self.body)

    @property
    def size(self) -> int:
        """Return the length of the body in bytes."""
        return sum(len(part) for part in self.body)


def _graphs(names: tuple[str, ...] | None) -> list[NamedNode] | None:
    return None if names is None else [NamedNode(n) for n in names]


class _Refused:
    """Texts whose added LIMIT the engine refused (bounded, least recent first out), kept as
    digests; their Python hashes are looked at first, so a text never refused (nearly every
    one) is not digested."""

    def __init__(self) -> None:
        self._seen: OrderedDict[bytes, int] = OrderedDict()
        self._hashes: dict[int, int] = {}  # hash of a kept text -> how many kept texts have it

    def __contains__(self, text: str) -> bool:
        return hash(text) in self._hashes and _digest(text) in self._seen

    def add(self, text: str) -> None:
        key = _digest(text)
        if key in self._seen:
            self._seen.move_to_end(key)
            return
        self._seen[key] = code = hash(text)
        self._hashes[code] = self._hashes.get(code, 0) + 1
        while len(self._seen) > REMEMBERED_TEXTS:
            _, old = self._seen.popitem(last=False)
            left = self._hashes.pop(old) - 1
            if left:
                self._hashes[old] = left


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


_REFUSED = _Refused()


def _evaluate(store: TripleStore, job: QueryJob) -> QueryBoolean | QuerySolutions | QueryTriples:
    default = _graphs(job.default_graphs)
    options = {
        "default_graph": default,
        "named_graphs": _graphs(job.named_graphs),
        "union_default_graph": default is None,
        "base_iri": job.base_iri,
    }
    if job.form == "SELECT" and job.max_rows > 0 and job.query not in _REFUSED:
        try:
            limited = store.query(f"{job.query}\nLIMIT {job.max_rows + 1}", **options)  # type: ignore[arg-type]
        except QuerySyntaxError:
            _REFUSED.add(job.query)
        else:
            if isinstance(limited, QuerySolutions):
                return limited
    return store.query(job.query, **options)  # type: ignore[arg-type]


def _outcome(form: str, media: str, written: Written) -> QueryOutcome:
    return QueryOutcome(
        form,
        media,
        written.rows,
        bool(written.cut),
        byte_limited=written.cut == "bytes",
        body=(written.body,),
    )


def _serialise(result: QueryBoolean | QuerySolutions | QueryTriples, job: QueryJob) -> QueryOutcome:
    if isinstance(result, QueryBoolean):
        if job.results_media is None:
            return QueryOutcome("boolean", failure="not-acceptable")
        body = result.serialize(format=results_format(job.results_media)) or b""
        return QueryOutcome("boolean", job.results_media, 1, body=(body,))
    if isinstance(result, QuerySolutions):
        if job.results_media is None:
            return QueryOutcome("solutions", failure="not-acceptable")
        fmt = results_format(job.results_media)
        written = capped_solutions(result, fmt, job.max_rows, job.max_bytes, job.truncation_note)
        return _outcome("solutions", job.results_media, written)
    if job.rdf_media is None:
        return QueryOutcome("graph", failure="not-acceptable")
    rdf = rdf_serialization(job.rdf_media).rdf_format
    written = capped_triples(result, rdf, job.max_rows, job.max_bytes, PUBLISHED)
    return _outcome("graph", job.rdf_media, written)


def evaluate_job(store: TripleStore, job: QueryJob) -> QueryOutcome:
    """Evaluate ``job`` over ``store`` and serialise the (capped) result.

    Args:
        store: the view, opened read-only.
        job: the query and its dataset, formats and caps.

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
    try:
        return _serialise(_evaluate(store, job), job)
    except QuerySyntaxError as exc:
        return QueryOutcome(
            "", failure="syntax", message=str(exc), line=exc.line, column=exc.column
        )
    except (StoreError, OSError, ValueError, RuntimeError, SyntaxError) as exc:
        # RuntimeError: pyoxigraph reports unsupported features (custom functions) this way;
        # errors met while the engine streams results surface from the serialiser.
        return QueryOutcome("", failure="evaluation", message=str(exc))

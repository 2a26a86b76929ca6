"""Running a system's SPARQL query on a knowledge base, bounded in time, rows and bytes.

Many systems answer with a query only (text-to-SPARQL models). When such an answer is scored
and a knowledge base is configured, its query is run here and its results become the answer
(``evaluators.experiments.task.executing`` does the replacing and records that it happened).

What runs: SELECT and ASK queries that rdflib's SPARQL parser reads (it is the same parser the
markings use; a query it cannot read is not run) and that contain no ``SERVICE`` anywhere
(a system's query must never make qabench send requests elsewhere). CONSTRUCT, DESCRIBE and
updates are refused. Undeclared prefixes that public endpoints predeclare (``dbo:``, ``wdt:``,
...) are supplied, as for gold queries.

Bounds: ``ExecutionLimits`` gives the time a query may take, the rows read from its result
(more are cut, and the answer says so) and, for an endpoint, the bytes read. On the store,
a query runs in a worker thread; the caller stops waiting at the time limit (the query's
result is then dropped) and the thread stops at its next row, but an evaluation that does not
yield rows (a large ORDER BY or GROUP BY) runs to its end in the background, so at most
``slots`` such threads exist: a query that finds them all busy waits, then fails. The store
query sees the knowledge base's graphs as its default graph and no named graph at all.

Nothing here reads configuration or writes anything; failures are an ``Execution`` with a
``problem``, never an exception.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import httpx
from pyoxigraph import Literal, NamedNode, QueryBoolean, QuerySolutions
from pyparsing import ParseBaseException, ParseResults
from rdflib.plugins.sparql.parser import parseQuery
from rdflib.plugins.sparql.parserutils import CompValue

from evaluators.errors import KnowledgeBaseError
from evaluators.knowledge.bases import kb_graph_of
from evaluators.knowledge.endpoint import answer_set_from_json, is_endpoint, with_known_prefixes
from evaluators.model import AnswerSet, AnswerValue, Question
from evaluators.qa.markings import PARSER_LOCK
from store.errors import StoreError
from store.protocol import RdfStore
from store.remote import EndpointFailure, fetch_results
from vocab import iris


@dataclass(frozen=True, slots=True)
class ExecutionLimits:
    """How long a system's query may run, how many result rows and bytes are read."""

    timeout_seconds: float = 30.0
    max_rows: int = 10_000
    max_bytes: int = 10_000_000


@dataclass(frozen=True, slots=True)
class Execution:
    """What running one query gave: its results, or ``None`` and why not.

    ``problem`` is also set when results were cut at ``max_rows``. ``rows`` are the result's
    rows as read (each a tuple of lexical forms by variable, ``None`` where unbound; ``None`` for
    an ASK result or no results): what row-level measures compare.
    """

    answers: AnswerSet | None
    problem: str | None = None
    rows: tuple[tuple[str | None, ...], ...] | None = None


class QueryExecutor(Protocol):
    """Runs system queries on one knowledge base; ``description`` names it in the results."""

    description: str

    def run(self, sparql: str) -> Execution:
        """Run ``sparql`` within the limits (never raises)."""
        ...


def needs_execution(answer: Question) -> bool:
    """Whether an answer carries a query and no answer set at all (a SPARQL-only answer).

    An answer set that is present, even with empty bindings, is the system's result and is
    never replaced.

    >>> needs_execution(Question("1", sparql="ASK {}"))
    True
    >>> needs_execution(Question("1", sparql="ASK {}", answers=(AnswerSet(),)))
    False
    """
    return bool(answer.sparql and answer.sparql.strip()) and not answer.answers


def _nodes(node: object) -> Iterable[CompValue]:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, CompValue):
            yield current
            stack.extend(current.values())
        elif isinstance(current, ParseResults | list | tuple):
            stack.extend(current)
        elif isinstance(current, dict):
            stack.extend(current.values())


def uses_service(parsed: object) -> bool:
    """Return whether an rdflib parse tree holds a ``SERVICE`` pattern anywhere.

    The one walk behind both refusals: system queries here, public queries in the SPARQL
    workers (``server.sparql.guard``).

    >>> uses_service(parseQuery("SELECT * { ?s ?p ?o OPTIONAL { SERVICE <http://x/> {} } }"))
    True
    >>> uses_service(parseQuery('SELECT * { ?s <http://x/SERVICE> "SERVICE" } # SERVICE'))
    False
    """
    return any(node.name == "ServiceGraphPattern" for node in _nodes(parsed))


def refusal(sparql: str) -> str | None:
    """Return why a system query is not run (``None``: it may run).

    Decided on rdflib's parse tree: no parse, a form other than SELECT or ASK, or a
    ``ServiceGraphPattern`` anywhere.

    >>> refusal("SELECT ?x WHERE { ?x a <http://ex.org/C> }") is None
    True
    >>> refusal("SELECT * WHERE { SERVICE <http://ex.org/s> { ?s ?p ?o } }")
    'the query uses SERVICE, which is never run'
    """
    with PARSER_LOCK:  # shared with the markings: scoring may parse in another thread
        try:
            parsed = parseQuery(sparql)  # prefixes are resolved later, not by the parser
        except (ParseBaseException, RecursionError, ValueError, TypeError) as exc:
            return f"the query does not parse: {str(exc)[:200]}"
    query = parsed[1] if len(parsed) > 1 else None
    if not isinstance(query, CompValue) or query.name not in ("SelectQuery", "AskQuery"):
        found = query.name if isinstance(query, CompValue) else "nothing"
        return f"only SELECT and ASK queries are run, this is {found}"
    if uses_service(parsed):
        return "the query uses SERVICE, which is never run"
    return None


def _lexical(term: object) -> str | None:
    """Return a result cell's lexical form (``None``: unbound); blank nodes keep their label."""
    if term is None:
        return None
    return str(getattr(term, "value", term))


def _cell(value: object) -> str | None:
    """Return a SPARQL JSON binding's lexical form (``None``: unbound)."""
    if isinstance(value, dict) and isinstance(value.get("value"), str):
        return str(value["value"])
    return None


def _cut(rows: int, limit: int) -> str | None:
    return f"results cut at {limit} rows" if rows > limit else None


class StoreExecutor:
    """Runs system queries on knowledge-base graphs of our store."""

    def __init__(
        self,
        store: RdfStore,
        kb_graphs: Sequence[NamedNode],
        description: str,
        limits: ExecutionLimits = ExecutionLimits(),
        *,
        slots: int = 2,
    ) -> None:
        """Run queries on ``kb_graphs`` of ``store``; at most ``slots`` queries at a time."""
        self.description = description
        self._store = store
        self._graphs = list(kb_graphs)
        self._limits = limits
        self._slots = threading.BoundedSemaphore(max(1, slots))

    def _evaluate(self, sparql: str, deadline: float) -> Execution:
        try:
            result = self._store.query(
                with_known_prefixes(sparql), default_graph=list(self._graphs), named_graphs=[]
            )
        except StoreError as exc:
            return Execution(None, f"the query failed: {str(exc)[:300]}")
        if isinstance(result, QueryBoolean):
            return Execution(AnswerSet(boolean=bool(result)))
        if not isinstance(result, QuerySolutions):
            return Execution(None, "only SELECT and ASK queries are run")
        names = [v.value for v in result.variables]
        values: dict[AnswerValue, None] = {}
        kept: list[tuple[str | None, ...]] = []
        rows = 0
        try:
            for row in result:
                rows += 1
                if rows > self._limits.max_rows or time.monotonic() > deadline:
                    break
                kept.append(tuple(_lexical(row[name]) for name in names))
                for name in names:
                    term = row[name]
                    if isinstance(term, NamedNode | Literal):  # blank nodes are no answers
                        values.setdefault(term)
        except (OSError, RuntimeError) as exc:
            return Execution(None, f"the query failed: {str(exc)[:300]}")
        if time.monotonic() > deadline:
            return Execution(None, self._late())
        answers = AnswerSet(tuple(values), None, tuple(names), has_bindings=True)
        return Execution(answers, _cut(rows, self._limits.max_rows), tuple(kept))

    def _late(self) -> str:
        return f"the query ran longer than {self._limits.timeout_seconds:g} s"

    def run(self, sparql: str) -> Execution:
        """Run ``sparql`` on the knowledge base within the limits."""
        refused = refusal(sparql)
        if refused is not None:
            return Execution(None, refused)
        timeout = self._limits.timeout_seconds
        deadline = time.monotonic() + timeout
        if not self._slots.acquire(timeout=timeout):
            return Execution(None, "the knowledge base is busy with queries that ran too long")
        box: list[Execution] = []
        done = threading.Event()

        def work() -> None:
            try:
                box.append(self._evaluate(sparql, deadline))
            finally:
                self._slots.release()
                done.set()

        threading.Thread(target=work, name="qabench-system-query", daemon=True).start()
        if not done.wait(max(0.0, deadline - time.monotonic())) or not box:
            return Execution(None, self._late())
        return box[0]


class EndpointExecutor:
    """Runs system queries on a SPARQL endpoint (SPARQL 1.1 Protocol, JSON results): each query
    is sent by GET and, when that fails, once more by POST (as the 2026 TEXT2SPARQL client
    does); a query that fails both ways gives no results (scored as an empty answer)."""

    def __init__(
        self,
        url: str,
        limits: ExecutionLimits = ExecutionLimits(),
    ) -> None:
        """Send queries to the endpoint at ``url``."""
        self.description = url
        self._url = url
        self._limits = limits

    def _fetch(self, sparql: str) -> bytes:
        """Return the result body: sent by GET, and once more by POST when that fails (the
        2026 client's rule: long queries, endpoints refusing GET); both within one deadline
        (``store.remote.fetch_results``, the one bounded SPARQL-over-HTTP exchange).

        Raises:
            KnowledgeBaseError: both attempts failed (the POST's reason) or the result is too
                large or too slow.
        """
        limits = self._limits
        try:
            return fetch_results(
                self._url,
                with_known_prefixes(sparql),
                timeout=limits.timeout_seconds,
                max_bytes=limits.max_bytes,
            )
        except EndpointFailure as exc:
            raise KnowledgeBaseError(str(exc)) from exc

    def run(self, sparql: str) -> Execution:
        """Run ``sparql`` on the endpoint within the limits."""
        refused = refusal(sparql)
        if refused is not None:
            return Execution(None, refused)
        try:
            document = json.loads(self._fetch(sparql))
        except KnowledgeBaseError as exc:
            return Execution(None, str(exc))
        except (httpx.HTTPError, OSError) as exc:
            return Execution(None, f"the endpoint failed: {str(exc)[:300]}")
        except ValueError:
            return Execution(None, "the endpoint did not answer SPARQL JSON results")
        if not isinstance(document, dict):
            return Execution(None, "the endpoint did not answer SPARQL JSON results")
        results = document.get("results")
        bindings = results.get("bindings") if isinstance(results, dict) else None
        rows = len(bindings) if isinstance(bindings, list) else 0
        if isinstance(bindings, list) and rows > self._limits.max_rows:
            document = {**document, "results": {"bindings": bindings[: self._limits.max_rows]}}
        try:
            answers = answer_set_from_json(document)
        except KnowledgeBaseError as exc:
            return Execution(None, str(exc))
        except (TypeError, AttributeError, KeyError):  # bindings that are not JSON objects
            return Execution(None, "the endpoint did not answer SPARQL JSON results")
        if answers.boolean is not None:
            return Execution(answers, _cut(rows, self._limits.max_rows))
        answers = replace(answers, has_bindings=True)
        names = [str(v) for v in (document.get("head") or {}).get("vars", [])]
        table = tuple(
            tuple(_cell(row.get(name)) for name in names)
            for row in (document.get("results") or {}).get("bindings", [])
            if isinstance(row, dict)
        )
        return Execution(answers, _cut(rows, self._limits.max_rows), table)


def open_executor(
    store: RdfStore | None,
    base: str,
    spec: str,
    limits: ExecutionLimits = ExecutionLimits(),
) -> StoreExecutor | EndpointExecutor:
    """Return the executor of the knowledge base ``spec`` names: an endpoint URL or a KB name.

    Raises:
        KnowledgeBaseError: if ``spec`` names no loaded knowledge base.
    """
    if is_endpoint(spec):
        return EndpointExecutor(spec, limits)
    graph = kb_graph_of(store, base, spec) if store is not None else None
    if store is None or graph is None:
        raise KnowledgeBaseError(
            f"No knowledge base {spec!r} in the store to run SPARQL-only answers on; load one "
            f"with `qabench kb load FILE --name {spec}` or give a SPARQL endpoint URL"
        )
    return StoreExecutor(store, [graph], iris.kb_iri(base, spec).value, limits)

"""The public SPARQL 1.1 Protocol endpoint ``/sparql`` (read-only).

GET ``query=``, POST form and POST ``application/sparql-query``; ``default-graph-uri`` and
``named-graph-uri``. Before a query reaches a worker it is checked here: length limit, no
``SERVICE`` (400), updates refused (403; they belong on ``/update``), and its dataset (from the
protocol or ``FROM``) intersected with the graphs the reader may see. Evaluation happens in
``server.sparql.workers`` with a hard time limit (503 + ``Retry-After``) and a row cap announced in
the ``X-Result-Truncated`` header. A bare GET answers the service description, or the query page for
browsers. Result forms are negotiated like every resource (``server.web.negotiation``); results
carry an entity tag of the query, its dataset and form at the store generation. CORS is open on
these read-only responses (``server.web.headers``).

The steps between reading a request and a worker's answer (``read_query``, ``prepare``,
``query_job``, ``result_headers``) take no Flask request: the event-loop front
(``server.front``) answers anonymous queries with them, and hands this view what it
cannot answer itself (errors of every kind, the HTML page) with the outcome it already has.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import NamedTuple

from flask import Blueprint, Response, request

from server.config import ServerConfig
from server.replica.views import View, ViewNotReadyError
from server.services import Services, Visibility, services
from server.sparql import analysis, page
from server.sparql.jobs import QueryJob, QueryOutcome
from server.sparql.protocol import (
    FORM,
    QUERY_BODY,
    ProtocolQuery,
    ProtocolRequest,
    format_parameters,
    read_query,
)
from server.sparql.workers import (
    OverBudgetError,
    PoolBusyError,
    PoolError,
    QueryMemoryError,
    QueryTimeoutError,
)
from server.web import caching
from server.web.auth import request_tokens
from server.web.headers import grant, preflight
from server.web.limits import check_rate, client_slot, current_client, limits, too_many
from server.web.negotiation import Choice, negotiate_accept, split_formats
from server.web.problems import Problem
from server.web.representations import GRAPH_FORMATS, HTML, NTRIPLES, RESULT_FORMATS, parse_accept
from store.errors import QuerySyntaxError
from vocab.project import QAB

bp = Blueprint("sparql", __name__)

RESULT_TYPES = tuple(r.media_type for r in RESULT_FORMATS if r != HTML)
GRAPH_TYPES = tuple(r.media_type for r in GRAPH_FORMATS if r != HTML)
# The WSGI environ key under which the event-loop front hands a request it evaluated (or could
# not) to this view (a ``Handover``); clients cannot set it (their headers become HTTP_*).
HANDOVER = "qabench.sparql.handover"


class Handover(NamedTuple):
    """What the front found for a request it hands over (it counted the request's rate):
    the outcome, the pool's error, or the client's limit that refused it."""

    outcome: QueryOutcome | None = None
    error: PoolError | None = None
    refused: Problem | None = None


def protocol_request() -> ProtocolRequest:
    """Return the protocol's view of the current Flask request."""
    mimetype = request.mimetype
    return ProtocolRequest(
        request.method,
        request.args,
        request.form if mimetype == FORM else None,
        mimetype,
        request.mimetype_params,
        request.get_data() if mimetype == QUERY_BODY else b"",
        request.headers.get("Accept"),
    )


# Verdicts of _check kept per query text (by digest, so memory does not grow with the texts).
CACHED_CHECKS = 4096
_Verdict = analysis.QueryFacts | Callable[[], Exception]


class _Checks:
    """The checks' verdicts on recent query texts (a bounded LRU, safe across threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[bytes, int, int, str], _Verdict] = OrderedDict()

    def verdict(self, query: str, base_iri: str, settings: ServerConfig) -> analysis.QueryFacts:
        digest = hashlib.blake2b(query.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        key = (digest, settings.max_query_length, settings.max_query_nesting, base_iri)
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
        if found is None:
            try:
                found = _check(query, base_iri, settings)
            except (Problem, QuerySyntaxError) as exc:
                found = _replay(exc)
            with self._lock:
                self._kept[key] = found
                while len(self._kept) > CACHED_CHECKS:
                    self._kept.popitem(last=False)
        if isinstance(found, analysis.QueryFacts):
            return found
        raise found()


def _replay(exc: Exception) -> Callable[[], Exception]:
    # A fresh exception each time: raising one object again would grow its traceback.
    if isinstance(exc, Problem):
        problem = exc
        return lambda: dataclasses.replace(problem)
    assert isinstance(exc, QuerySyntaxError)
    message, line, column = str(exc), exc.line, exc.column
    return lambda: QuerySyntaxError(message, line, column)


_CHECKS = _Checks()


def _check(query: str, base_iri: str, settings: ServerConfig) -> analysis.QueryFacts:
    limit = settings.max_query_length
    if len(query) > limit:
        raise Problem(
            413,
            f"The query is {len(query)} characters long; this endpoint accepts at most {limit}.",
            extensions={"limit": limit},
        )
    # Deep nesting crashes parsers (recursion); refuse it before any parser reads the query
    # (the tokens of analyse come from a regular expression, not a recursive parser).
    facts = analysis.analyse(query, base_iri)
    depth, deepest = facts.depth, settings.max_query_nesting
    if depth > deepest:
        raise Problem(
            400,
            f"The query nests groups or expressions {depth} levels deep; this endpoint accepts "
            f"at most {deepest}. Flatten it (join patterns in one group, use VALUES or IN).",
            QAB.QueryTooComplex,
            "Query too complex",
            {"depth": depth, "limit": deepest},
        )
    if facts.uses_service:
        raise Problem(
            400,
            "SERVICE is disabled on this endpoint: it would make the server "
            "fetch other sites. Query the remote endpoint directly instead.",
            QAB.FederationRefused,
            "Federation refused",
        )
    if facts.form is None:
        raise QuerySyntaxError("Malformed SPARQL: expected SELECT, ASK, CONSTRUCT or DESCRIBE")
    return facts


def _restrict(names: Sequence[str], visibility: Visibility) -> tuple[str, ...]:
    # Graphs the reader may not see behave like empty graphs: nothing reveals they exist.
    return tuple(n for n in names if n in visibility.names)


def _dataset(
    facts: analysis.QueryFacts, default: list[str], named: list[str], vis: Visibility
) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None, bool]:
    """Return the dataset (None: every graph of the view) and whether it needs opened graphs.

    The view a query runs over holds exactly the graphs its reader may see, so without a
    dataset of its own the query gets the view's union default graph; a dataset the query or
    the protocol names is restricted to the visible graphs first.
    """
    if not default and not named:
        default, named = list(facts.dataset.default), list(facts.dataset.named)
    opened = {g.value for g in vis.unlocked}
    if default or named:
        chosen_default, chosen_named = _restrict(default, vis), _restrict(named, vis)
        return chosen_default, chosen_named, bool(opened & {*chosen_default, *chosen_named})
    return None, None, bool(opened)


# Choices of result form kept per (query kind, Accept, format parameters): clients repeat them.
CACHED_CHOICES = 256
_CHOICES: OrderedDict[tuple[object, ...], Choice] = OrderedDict()
_CHOICES_LOCK = threading.Lock()


def _negotiate(req: ProtocolRequest, graph: bool) -> Choice:
    """Negotiate the result form; a client that only names forms of the other query kind gets
    this kind's default (RFC 9110 lets a server disregard Accept rather than answer 406).

    rdflib's SPARQLStore, for one, sends the same Accept (say, SPARQL JSON results) for every
    query; a CONSTRUCT then gets Turtle, which it reads. The choice depends on the offered
    forms, ``Accept`` and the ``format`` parameters only, so it is kept for the next request
    that sends the same (a refusal is not kept).
    """
    formats = format_parameters(req)
    key = (graph, req.accept, *formats)
    with _CHOICES_LOCK:
        found = _CHOICES.get(key)
    if found is None:
        found = _choose(req, graph, formats)
        with _CHOICES_LOCK:
            _CHOICES[key] = found
            while len(_CHOICES) > CACHED_CHOICES:
                _CHOICES.popitem(last=False)
    return found


def _choose(req: ProtocolRequest, graph: bool, formats: tuple[str, ...]) -> Choice:
    offered = GRAPH_FORMATS if graph else RESULT_FORMATS
    other = RESULT_FORMATS if graph else GRAPH_FORMATS
    names = split_formats([f for f in formats if f != "|"])
    try:
        return negotiate_accept(offered, req.accept or "", names)
    except Problem as problem:
        ranges = parse_accept(req.accept or "")
        scores = [rep.quality(ranges) for rep in other if rep != HTML]
        names_other = any(q > 0 and specificity == 2 for q, specificity in scores)
        if problem.status != 406 or not names_other:
            raise
        return Choice(offered[0], "default")


class Prepared(NamedTuple):
    """A checked query: its facts, the chosen form, its entity tag and its dataset."""

    query: str
    facts: analysis.QueryFacts
    choice: Choice
    etag: str
    default: tuple[str, ...] | None
    named: tuple[str, ...] | None
    private: bool
    # whether the reader's tokens opened nothing: validators follow public content only
    public: bool = True

    @property
    def html(self) -> bool:
        """Return whether the results go to a person (the HTML results page)."""
        return self.choice.rep.key == HTML.key  # keys name one form among those offered

    @property
    def graph(self) -> bool:
        """Return whether the query makes a graph (CONSTRUCT, DESCRIBE)."""
        return self.facts.form in ("CONSTRUCT", "DESCRIBE")


def prepare(svc: Services, req: ProtocolRequest, found: ProtocolQuery, vis: Visibility) -> Prepared:
    """Check the query of ``req``, choose its form and restrict its dataset to ``vis``.

    Raises:
        Problem: 400/413 for refused queries, 406 when no form is acceptable.
        QuerySyntaxError: when the query does not parse.
    """
    query = found.text
    assert query is not None
    facts = _CHECKS.verdict(query, f"{svc.base}/sparql", svc.config.server)
    graph = facts.form in ("CONSTRUCT", "DESCRIBE")
    choice = _negotiate(req, graph)
    public = not vis.unlocked
    etag = svc.etag(
        "sparql", query, *found.default, "|", *found.named, choice.rep.key, vis.key, public=public
    )
    default, named, private = _dataset(facts, found.default, found.named, vis)
    return Prepared(query, facts, choice, etag, default, named, private, public)


def query_job(svc: Services, prepared: Prepared, vis: Visibility, view: View) -> QueryJob:
    """Return the job of ``prepared`` over ``view`` (the reader's token view if it opened
    private graphs)."""
    if prepared.private:
        view = svc.views.token_view(view, vis.unlocked)
    settings = svc.config.server
    media = prepared.choice.rep.media_type
    html, graph = prepared.html, prepared.graph
    return QueryJob(
        prepared.query,
        f"{svc.base}/sparql",
        str(view.path),
        prepared.default,
        prepared.named,
        RESULT_TYPES[0] if html else (None if graph else media),
        NTRIPLES.media_type if html else (media if graph else None),
        settings.max_result_rows,
        f"{svc.base}/sparql#truncation",
        settings.max_result_bytes,
        prepared.facts.form,
    )


def view_problem(exc: ViewNotReadyError) -> Problem:
    """Return the 503 for a query that finds no view of the current generation."""
    return Problem(
        503,
        f"{exc}; try again shortly.",
        QAB.QueryTimeout,
        "Endpoint starting",
        headers={"Retry-After": "5"},
    )


def result_headers(outcome: QueryOutcome, settings: ServerConfig) -> list[tuple[str, str]]:
    """Return the ``Content-Type`` and result headers of a successful ``outcome``."""
    media = outcome.media_type
    found = [
        ("Content-Type", f"{media}; charset=utf-8" if media.startswith("text/") else media),
        ("X-Result-Rows", str(outcome.rows)),
    ]
    if outcome.truncated:
        found += [
            ("X-Result-Truncated", "true"),
            ("X-Result-Row-Limit", str(settings.max_result_rows)),
        ]
        if outcome.byte_limited:
            found.append(("X-Result-Byte-Limit", str(settings.max_result_bytes)))
    return found


def _respond(outcome: QueryOutcome, settings: ServerConfig) -> Response:
    if outcome.failure == "syntax":
        raise QuerySyntaxError(outcome.message, outcome.line, outcome.column)
    if outcome.failure == "federation":
        raise Problem(400, outcome.message, QAB.FederationRefused, "Federation refused")
    if outcome.failure == "evaluation":
        raise Problem(400, f"The query could not be evaluated: {outcome.message}")
    if outcome.failure == "not-acceptable":
        offered = list(GRAPH_TYPES if outcome.form == "graph" else RESULT_TYPES)
        raise Problem(
            406,
            "No acceptable format for these results; available: " + ", ".join(offered),
            extensions={"available": offered},
        )
    return Response(outcome.data, headers=result_headers(outcome, settings))


def _evaluate(svc: Services, prepared: Prepared, vis: Visibility) -> QueryOutcome:
    """Evaluate ``prepared`` on the worker pool, or take what the front found for it.

    Raises:
        Problem: 429 when the client used its share of worker time, 503 when the time limit
            is hit or no worker or view can be had.
    """
    handover = request.environ.get(HANDOVER)
    settings = svc.config.server
    try:
        if isinstance(handover, Handover):
            if handover.refused is not None:
                raise handover.refused
            if handover.error is not None:
                raise handover.error
            if handover.outcome is not None:
                return handover.outcome
        try:
            job = query_job(svc, prepared, vis, svc.view())
        except ViewNotReadyError as exc:
            raise view_problem(exc) from exc
        # One client never holds every worker (server.queries_per_client).
        with client_slot(limits().queries, "SPARQL queries"):
            return svc.pool.run(job, current_client())
    except PoolError as exc:
        raise pool_problem(exc, svc.pool.timeout, settings.query_memory_mb) from exc


def pool_problem(exc: PoolError, timeout: float, memory_mb: int) -> Problem:
    """Return the problem that answers the pool's error ``exc``."""
    if isinstance(exc, OverBudgetError):
        return too_many(
            f"{exc}: try again in {exc.retry_after} s; queries that stop sooner (LIMIT, more "
            "specific patterns) use less of it.",
            exc.retry_after,
        )
    if isinstance(exc, QueryTimeoutError):
        return Problem(
            503,
            f"{exc}; it was stopped. Narrow it (LIMIT, more specific patterns) and try again.",
            QAB.QueryTimeout,
            "Query timeout",
            {"timeout_seconds": timeout},
            {"Retry-After": str(math.ceil(timeout))},
        )
    if isinstance(exc, QueryMemoryError):
        return Problem(
            503,
            f"{exc}; it was stopped. Narrow it (LIMIT, fewer or shorter computed values).",
            QAB.QueryOutOfMemory,
            "Query out of memory",
            {"memory_limit_mb": memory_mb},
            {"Retry-After": "2"},
        )
    if isinstance(exc, PoolBusyError):
        return Problem(
            503,
            f"{exc}; try again shortly.",
            QAB.QueryTimeout,
            "Endpoint busy",
            headers={"Retry-After": str(exc.retry_after)},
        )
    return Problem(
        503,
        f"{exc}. Try again; if it happens again the query probably needs too much memory.",
        QAB.QueryTimeout,
        "Query failed",
        headers={"Retry-After": "2"},
    )


@bp.route("/sparql", methods=["GET", "POST", "OPTIONS"])
def endpoint() -> Response:
    """Answer a SPARQL query, the service description, or the query page."""
    if request.method == "OPTIONS":
        return preflight()
    req = protocol_request()
    found = read_query(req)
    if found.text is None:
        return grant(page.service_description_or_page())
    svc = services()
    if HANDOVER not in request.environ:  # the front counted a request it hands over
        check_rate(limits().sparql, "SPARQL queries")
    vis = svc.visibility(request_tokens())
    prepared = prepare(svc, req, found, vis)
    modified = svc.modified_for(prepared.public)
    if caching.not_modified(prepared.etag, modified):
        response = caching.finish(
            Response(status=304),
            prepared.etag,
            weak=prepared.html,
            last_modified=modified,
            not_modified_now=True,
        )
        response.vary.add("Accept")
        return grant(_cache_rules(response, prepared))
    outcome = _evaluate(svc, prepared, vis)
    if prepared.html and outcome.failure is None:
        response = page.results_page(prepared.query, outcome)
    else:
        response = _respond(outcome, svc.config.server)
        response.vary.add("Accept")
    caching.finish(response, prepared.etag, weak=prepared.html, last_modified=modified)
    # Query responses are reads whatever the method (server.web.headers also covers errors).
    return grant(_cache_rules(response, prepared))


def _cache_rules(response: Response, prepared: Prepared) -> Response:
    """Cache results as documents are cached: revalidated when public, never kept by shared
    caches (nor stored) when the reader's tokens opened something."""
    if prepared.public:
        response.headers["Cache-Control"] = caching.PUBLIC_CACHE
    else:
        response.headers["Cache-Control"] = caching.OPENED_CACHE
        response.vary.update(("Authorization", "Cookie"))
    return response

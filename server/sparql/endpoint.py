"""The public SPARQL 1.1 Protocol endpoint ``/sparql`` (read-only).

GET ``query=``, POST form and POST ``application/sparql-query``; ``default-graph-uri`` and
``named-graph-uri``. Before a query reaches a worker it is checked here: length limit, no
``SERVICE`` (400), updates refused (403; they belong on ``/update``), and its dataset (from the
protocol or ``FROM``) intersected with the graphs the reader may see. Evaluation happens in
``server.sparql.workers`` with a hard time limit (503 + ``Retry-After``) and a row cap announced in
the ``X-Result-Truncated`` header. A bare GET answers the service description, or the query page for
browsers. Result forms are negotiated like every resource (``server.web.negotiation``); results
carry an entity tag of the query, its dataset and form at the store generation. CORS is open on
these read-only responses (``server.web.cors``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

from flask import Blueprint, Response, request

from server.replica.views import ViewNotReadyError
from server.services import Visibility, services
from server.sparql import analysis, page
from server.sparql.jobs import QueryJob, QueryOutcome
from server.sparql.protocol import check_protocol
from server.sparql.workers import (
    OverBudgetError,
    PoolBusyError,
    PoolError,
    QueryMemoryError,
    QueryTimeoutError,
)
from server.web import caching, cors
from server.web.auth import request_tokens
from server.web.limits import check_rate, client_slot, current_client, limits, too_many
from server.web.negotiation import (
    GRAPH_FORMATS,
    HTML,
    NTRIPLES,
    RESULT_FORMATS,
    Choice,
    Representation,
    accept_quality,
    negotiate,
    parse_accept,
)
from server.web.problems import Problem
from store.errors import QuerySyntaxError
from vocab.project import QAB

bp = Blueprint("sparql", __name__)

RESULT_TYPES = tuple(r.media_type for r in RESULT_FORMATS if r != HTML)
GRAPH_TYPES = tuple(r.media_type for r in GRAPH_FORMATS if r != HTML)
_FORM = "application/x-www-form-urlencoded"


def _media_type() -> tuple[str, dict[str, str]]:
    return request.mimetype, request.mimetype_params


def _only(values: Sequence[str], name: str) -> str | None:
    if len(values) > 1:
        raise Problem(400, f"Send exactly one {name!r} parameter; this request has {len(values)}.")
    return values[0] if values else None


def _read_request() -> tuple[str | None, list[str], list[str]]:
    """Return (query, default-graph-uri values, named-graph-uri values) of the request."""
    default = request.args.getlist("default-graph-uri")
    named = request.args.getlist("named-graph-uri")
    if request.method in ("GET", "HEAD"):
        if "update" in request.args:
            raise Problem(
                400,
                "SPARQL Update is never accepted with GET (SPARQL 1.1 Protocol, "
                "section 2.2); this endpoint is read-only anyway.",
            )
        return _only(request.args.getlist("query"), "query"), default, named
    mimetype, params = _media_type()
    if mimetype == _FORM:
        if "update" in request.form:
            raise _read_only()
        default += request.form.getlist("default-graph-uri")
        named += request.form.getlist("named-graph-uri")
        query = _only(request.form.getlist("query"), "query")
        if query is None:
            raise Problem(400, "The form has no 'query' field.")
        return query, default, named
    if mimetype == "application/sparql-update":
        raise _read_only()
    if mimetype != "application/sparql-query":
        raise Problem(
            415,
            f"POST a query as {_FORM} (field 'query') or as "
            f"application/sparql-query; got {mimetype or 'no Content-Type'!r}.",
            extensions={"accepted": [_FORM, "application/sparql-query"]},
        )
    charset = params.get("charset", "utf-8").lower()
    if charset not in ("utf-8", "utf8"):
        raise Problem(415, f"Queries must be UTF-8 (SPARQL 1.1 Protocol); got charset={charset}.")
    try:
        return request.get_data().decode("utf-8"), default, named
    except UnicodeDecodeError as exc:
        raise Problem(400, f"The query is not valid UTF-8 at byte {exc.start}.") from exc


def _read_only() -> Problem:
    return Problem(
        403,
        "This endpoint is read-only. SPARQL Update is served at /update to "
        "holders of the admin token.",
        QAB.Forbidden,
    )


# Verdicts of _check kept per query text (by digest, so memory does not grow with the texts).
CACHED_CHECKS = 4096
_Verdict = analysis.QueryFacts | Callable[[], Exception]


class _Checks:
    """The checks' verdicts on recent query texts (a bounded LRU, safe across threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[bytes, int, int, str], _Verdict] = OrderedDict()

    def verdict(self, query: str, base_iri: str) -> analysis.QueryFacts:
        settings = services().config.server
        digest = hashlib.blake2b(query.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        key = (digest, settings.max_query_length, settings.max_query_nesting, base_iri)
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
        if found is None:
            try:
                found = _check(query, base_iri)
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


def _check(query: str, base_iri: str) -> analysis.QueryFacts:
    settings = services().config.server
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


def _negotiate(offered: Sequence[Representation], other: Sequence[Representation]) -> Choice:
    """Negotiate the result form; a client that only names forms of the other query kind gets
    this kind's default (RFC 9110 lets a server disregard Accept rather than answer 406).

    rdflib's SPARQLStore, for one, sends the same Accept (say, SPARQL JSON results) for every
    query; a CONSTRUCT then gets Turtle, which it reads. The choice depends on the offered
    forms, ``Accept`` and the ``format`` parameters only, so it is kept for the next request
    that sends the same (a refusal is not kept).
    """
    form = request.form.getlist("format") if request.mimetype == _FORM else ()
    key = (
        tuple(offered),
        request.headers.get("Accept"),
        *request.args.getlist("format"),
        "|",
        *form,
    )
    with _CHOICES_LOCK:
        found = _CHOICES.get(key)
    if found is None:
        found = _choose(offered, other)
        with _CHOICES_LOCK:
            _CHOICES[key] = found
            while len(_CHOICES) > CACHED_CHOICES:
                _CHOICES.popitem(last=False)
    return found


def _choose(offered: Sequence[Representation], other: Sequence[Representation]) -> Choice:
    try:
        return negotiate(offered)
    except Problem as problem:
        ranges = parse_accept(request.headers.get("Accept", ""))
        scores = [accept_quality(rep, ranges) for rep in other if rep != HTML]
        names_other = any(q > 0 and specificity == 2 for q, specificity in scores)
        if problem.status != 406 or not names_other:
            raise
        return Choice(offered[0], "default")


def _respond(outcome: QueryOutcome, limit: int, byte_limit: int) -> Response:
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
    response = Response(outcome.data, mimetype=outcome.media_type)
    if outcome.media_type.startswith("text/"):
        response.mimetype_params["charset"] = "utf-8"
    response.headers["X-Result-Rows"] = str(outcome.rows)
    if outcome.truncated:
        response.headers["X-Result-Truncated"] = "true"
        response.headers["X-Result-Row-Limit"] = str(limit)
        if outcome.byte_limited:
            response.headers["X-Result-Byte-Limit"] = str(byte_limit)
    return response


def run_query(
    query: str,
    default: list[str],
    named: list[str],
    *,
    html: bool,
    results_media: str | None,
    rdf_media: str | None,
    facts: analysis.QueryFacts | None = None,
    vis: Visibility | None = None,
) -> QueryOutcome:
    """Check, restrict and evaluate one public query on the worker pool.

    Raises:
        Problem: 400/413 for refused queries, 429 when the client used its share of worker
            time, 503 when the time limit is hit or no worker can be had.
        QuerySyntaxError: when the query does not parse.
    """
    svc = services()
    base_iri = f"{svc.base}/sparql"
    if facts is None:
        facts = _CHECKS.verdict(query, base_iri)
    if vis is None:
        vis = svc.visibility(request_tokens())
    chosen_default, chosen_named, private = _dataset(facts, default, named, vis)
    settings = svc.config.server
    try:
        view = svc.view()
        if private:
            view = svc.views.token_view(view, vis.unlocked)
    except ViewNotReadyError as exc:
        raise Problem(
            503,
            f"{exc}; try again shortly.",
            QAB.QueryTimeout,
            "Endpoint starting",
            headers={"Retry-After": "5"},
        ) from exc
    job = QueryJob(
        query,
        base_iri,
        str(view.path),
        chosen_default,
        chosen_named,
        RESULT_TYPES[0] if html else results_media,
        NTRIPLES.media_type if html else rdf_media,
        settings.max_result_rows,
        f"{svc.base}/sparql#truncation",
        settings.max_result_bytes,
        facts.form,
    )
    try:
        return svc.pool.run(job, current_client())
    except PoolError as exc:
        raise _pool_problem(exc, svc.pool.timeout, settings.query_memory_mb) from exc


def _pool_problem(exc: PoolError, timeout: float, memory_mb: int) -> Problem:
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
        return cors.preflight()
    query, default, named = _read_request()
    check_protocol(default, named)
    if query is None:
        return _with_cors(page.service_description_or_page())
    svc, svc_limits = services(), limits()
    check_rate(svc_limits.sparql, "SPARQL queries")
    facts = _CHECKS.verdict(query, f"{svc.base}/sparql")
    graph = facts.form in ("CONSTRUCT", "DESCRIBE")
    choice = _negotiate(
        GRAPH_FORMATS if graph else RESULT_FORMATS, RESULT_FORMATS if graph else GRAPH_FORMATS
    )
    html = choice.rep == HTML
    media = choice.rep.media_type
    vis = svc.visibility(request_tokens())
    etag = svc.etag("sparql", query, *default, "|", *named, choice.rep.key, vis.key)
    if caching.not_modified(etag, svc.modified):
        response = caching.finish(
            Response(status=304),
            etag,
            weak=html,
            last_modified=svc.modified,
            not_modified_now=True,
        )
        response.vary.add("Accept")
        return _with_cors(response)
    # One client never holds every worker (server.queries_per_client).
    with client_slot(svc_limits.queries, "SPARQL queries"):
        outcome = run_query(
            query,
            default,
            named,
            html=html,
            results_media=None if graph else media,
            rdf_media=media if graph else None,
            facts=facts,
            vis=vis,
        )
    if html and outcome.failure is None:
        response = page.results_page(query, outcome)
    else:
        settings = svc.config.server
        response = _respond(outcome, settings.max_result_rows, settings.max_result_bytes)
        response.vary.add("Accept")
    caching.finish(response, etag, weak=html, last_modified=svc.modified)
    return _with_cors(response)


def _with_cors(response: Response) -> Response:
    # Query responses are reads whatever the method (server.web.cors also covers errors).
    return cors.grant(response)

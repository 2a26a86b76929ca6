"""The public SPARQL 1.1 Protocol endpoint ``/sparql`` (read-only).

GET ``query=``, POST form and POST ``application/sparql-query``; ``default-graph-uri`` and
``named-graph-uri``. Before a query reaches a worker it is checked here: length limit, no
``SERVICE`` (400), updates refused (403; they belong on ``/update``), and its dataset (from the
protocol or ``FROM``) intersected with the graphs the reader may see. Evaluation happens in
``server.sparql.workers`` with a hard time limit (503 + ``Retry-After``) and a row cap announced in
the ``X-Result-Truncated`` header. A bare GET answers the service description, or the query page for
browsers. CORS is open on these read-only responses.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from flask import Blueprint, Response, request

from server.services import Visibility, services
from server.sparql import analysis, page
from server.sparql.jobs import QueryJob, QueryOutcome
from server.sparql.workers import PoolBusyError, PoolError, QueryTimeoutError
from server.web.auth import request_tokens
from server.web.negotiation import JSONLD, NQUADS, NTRIPLES, RDFXML, TURTLE
from server.web.problems import Problem
from store.errors import QuerySyntaxError
from vocab.project import QAB

bp = Blueprint("sparql", __name__)

RESULT_TYPES = (
    "application/sparql-results+json",
    "application/sparql-results+xml",
    "text/csv",
    "text/tab-separated-values",
)
GRAPH_TYPES = tuple(r.media_type for r in (TURTLE, NTRIPLES, RDFXML, JSONLD, NQUADS))
_FORMAT_NAMES = {
    "json": RESULT_TYPES[0],
    "xml": RESULT_TYPES[1],
    "csv": RESULT_TYPES[2],
    "tsv": RESULT_TYPES[3],
    "ttl": TURTLE.media_type,
    "turtle": TURTLE.media_type,
    "nt": NTRIPLES.media_type,
    "rdf": RDFXML.media_type,
    "jsonld": JSONLD.media_type,
    "nq": NQUADS.media_type,
    "html": "text/html",
}
_CORS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Expose-Headers": (
        "X-Result-Truncated, X-Result-Row-Limit, X-Result-Rows, Retry-After"
    ),
}
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


def _check(query: str, base_iri: str) -> analysis.QueryFacts:
    limit = services().config.server.max_query_length
    if len(query) > limit:
        raise Problem(
            413,
            f"The query is {len(query)} characters long; this endpoint accepts at most {limit}.",
            extensions={"limit": limit},
        )
    facts = analysis.analyse(query, base_iri)
    if facts.uses_service:
        raise Problem(
            400,
            "SERVICE is disabled on this endpoint: it would make the server "
            "fetch other sites. Query the remote endpoint directly instead.",
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
    if not default and not named:
        default, named = list(facts.dataset.default), list(facts.dataset.named)
    if default or named:
        chosen_default, chosen_named = _restrict(default, vis), _restrict(named, vis)
        opened = {g.value for g in vis.unlocked}
        uses_private = bool(opened & (set(chosen_default) | set(chosen_named)))
        return chosen_default, chosen_named, uses_private
    if vis.unlocked:
        every = tuple(g.value for g in vis.graphs)
        return every, every, True
    return None, None, False


def _best(candidates: Sequence[str]) -> tuple[str | None, bool]:
    """Return the best media type among ``candidates`` and whether HTML beats it."""
    fmt = request.args.get("format") or request.form.get("format")
    if fmt:
        chosen = _FORMAT_NAMES.get(fmt.lower(), fmt.lower())
        if chosen == "text/html":
            return candidates[0], True
        return (chosen if chosen in candidates else None), False
    accept = request.accept_mimetypes
    if not accept:
        return candidates[0], False
    best = accept.best_match(candidates)
    if best is None and accept["application/json"]:
        best = candidates[0] if candidates[0].endswith("json") else JSONLD.media_type
    html = accept.quality("text/html") > (accept.quality(best) if best else 0)
    return best, html and request.method in ("GET", "POST")


def _respond(outcome: QueryOutcome, limit: int) -> Response:
    if outcome.failure == "syntax":
        raise QuerySyntaxError(outcome.message, outcome.line, outcome.column)
    if outcome.failure == "evaluation":
        raise Problem(400, f"The query could not be evaluated: {outcome.message}")
    if outcome.failure == "not-acceptable":
        offered = list(GRAPH_TYPES if outcome.form == "graph" else RESULT_TYPES)
        raise Problem(
            406,
            "No acceptable format for these results; available: " + ", ".join(offered),
            extensions={"available": offered},
        )
    response = Response(outcome.body, mimetype=outcome.media_type)
    if outcome.media_type.startswith("text/"):
        response.mimetype_params["charset"] = "utf-8"
    response.headers["X-Result-Rows"] = str(outcome.rows)
    if outcome.truncated:
        response.headers["X-Result-Truncated"] = "true"
        response.headers["X-Result-Row-Limit"] = str(limit)
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
) -> QueryOutcome:
    """Check, restrict and evaluate one public query on the worker pool.

    Raises:
        Problem: 400/413 for refused queries, 503 when the time limit is hit or all workers
            are busy.
        QuerySyntaxError: when the query does not parse.
    """
    svc = services()
    base_iri = f"{svc.base}/sparql"
    if facts is None:
        facts = _check(query, base_iri)
    vis = svc.visibility(request_tokens())
    chosen_default, chosen_named, private = _dataset(facts, default, named, vis)
    limit = svc.config.server.max_result_rows
    job = QueryJob(
        query,
        base_iri,
        chosen_default,
        chosen_named,
        private,
        RESULT_TYPES[0] if html else results_media,
        NTRIPLES.media_type if html else rdf_media,
        limit,
        f"{svc.base}/sparql#truncation",
    )
    try:
        return svc.pool.run(job, svc.snapshot())
    except QueryTimeoutError as exc:
        wait = str(math.ceil(svc.pool.timeout))
        raise Problem(
            503,
            f"{exc}; it was stopped. Narrow it (LIMIT, more specific patterns) and try again.",
            QAB.QueryTimeout,
            "Query timeout",
            {"timeout_seconds": svc.pool.timeout},
            {"Retry-After": wait},
        ) from exc
    except PoolBusyError as exc:
        raise Problem(
            503,
            f"{exc}; try again shortly.",
            QAB.QueryTimeout,
            "Endpoint busy",
            headers={"Retry-After": "2"},
        ) from exc
    except PoolError as exc:
        raise Problem(
            503,
            f"{exc}. Try again; if it happens again the query probably needs too much memory.",
            QAB.QueryTimeout,
            "Query failed",
            headers={"Retry-After": "2"},
        ) from exc


@bp.route("/sparql", methods=["GET", "POST", "OPTIONS"])
def endpoint() -> Response:
    """Answer a SPARQL query, the service description, or the query page."""
    if request.method == "OPTIONS":
        return _preflight()
    query, default, named = _read_request()
    if query is None:
        return _with_cors(page.service_description_or_page())
    facts = _check(query, f"{services().base}/sparql")
    if facts.form in ("CONSTRUCT", "DESCRIBE"):
        results_media, html = None, False
        rdf_media, html = _best(GRAPH_TYPES)
    else:
        rdf_media = None
        results_media, html = _best(RESULT_TYPES)
    outcome = run_query(
        query,
        default,
        named,
        html=html,
        results_media=results_media,
        rdf_media=rdf_media,
        facts=facts,
    )
    if html and outcome.failure is None:
        return _with_cors(page.results_page(query, outcome))
    response = _respond(outcome, services().config.server.max_result_rows)
    response.headers.add("Vary", "Accept")
    return _with_cors(response)


def _with_cors(response: Response) -> Response:
    response.headers.update(_CORS)
    return response


def _preflight() -> Response:
    response = Response(status=204)
    response.headers.update(_CORS)
    response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
    response.headers["Access-Control-Allow-Headers"] = "Accept, Content-Type"
    response.headers["Access-Control-Max-Age"] = "86400"
    return response


@bp.after_request
def _cors_on_errors(response: Response) -> Response:
    # Problems raised by the endpoint are read-only responses too; scripts should see them.
    if request.path == "/sparql" and "Access-Control-Allow-Origin" not in response.headers:
        response.headers.update(_CORS)
    return response

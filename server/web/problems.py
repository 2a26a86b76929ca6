"""HTTP errors as RFC 9457 problems: the ``Problem`` exception, its rendering, and error mapping.

JSON clients get ``application/problem+json`` with ``type`` (a problem IRI in our vocabulary,
whose page explains it), ``title``, ``status``, ``detail``, ``instance`` and extension members
(``line``, ``column``, ``allowed``, ``request_id``). Browsers get ``error.html`` with the same
facts. Domain errors from the packages map to statuses here; anything else is logged with its
traceback and a request id, and answered 500 without internals (the one catch-all allowed).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

from flask import Flask, Response, render_template, request
from pyoxigraph import NamedNode
from werkzeug.exceptions import HTTPException

from evaluators.errors import (
    AnswerFileError,
    DatasetFormatError,
    DatasetNameConflictError,
    DatasetTooLargeError,
    EvaluationError,
    UnknownDatasetError,
    UnknownSubExperimentError,
)
from server.web.headers import request_id
from server.web.representations import preferred
from store.errors import (
    QuerySyntaxError,
    RdfSyntaxError,
    StoreError,
    StoreFullError,
    StoreLockedError,
    UnsupportedFormatError,
)
from vocab.project import QAB

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"

# Extension members are JSON scalars or lists of strings.
Extension = str | int | float | bool | list[str] | None

_BY_STATUS: dict[int, tuple[NamedNode, str]] = {
    400: (QAB.BadRequest, "Bad request"),
    401: (QAB.Forbidden, "Authentication required"),
    403: (QAB.Forbidden, "Forbidden"),
    404: (QAB.NotFound, "Not found"),
    405: (QAB.MethodNotAllowed, "Method not allowed"),
    406: (QAB.NotAcceptable, "Not acceptable"),
    409: (QAB.Conflict, "Conflict"),
    413: (QAB.PayloadTooLarge, "Payload too large"),
    415: (QAB.UnsupportedMediaType, "Unsupported media type"),
    429: (QAB.TooManyRequests, "Too many requests"),
    500: (QAB.InternalError, "Internal error"),
    503: (QAB.QueryTimeout, "Service unavailable"),
}


@dataclass(eq=False)
class Problem(Exception):
    """An HTTP error with everything its problem document needs.

    Attributes:
        status: the HTTP status.
        detail: what went wrong for this request and what to do next.
        type: the problem type IRI (defaults by status).
        title: a short, stable summary of the type (defaults by status).
        extensions: extra members such as ``line``, ``column`` or ``allowed``.
        headers: extra response headers (``Allow``, ``Retry-After``).
    """

    status: int
    detail: str
    type: NamedNode | None = None
    title: str | None = None
    extensions: dict[str, Extension] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        Exception.__init__(self, self.detail)
        default_type, default_title = _BY_STATUS.get(self.status, (QAB.BadRequest, "Error"))
        if self.type is None:
            self.type = default_type
        if self.title is None:
            self.title = default_title


def prefers_html() -> bool:
    """Return whether the client prefers an HTML page to a (problem) JSON document.

    Read with the one Accept parser (``server.web.representations``): JSON wins ties, and no
    header at all means a script.
    """
    if not request.headers.get("Accept", "").strip():
        return False
    accept = request.headers.get("Accept", "")
    return preferred([[PROBLEM_JSON, "application/json"], ["text/html"]], accept) == 1


def render_problem(problem: Problem) -> Response:
    """Return the response for ``problem`` (HTML for browsers, problem JSON otherwise)."""
    assert problem.type is not None and problem.title is not None
    members: dict[str, Extension] = {
        "type": problem.type.value,
        "title": problem.title,
        "status": problem.status,
        "detail": problem.detail,
        "instance": request.full_path.rstrip("?") if request else None,
        "request_id": request_id(),
    }
    for key, value in problem.extensions.items():
        members.setdefault(key, value)
    if prefers_html():
        local = problem.type.value.rsplit("#", 1)[-1]
        body = render_template("error.html", problem=members, type_anchor=local)
        response = Response(body, status=problem.status, mimetype="text/html")
    else:
        response = Response(status=problem.status, mimetype=PROBLEM_JSON)
        response.set_data(_json(members))
    response.headers.update(problem.headers)
    response.headers["Vary"] = "Accept"
    return response


def _json(members: dict[str, Extension]) -> bytes:
    return json.dumps(members, ensure_ascii=False).encode("utf-8")


def problem_from_error(exc: Exception) -> Problem | None:
    """Map a domain error from the packages to a problem (``None`` if it is not one).

    Args:
        exc: the exception a view raised.
    """
    if isinstance(exc, QuerySyntaxError):
        return Problem(
            400,
            str(exc),
            QAB.MalformedQuery,
            "Malformed SPARQL",
            {"line": exc.line, "column": exc.column},
        )
    if isinstance(exc, RdfSyntaxError):
        return Problem(
            400,
            str(exc),
            QAB.MalformedDataset,
            "Malformed RDF",
            {"line": exc.line, "column": exc.column},
        )
    if isinstance(exc, DatasetTooLargeError):
        return Problem(413, str(exc))
    if isinstance(exc, DatasetFormatError):
        return Problem(
            400,
            str(exc),
            QAB.MalformedDataset,
            "Malformed dataset",
            {"line": exc.line, "column": exc.column},
        )
    if isinstance(exc, UnknownDatasetError | UnknownSubExperimentError):
        return Problem(404, str(exc))
    if isinstance(exc, DatasetNameConflictError):
        return Problem(409, str(exc))
    if isinstance(exc, AnswerFileError | EvaluationError):
        return Problem(400, str(exc))
    if isinstance(exc, UnsupportedFormatError):
        return Problem(415, str(exc))
    if isinstance(exc, StoreLockedError):
        return Problem(409, str(exc))
    if isinstance(exc, StoreFullError):
        return Problem(
            507,
            "The server's disk is full: nothing was written. Try again later.",
            title="Insufficient storage",
            headers={"Retry-After": "60"},
        )
    if isinstance(exc, StoreError):
        return Problem(500, "The store could not answer this request.")
    return None


def _http_problem(exc: HTTPException) -> Problem:
    status = exc.code or 500
    headers: dict[str, str] = {}
    extensions: dict[str, Extension] = {}
    if status == 405:
        allowed = sorted(getattr(exc, "valid_methods", None) or [])
        headers["Allow"] = ", ".join(allowed)
        extensions["allowed"] = allowed
    detail = exc.description or exc.name
    if status == 404:
        detail = f"Nothing is published at {request.path}."
    # Our own title where we have one, so one status reads the same from every route.
    title = _BY_STATUS[status][1] if status in _BY_STATUS else exc.name
    return Problem(status, detail, title=title, extensions=extensions, headers=headers)


def register_error_handlers(app: Flask) -> None:
    """Answer every error raised in ``app`` with a problem."""

    @app.errorhandler(Problem)
    def _problem(exc: Problem) -> Response:
        return render_problem(exc)

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException) -> Response:
        return render_problem(_http_problem(exc))

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> Response:
        mapped = problem_from_error(exc)
        if mapped is not None and (mapped.status < 500 or isinstance(exc, StoreFullError)):
            if mapped.status >= 500:
                log.error("a write failed: %s [request %s]", exc, request_id())
            return render_problem(mapped)
        # Last-resort handler (STYLE section 4): log everything, reveal nothing.
        log.exception(
            "unhandled error in %s %s [request %s]", request.method, request.path, request_id()
        )
        return render_problem(
            Problem(
                500,
                f"Something went wrong on our side. Quote request id {request_id()} "
                "when you report it.",
            )
        )

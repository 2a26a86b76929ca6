"""The write path of the web UI: start an experiment, upload a dataset, publish an experiment.

* ``GET /experiments/new``: the experiment form (datasets from the store, web services by name
  and URL, built-in systems such as ``gold`` and ``rag``, answers files per dataset, languages,
  profiles, publish). ``POST`` checks CSRF and the submit token (``server.web.auth``), checks the
  request with the runner (unknown or duplicate ids and wrong formats of answers files are
  reported before anything runs), starts it in the background and answers 201 with the
  owner's access token, shown once, and a link to the experiment page (which follows the run).
* ``GET /upload``: upload an answers file (it posts to ``/experiments/new``) or a dataset file.
  ``POST /upload/dataset`` stores a benchmark file as a dataset version
  (``evaluators.datasets.library.load_dataset_bytes``; size cap and XML-entity refusal come from the
  parsers, errors carry their line and column).
* ``POST /experiments/<id>/publish``: the owner (access token) publishes a private experiment.

Browsers get the form again with the error and the status (400, 401, 403, 413); other clients
get RFC 9457 problems. Every store write calls ``notify_write()`` (the runner's ``on_write``).
"""

from __future__ import annotations

import hashlib
import threading
from typing import cast

from flask import Blueprint, Response, current_app, jsonify, redirect, render_template, request
from werkzeug.exceptions import RequestEntityTooLarge

from evaluators.datasets import catalog, library
from evaluators.errors import (
    DatasetFormatError,
    DatasetTooLargeError,
    EvaluationError,
    UnknownDatasetError,
    UnknownExperimentError,
    UnknownSubExperimentError,
)
from evaluators.experiments.runner import Submission
from evaluators.qa.profiles import PROFILE_TERMS
from evaluators.systems.protocol import public_url
from server.linked_data.pipeline import Resource, serve
from server.memory import release_memory
from server.services import experiment_runner, services
from server.submit.form import ANSWER_ROWS, SERVICE_ROWS, FormError, read_experiment_form
from server.submit.receipts import KeyReusedError, Receipt, Receipts, new_key, scope_of
from server.web import auth
from server.web.auth import COOKIE, MAX_COOKIE_TOKENS, request_tokens
from server.web.limits import current_client
from server.web.problems import Problem, prefers_html, problem_from_error
from server.web.representations import HTML
from store import graphs

bp = Blueprint("submit", __name__)


def _problem(exc: Exception) -> Problem:
    """Return the problem for an error of a submission, with the parser's position if any."""
    if isinstance(exc, Problem):
        return exc
    if isinstance(exc, FormError):
        return Problem(400, str(exc))
    if isinstance(exc, UnknownDatasetError | UnknownSubExperimentError):
        # A dataset or profile named in a form field: bad input, not a missing page.
        return Problem(400, str(exc))
    cause = exc if isinstance(exc, DatasetFormatError) else exc.__cause__
    mapped = problem_from_error(exc) or Problem(400, str(exc))
    if isinstance(cause, DatasetFormatError) and cause.line is not None:
        mapped.extensions.update({"line": cause.line, "column": cause.column})
    return mapped


def _versions() -> list[library.VersionInfo]:
    svc = services()
    if not svc.visibility().can_see(graphs.catalog_graph(svc.base)):
        return []
    return library.list_versions(svc.store, svc.base)


def _form_html(template: str, error: Problem | None = None) -> str:
    svc = services()
    runner = experiment_runner()
    return render_template(
        template,
        title="New experiment" if template == "new_experiment.html" else "Upload",
        versions=_versions(),
        builtins=[runner.registry.info(n) for n in runner.registry.names()],
        profiles=list(PROFILE_TERMS),
        default_profile=svc.config.evaluation.default_profile,
        default_kb=public_url(svc.config.evaluation.kb) if svc.config.evaluation.kb else "",
        service_rows=range(1, SERVICE_ROWS + 1),
        answer_rows=range(1, ANSWER_ROWS + 1),
        csrf_token=auth.csrf_token(),
        submission_key=new_key(),
        needs_token=not auth.is_submitter(),
        max_upload=svc.config.server.max_upload_bytes,
        error=error,
        values=request.form if request.method == "POST" else {},
    )


def _form_page(template: str, status: int, error: Problem) -> Response:
    return Response(_form_html(template, error), status=status, mimetype="text/html")


def _form_resource(template: str) -> Resource[None]:
    # The forms carry the session's CSRF token: rendered for each request, never stored.
    return Resource(
        formats=(HTML,),
        load=lambda _reader: None,
        html=lambda _reader, _data: _form_html(template),
        documents=False,
        session=True,
    )


def _refuse(template: str, exc: Exception) -> Response:
    problem = _problem(exc)
    if prefers_html():
        response = _form_page(template, problem.status, problem)
        response.headers.update(problem.headers)
        return response
    raise problem


@bp.route("/experiments/new", methods=["GET"])
def new_experiment() -> Response:
    """The form that configures and starts an experiment."""
    return serve(_form_resource("new_experiment.html"), "/experiments/new")


@bp.route("/upload", methods=["GET"])
def upload() -> Response:
    """The forms that upload an answers file (as an experiment) or a dataset."""
    return serve(_form_resource("upload.html"), "/upload")


def _remember(response: Response, token: str) -> Response:
    kept = [token] + [t for t in request.cookies.get(COOKIE, "").split() if t != token]
    response.set_cookie(
        COOKIE,
        " ".join(kept[:MAX_COOKIE_TOKENS]),
        httponly=True,
        samesite="Lax",
        secure=request.is_secure,
        path="/",
    )
    return response


@bp.route("/experiments/new", methods=["POST"])
def start_experiment() -> Response:
    """Check and start an experiment in the background; 201 with the access token."""
    template = "upload.html" if request.form.get("origin") == "upload" else "new_experiment.html"
    svc = services()
    receipt: Receipt | None = None
    try:
        auth.check_csrf()
        auth.require_submitter()
        key = request.form.get("submission_key") or request.headers.get("Idempotency-Key")
        if key:
            try:
                receipt, fresh = _receipts().begin(_scope(), key[:100], _body_digest())
            except KeyReusedError as exc:
                raise Problem(422, str(exc), title="Submission key reused") from exc
            if not fresh:
                return _repeated(receipt)
        parsed = read_experiment_form(
            request.form,
            request.files,
            svc.config.data_dir / "uploads",
            svc.config.evaluation.default_profile,
            svc.config.evaluation.kb,
        )
    except (Problem, FormError, RequestEntityTooLarge) as exc:
        if receipt is not None:
            _receipts().finish(receipt, None)
        if isinstance(exc, RequestEntityTooLarge):
            raise
        return _refuse(template, exc)
    try:
        submission = experiment_runner().start(parsed.request)
    except EvaluationError as exc:
        parsed.discard()
        if receipt is not None:
            _receipts().finish(receipt, None)
        return _refuse(template, exc)
    if receipt is not None:
        _receipts().finish(receipt, submission)
    return _started(submission, receipt)


def _started(submission: Submission, receipt: Receipt | None) -> Response:
    """Answer a started experiment: 303 to its receipt page for a form, 201 JSON otherwise."""
    page = f"/experiment/{submission.id}"
    if prefers_html() and receipt is not None:
        response = Response(status=303)
        response.headers["Location"] = f"/experiments/started/{receipt.ticket}"
    elif prefers_html():
        body = render_template(
            "submitted.html",
            title="Experiment started",
            submission=submission,
            page=page,
            show_token=True,
        )
        response = Response(body, status=201, mimetype="text/html")
    else:
        response = jsonify(
            id=submission.id,
            iri=submission.iri,
            token=submission.token,
            page=page,
            warnings=list(submission.warnings),
        )
        response.status_code = 201
    if response.status_code == 201:
        response.headers["Location"] = page
    response.headers["Cache-Control"] = "no-store"
    return _remember(response, submission.token)


def _receipts() -> Receipts:
    found = current_app.extensions.setdefault("submission_receipts", Receipts())
    assert isinstance(found, Receipts)
    return found


def _scope() -> str:
    """Return who submits: the bearer token and the client (every script of a server shares
    the submit token), else the browser session (its CSRF token)."""
    bearer = auth.bearer_token()
    if bearer:
        return scope_of(f"{bearer}\n{current_client()}")
    return scope_of(auth.csrf_token())


# Fields that say who submits or which submission this is, not what it asks for.
_NOT_CONTENT = frozenset({"csrf_token", "submit_token", "submission_key"})


def _body_digest() -> str:
    """Return a digest of what the request asks for: its fields and files (the files' bytes)."""
    digest = hashlib.sha256()
    for name in sorted(set(request.form) - _NOT_CONTENT):
        for value in request.form.getlist(name):
            digest.update(f"{len(name)}:{name}={len(value)}:{value}\n".encode())
    for name in sorted(request.files):
        for upload in request.files.getlist(name):
            digest.update(f"{len(name)}:{name}<{upload.filename or ''}>".encode())
            start = upload.stream.tell()
            while chunk := upload.stream.read(1 << 20):
                digest.update(chunk)
            upload.stream.seek(start)
    return digest.hexdigest()


def _repeated(receipt: Receipt) -> Response:
    """Answer a form or request sent again: the experiment the first one started."""
    if receipt.submission is None:
        raise Problem(
            409,
            "The first request with this submission key did not start an experiment; "
            "reload the form and submit it again.",
        )
    return _started(receipt.submission, receipt)


@bp.route("/experiments/started/<ticket>", methods=["GET"])
def started_page(ticket: str) -> Response:
    """The page of a started experiment (the access token the first time it is opened)."""
    opened = _receipts().opened(ticket, _scope())
    if opened is None:
        raise Problem(404, "There is no such submission in this browser session.")
    receipt, show = opened
    submission = receipt.submission
    assert submission is not None
    body = render_template(
        "submitted.html",
        title="Experiment started",
        submission=submission,
        page=f"/experiment/{submission.id}",
        show_token=show,
    )
    response = Response(body, mimetype="text/html")
    response.headers["Cache-Control"] = "private, no-store"
    response.vary.add("Cookie")
    return response


# Seconds an upload waits for the one being loaded before it is answered 503.
UPLOAD_WAIT_SECONDS = 60.0


def _upload_lock() -> threading.Lock:
    found = current_app.extensions.setdefault("dataset_upload_lock", threading.Lock())
    assert isinstance(found, type(threading.Lock()))
    return found


@bp.route("/upload/dataset", methods=["POST"])
def upload_dataset() -> Response:
    """Store an uploaded benchmark file as a dataset version; 201 with what was loaded."""
    svc = services()
    try:
        auth.check_csrf()
        auth.require_submitter()
        upload_file = request.files.get("dataset_file")
        if upload_file is None or not upload_file.filename:
            raise FormError("Choose a dataset file to upload.")
        data = upload_file.read(svc.config.datasets.max_file_bytes + 1)
        if len(data) > svc.config.datasets.max_file_bytes:
            raise DatasetTooLargeError(
                f"The file is larger than {svc.config.datasets.max_file_bytes} bytes "
                "(datasets.max_file_bytes)",
                source=upload_file.filename,
            )
        # One upload parsed at a time: a parsed file takes many times its size in memory.
        if not _upload_lock().acquire(timeout=UPLOAD_WAIT_SECONDS):
            raise Problem(
                503,
                "Another dataset is being loaded; try again shortly.",
                headers={"Retry-After": "10"},
            )
        try:
            outcome, known = catalog.load_upload(
                svc.store,
                svc.base,
                data,
                source=upload_file.filename,
                name=request.form.get("name", "").strip() or None,
                title=request.form.get("title", "").strip() or None,
                new_version=request.form.get("new_version", "") in ("1", "on", "true"),
            )
            # Checked on upload (gold answers, SPARQL syntax, answer types, duplicate ids, ...):
            # the report is stored with the version and linked from the answer.
            report = library.check_version(svc.store, svc.base, outcome.info)
        finally:
            del data
            release_memory()
            _upload_lock().release()
    except (Problem, FormError, EvaluationError) as exc:
        return _refuse("upload.html", exc)
    svc.notify_write()
    info = outcome.info
    page = f"/dataset/{info.name}/v{info.version}"
    check = {
        "errors": report.count("error"),
        "warnings": report.count("warning"),
        "report": f"{page}#check",
        "document": f"{page}/check",
    }
    if prefers_html():
        body = render_template(
            "uploaded.html",
            title="Dataset loaded",
            info=info,
            outcome=outcome,
            page=page,
            known=known,
            check=check,
            findings=report.by_code(),
        )
        response = Response(body, status=201 if outcome.created else 200, mimetype="text/html")
    else:
        response = jsonify(
            name=info.name,
            version=info.version,
            iri=info.iri,
            questions=info.questions,
            created=outcome.created,
            warnings=list(outcome.warnings),
            catalog=known.name if known else None,
            knowledge_base=info.knowledge_base,
            check=check,
        )
        response.status_code = 201 if outcome.created else 200
    response.headers["Location"] = page
    return response


@bp.route("/experiments/<experiment_id>/publish", methods=["POST"])
def publish(experiment_id: str) -> Response:
    """Publish a private experiment (its owner's token or the admin token; CSRF-checked).

    Raises:
        Problem: 403 for a failed CSRF check; 404 for an unknown experiment, or a private one
            whose token the request does not present.
    """
    svc = services()
    auth.check_csrf()
    graph = graphs.experiment_graph(svc.base, experiment_id)
    tokens = request_tokens()
    if request.form.get("token"):
        tokens.append(request.form["token"])
    # A private experiment is visible only to holders of its token; publishing a public one
    # changes nothing.
    if not svc.visibility(tokens).can_see(graph) and not auth.is_admin():
        raise Problem(404, f"There is no experiment {experiment_id[:40]!r} (or it is private).")
    try:
        experiment_runner().publish(experiment_id)
    except UnknownExperimentError as exc:
        raise Problem(404, str(exc)) from exc
    if prefers_html():
        return cast(Response, redirect(f"/experiment/{experiment_id}", code=303))
    return jsonify(id=experiment_id, published=True)

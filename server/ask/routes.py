"""The ask page and the RAG system's HTTP API.

* ``GET /ask``: the question box. ``POST /ask`` (form ``question``, optional ``query``,
  ``shown_query``, ``generator``) answers synchronously and renders the result (the page works
  without JavaScript); with ``Accept: application/json`` it returns the run as JSON.
* ``POST /ask/jobs``: the same form, answered in the background (202 and the job URL);
  ``GET /ask/jobs/<id>`` reports the stages, partial answers and, once done, the rendered
  result. ``templates/static/ask.js`` drives these so progress shows without a reload.
* ``POST /api/qa``: the GERBIL QA web-service protocol (form ``query``, ``lang``; optional
  ``type`` and ``id``) answered with QALD-JSON, or BioASQ JSON with ``?format=bioasq`` or
  ``Accept: application/vnd.bioasq+json``.
* ``/rag/run/<id>``: a stored run, shown like a fresh one; its RDF forms come from
  ``server.linked_data.routes.serve_resource``.

Every run is stored in the rag graph. Errors are RFC 9457 problems (invalid question 400,
malformed query 400 with its column, no index or model 503); the page shows them in place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlencode

from flask import Blueprint, Response, current_app, jsonify, redirect, render_template, request
from pyoxigraph import Literal, NamedNode

from rag.errors import QuerySyntaxError, QuestionError, RagError
from rag.models.generators import GENERATOR_NAMES
from rag.provenance import run_from_quads
from rag.run import Progress, RagRun
from rag.stages import STAGES, check_question
from server.ask.admission import (
    PoolFullError,
    RagPool,
    busy_problem,
    check_generator,
    generator_menu,
)
from server.ask.jobs import AskJob, AskJobs
from server.ask.payloads import bioasq_json, qald_json, run_json
from server.ask.service import RagService, UnknownGeneratorError
from server.ask.view import ResultView, result_view
from server.linked_data.documents import document
from server.linked_data.pipeline import Resource, serve
from server.linked_data.routes import alternate_links, generic_page, serve_resource
from server.linked_data.terms import href
from server.services import Services, Visibility, services
from server.web import auth
from server.web.limits import check_rate, limits
from server.web.problems import Problem
from server.web.representations import HTML, preferred
from vocab.project import QAB

bp = Blueprint("ask", __name__)

T = TypeVar("T")

BIOASQ_JSON = "application/vnd.bioasq+json"


@bp.record_once
def _setup(state: object) -> None:
    app = state.app  # type: ignore[attr-defined]
    svc: Services = app.extensions["services"]
    service = RagService(svc.config)
    app.extensions["rag"] = service
    svc.closers.append(service.close)
    config = svc.config
    pool = RagPool(
        config.rag.workers, config.rag.queue, sync_waiters=max(1, config.server.threads // 2)
    )
    app.extensions["rag_pool"] = pool
    svc.closers.append(pool.close)
    app.extensions["ask_jobs"] = AskJobs(STAGES, submit=pool.submit)


def rag_service() -> RagService:
    """Return the app's RAG service."""
    found = current_app.extensions["rag"]
    assert isinstance(found, RagService)
    return found


def rag_pool() -> RagPool:
    """Return the app's bounded pool of RAG runs."""
    found = current_app.extensions["rag_pool"]
    assert isinstance(found, RagPool)
    return found


def _admit() -> None:
    """Count a question against the client's rate (``server.rag_requests_per_minute``).

    Raises:
        Problem: 429 with ``Retry-After``.
    """
    check_rate(limits().rag, "questions")


def _in_pool(work: Callable[[], T]) -> T:
    """Run ``work`` in the RAG pool and wait for it (429 when the pool is full)."""
    try:
        return rag_pool().run(work)
    except PoolFullError as exc:
        raise busy_problem(exc) from exc
    except TimeoutError as exc:
        raise Problem(
            503, f"The RAG system gave {exc}; try again later.", QAB.ServerBusy, "RAG system busy"
        ) from exc


def ask_jobs() -> AskJobs:
    """Return the app's background ask jobs."""
    found = current_app.extensions["ask_jobs"]
    assert isinstance(found, AskJobs)
    return found


@dataclass(frozen=True, slots=True)
class AskForm:
    """The fields of the ask form."""

    question: str
    query: str | None = None
    edited: bool = False
    generator: str | None = None


# a prefilled question is only shown, never run, so a long one is simply cut
MAX_PREFILL = 2000


def _form() -> AskForm:
    form = request.form
    generator = form.get("generator") or None
    if generator is not None and generator not in GENERATOR_NAMES:
        raise Problem(
            400,
            f"Unknown generator {generator!r:.60}; expected one of: {', '.join(GENERATOR_NAMES)}.",
        )
    check_generator(generator, services().config)
    query = form.get("query")
    query = query.strip() if query and query.strip() else None
    shown = (form.get("shown_query") or "").strip()
    return AskForm(form.get("question", ""), query, query is not None and query != shown, generator)


def problem_for(exc: RagError | UnknownGeneratorError) -> Problem:
    """Map an error of a RAG run to a problem."""
    if isinstance(exc, QuestionError):
        return Problem(400, str(exc), QAB.InvalidQuestion, "Invalid question")
    if isinstance(exc, QuerySyntaxError):
        return Problem(
            400,
            str(exc),
            QAB.MalformedQuery,
            "Malformed search query",
            {"column": exc.position + 1, "query": exc.query[:500]},
        )
    if isinstance(exc, UnknownGeneratorError):
        return Problem(400, str(exc))
    # IndexMissingError, ModelUnavailableError and any other failure to open index or model
    return Problem(503, str(exc), QAB.RagUnavailable, "RAG system unavailable")


def _execute(
    svc: Services, rag: RagService, form: AskForm, progress: Progress | None = None
) -> tuple[RagRun, str]:
    run = rag.system(form.generator).ask(
        form.question, query=form.query, edited=form.edited, progress=progress
    )
    iri = rag.store_run(svc.store, run)
    svc.notify_write()
    return run, iri.value


def _result_html(run: RagRun, iri: str | None) -> str:
    view = result_view(run, iri, href(iri, services().base) if iri else None)
    return render_template("_ask_result.html", r=view)


def _page(form: AskForm, *, r: ResultView | None = None, problem: Problem | None = None) -> str:
    rag = rag_service()
    # the menu offers only what this server can run for this reader; the rest is named, with why
    offered, hidden = generator_menu(
        GENERATOR_NAMES, rag.config, rag.unavailable, holds_token=auth.holds_form_token()
    )
    default = rag.default_generator if rag.default_generator in offered else offered[0]
    unlock = any(h.needs_token for h in hidden)
    return render_template(
        "ask.html",
        title="Ask a biomedical question",
        form=form,
        generators=offered,
        hidden_generators=hidden,
        default_generator=default,
        configured_generator=rag.default_generator,
        csrf_token=auth.csrf_token() if unlock else "",
        # a submitter's session opens reserved generators only with the form's CSRF token
        form_csrf=auth.csrf_token() if auth.is_submitter() else "",
        r=r,
        problem=problem,
    )


def _wants_json() -> bool:
    return preferred([["text/html"], ["application/json"]], request.headers.get("Accept", "")) == 1


ASK_PAGE: Resource[AskForm] = Resource(
    formats=(HTML,),
    load=lambda _reader: AskForm(request.args.get("question", "")[:MAX_PREFILL]),
    html=lambda _reader, form: _page(form),
    documents=False,
    # The menu depends on the session (submit token) and may carry its CSRF token.
    session=True,
)


@bp.get("/ask")
def ask_page() -> Response:
    """The ask page; ``?question=`` fills in the question box (links from other pages)."""
    return serve(ASK_PAGE, "/ask")


@bp.post("/ask/unlock")
def unlock_generators() -> Response:
    """Remember the submit token in the session (form ``submit_token``), then back to the page."""
    auth.check_csrf()
    auth.require_submitter()
    question = request.form.get("question", "")[:MAX_PREFILL]
    target = "/ask" + (f"?{urlencode({'question': question})}" if question else "")
    return redirect(target, 303)  # type: ignore[return-value]


@bp.post("/ask")
def ask_submit() -> Response | tuple[str, int]:
    """Answer the form synchronously: the result page (or the run as JSON)."""
    form = _form()
    svc, rag = services(), rag_service()
    try:
        # an invalid question (empty, too long) is refused before it counts against the rate
        check_question(form.question, rag.config.rag.max_question_chars)
    except RagError as exc:
        problem = problem_for(exc)
        if _wants_json():
            raise problem from exc
        return _page(form, problem=problem), problem.status
    _admit()
    try:
        run, iri = _in_pool(lambda: _execute(svc, rag, form))
    except (RagError, UnknownGeneratorError) as exc:
        problem = problem_for(exc)
        if _wants_json():
            raise problem from exc
        return _page(form, problem=problem), problem.status
    if _wants_json():
        return jsonify(run_json(run, iri))
    view = result_view(run, iri, href(iri, services().base))
    return Response(_page(form, r=view), mimetype="text/html")


@bp.post("/ask/jobs")
def start_job() -> tuple[Response, int]:
    """Start answering in the background; returns the job's progress URL."""
    form = _form()
    rag = rag_service()
    try:
        check_question(form.question, rag.config.rag.max_question_chars)
    except RagError as exc:
        raise problem_for(exc) from exc
    _admit()
    # the generator's model (if any) loads inside the job, so the page shows progress meanwhile
    svc = services()
    try:
        job = ask_jobs().start(lambda progress: _execute(svc, rag, form, progress))
    except PoolFullError as exc:
        raise busy_problem(exc) from exc
    url = f"/ask/jobs/{job.id}"
    response = jsonify({"job": job.id, "progress": url, "state": job.state})
    response.headers["Location"] = url
    return response, 202


@bp.get("/ask/jobs/<job_id>")
def job_status(job_id: str) -> Response:
    """Report a job's stages, partial answers and (when done) the rendered result."""
    job: AskJob | None = ask_jobs().get(job_id)
    if job is None:
        raise Problem(404, f"There is no ask job {job_id!r:.40} (jobs are kept for a while).")
    state, stages, partial = job.snapshot()
    body: dict[str, object] = {
        "job": job.id,
        "state": state,
        "stages": [
            {"stage": s.stage, "state": s.state, "millis": s.millis, "detail": s.detail}
            for s in stages
        ],
        "partial": partial,
    }
    if state == "done" and job.run is not None:
        body["run"] = job.run_iri
        body["run_href"] = href(job.run_iri, services().base) if job.run_iri else None
        body["html"] = _result_html(job.run, job.run_iri)
    elif state == "failed":
        error = job.error
        problem = (
            problem_for(error)
            if isinstance(error, RagError | UnknownGeneratorError)
            else Problem(500, "The run failed on our side; try again later.")
        )
        body["problem"] = {
            "status": problem.status,
            "title": problem.title,
            "detail": problem.detail,
        }
    response = jsonify(body)
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.post("/api/qa")
def api_qa() -> Response:
    """Answer one question over the GERBIL QA protocol (QALD-JSON) or as BioASQ JSON."""
    form = request.form
    question = form.get("query", "")
    language = _language_tag((form.get("lang") or "en").strip() or "en")
    kind = form.get("type") or None
    question_id = (form.get("id") or "1").strip() or "1"
    wants_bioasq = (
        request.args.get("format") == "bioasq"
        or preferred([["application/json"], [BIOASQ_JSON]], request.headers.get("Accept", "")) == 1
    )
    svc, rag = services(), rag_service()
    try:
        check_question(question, rag.config.rag.max_question_chars)
    except RagError as exc:
        raise problem_for(exc) from exc
    _admit()

    def _answer() -> tuple[RagRun, NamedNode]:
        run = rag.system().ask(question, kind=kind, language=language)
        stored = rag.store_run(svc.store, run)
        svc.notify_write()
        return run, stored

    try:
        run, iri = _in_pool(_answer)
    except RagError as exc:
        raise problem_for(exc) from exc
    if wants_bioasq:
        response = jsonify(bioasq_json(run, question_id))
        response.mimetype = BIOASQ_JSON
    else:
        response = jsonify(qald_json(run, question_id))
    response.headers["Link"] = f'<{iri.value}>; rel="describedby"'
    response.headers["Vary"] = "Accept"
    return response


def _language_tag(value: str) -> str:
    """Return ``value`` if it is a BCP 47 language tag (checked before anything runs).

    Raises:
        Problem: 400 naming the value.
    """
    try:
        Literal("", language=value)
    except ValueError as exc:
        raise Problem(
            400, f"'lang' must be a language tag such as en or pt-BR; got {value[:40]!r} ({exc})."
        ) from exc
    return value


def run_page(svc: Services, iri: NamedNode, vis: Visibility) -> str:
    """Render a stored run like the ask page shows a fresh one (the permalink's HTML).

    Raises:
        Problem: 404 when there is no such run.
    """
    run = run_from_quads(iri, document(svc, iri, vis))
    if run is None:
        return generic_page(svc, iri, vis)
    view = result_view(run, iri.value, href(iri.value, svc.base))
    return render_template(
        "rag_run.html", title=f"RAG run {run.run_id}", r=view, alternates=alternate_links()
    )


@bp.route("/rag/run/<path:rest>")
def rag_run(rest: str) -> Response:
    """One stored answer of the built-in RAG system."""
    return serve_resource("rag/run", rest, run_page)

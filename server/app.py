"""`create_app(config)`: the Flask application factory (the composition root of the web server).

It opens the store (embedded Oxigraph, or a remote SPARQL server when ``store.remote_*`` URLs are
set), builds ``Services`` (visibility index, SPARQL views, query workers, caches), registers the
blueprints, pages and problem handlers, loads the demo data when asked to and the store has no
datasets, and builds the one experiment runner of the process (with the RAG system among its
built-in systems; every write it makes calls ``notify_write``), marking experiments that a dead
process left unfinished as interrupted. Views never open anything themselves; they reach everything
through ``services()`` and ``experiment_runner()``.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging

from flask import Flask, Response

from evaluators.experiments.runner import ExperimentRunner
from server.ask import routes as ask_routes
from server.ask.qa_system import system_registry
from server.ask.service import RagService
from server.challenge import routes as challenge
from server.config import Config, open_store
from server.linked_data import description, discovery, dump, vocabulary
from server.linked_data import routes as resource_routes
from server.listings import ExperimentIndex
from server.memory import NotReadyError
from server.pages import compare, datasets, leaderboard, lists, systems
from server.pages import routes as experiment_routes
from server.rendering import configure, templates_dir
from server.replica.dumps import PublicDumps
from server.replica.views import ViewPublisher
from server.runner import build_runner
from server.services import RUNNER_KEY, IndexSnapshots, Services
from server.sparql import endpoint, update
from server.sparql.workers import QueryPool
from server.submit import routes as submit_routes
from server.web import auth, caching
from server.web.headers import install_headers
from server.web.limits import install_limits
from server.web.pagination import here
from server.web.problems import Problem, register_error_handlers, render_problem
from store.changes import ChangeLog
from store.permissions import private_directory
from store.protocol import RdfStore
from store.visibility import VisibilityIndex, orphan_graphs
from vocab.project import QAB
from vocab.standard import RDF

log = logging.getLogger(__name__)

# Every route of the web server, one blueprint per kind of page or endpoint; the URL prefix a
# blueprint owns is written in its module (``/experiment/...`` in ``server.pages.routes``).
BLUEPRINTS = (
    lists.bp,  # /, /datasets, /experiments, /systems
    datasets.bp,  # /dataset/...
    experiment_routes.bp,  # /experiment/..., /task/...
    systems.bp,  # /system/...
    leaderboard.bp,  # /leaderboard
    challenge.bp,  # /challenge/text2sparql-2026
    compare.bp,  # /compare
    submit_routes.bp,  # /experiments/new, /upload, /experiments/<id>/publish
    ask_routes.bp,  # /ask, /ask/jobs, /api/qa, /rag/run/...
    resource_routes.bp,  # /kb/..., /cube/..., /experiment-type/..., /profile/..., /graph/...
    vocabulary.bp,  # /vocab, /vocab/<term>, /context.jsonld
    description.bp,  # /.well-known/void
    discovery.bp,  # /robots.txt, /sitemap.xml, /sitemap/<n>.xml
    dump.bp,  # /dump.nq
    endpoint.bp,  # /sparql
    update.bp,  # /update
)


def build_services(config: Config, store: RdfStore) -> Services:
    """Return the services of an app over ``store`` (which from now on logs its changes)."""
    private_directory(config.data_dir)
    store.changes = ChangeLog()
    index = VisibilityIndex(store, config.base_iri)
    snapshot = config.data_dir / "experiment-index.pickle"
    experiments = ExperimentIndex(store, config.base_iri, snapshot)
    views = ViewPublisher(store, index.public_names(), config.data_dir / "views")
    settings = config.server
    pool = QueryPool(
        settings.workers,
        settings.query_timeout_seconds,
        settings.query_memory_mb,
        budget=settings.sparql_client_budget_seconds,
        waiting=settings.waiting_queries,
        allocator=settings.query_allocator,
    )
    svc = Services(
        config, store, index, experiments, views, pool, PublicDumps(config.data_dir / "dump")
    )
    # Registered first, so it closes last: after the experiment runner stopped writing.
    svc.closers.append(IndexSnapshots(svc, snapshot).close)
    return svc


def _load_demo(svc: Services) -> None:
    if importlib.util.find_spec("server.demo") is None:
        log.info("demo requested, but server/demo.py is not available yet")
        return
    if any(True for _ in svc.store.quads(predicate=RDF.type, obj=QAB.Dataset)):
        return
    demo = importlib.import_module("server.demo")
    demo.ensure_demo(svc)
    svc.notify_write()


# Seconds ``Services.close`` waits for each cancelled experiment run to record its state.
STOP_WAIT_SECONDS = 30.0


def _stop_runs(runner: ExperimentRunner) -> None:
    live = runner.live()
    for experiment_id in live:
        runner.cancel(experiment_id)
    for experiment_id in live:
        runner.wait(experiment_id, STOP_WAIT_SECONDS)


def _not_ready(exc: NotReadyError) -> Response:
    """A graph's page asked for before its page layout was made (``Services.remember_graph``)."""
    problem = Problem(
        503,
        str(exc),
        QAB.ServerBusy,
        "Pages not ready",
        # a refusal of this moment only: never kept by a cache
        headers={"Retry-After": str(exc.retry_after), "Cache-Control": "no-store"},
    )
    return render_problem(problem)


def _start_runner(app: Flask, svc: Services) -> ExperimentRunner:
    rag = app.extensions.get("rag")
    service = rag if isinstance(rag, RagService) else RagService(svc.config)
    store = svc.store
    runner = build_runner(
        svc.config,
        store,
        registry=system_registry(service, svc.store),
        on_write=svc.notify_write,
    )
    interrupted = runner.recover()
    if interrupted:
        log.info("marked unfinished tasks of experiments %s as interrupted", interrupted)
    app.extensions[RUNNER_KEY] = runner
    svc.closers.append(lambda: _stop_runs(runner))
    return runner


def create_app(config: Config, *, store: RdfStore | None = None) -> Flask:
    """Build the web application.

    Args:
        config: the configuration (tests point its paths into a temporary directory).
        store: an already open store to serve instead of opening the configured one.

    Returns:
        The Flask app; ``app.extensions["services"].close()`` releases the store and workers.

    Raises:
        StoreLockedError: if the embedded store is held by another process.
    """
    folder = templates_dir()
    app = Flask(
        __name__,
        template_folder=str(folder),
        static_folder=str(folder / "static"),
        static_url_path="/static",
    )
    app.config["MAX_CONTENT_LENGTH"] = config.server.max_upload_bytes
    app.json.sort_keys = False  # type: ignore[attr-defined]
    opened = store if store is not None else open_store(config)
    orphans = orphan_graphs(opened, config.base_iri)
    if orphans:
        # Leftovers of loads that failed or were killed: never visible, now removed.
        log.info("dropping %d graphs of unfinished loads", len(orphans))
        opened.drop_graphs(orphans)
    svc = build_services(config, opened)
    app.extensions["services"] = svc
    auth.install(app, auth.load_form_secrets(config))
    install_headers(app, config.server.trusted_proxy)
    install_limits(
        app,
        sparql_per_minute=config.server.sparql_requests_per_minute,
        rag_per_minute=config.server.rag_requests_per_minute,
        queries_per_client=config.server.queries_per_client,
    )
    register_error_handlers(app)
    app.register_error_handler(NotReadyError, _not_ready)
    caching.install(app)
    configure(app.jinja_env, config.base_iri)
    app.jinja_env.globals["here"] = here
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    if config.server.demo:
        _load_demo(svc)
    _start_runner(app, svc)
    return app

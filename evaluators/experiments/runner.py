"""Experiment orchestration: submit, run (in the foreground or a background thread), resume,
publish. The only module in ``evaluators`` that writes experiments to the store.

Each task's outcome (state, times, error count and its Data Cube results) is written in one
transaction, so a process killed at any moment leaves every task queued, running or complete,
never half-written. ``evaluators.experiments.recovery`` turns the leftovers of a dead process into
``interrupted`` tasks, and ``ExperimentRunner.resume`` finishes exactly those.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pyoxigraph import Literal, Quad

from evaluators.defaults import RunLimits
from evaluators.errors import EvaluationError, KnowledgeBaseError
from evaluators.experiments import model, rdf
from evaluators.experiments.plan import (
    ExperimentRequest,
    SystemRequest,
    new_experiment_id,
    plan_experiment,
)
from evaluators.experiments.read import (
    ExperimentOverview,
    ExperimentSummary,
    experiment_facts,
    experiment_summary,
    list_experiments,
    overview,
    task_summaries,
)
from evaluators.experiments.recovery import recover_interrupted
from evaluators.experiments.run_systems import SystemHandles
from evaluators.experiments.task import executing
from evaluators.experiments.worker import (
    Completion,
    Progress,
    ProgressEvent,
    StoreWriter,
    TaskWorker,
    now,
)
from evaluators.knowledge.bases import KnowledgeBase, check_kb_url, kb_graph_of, open_kb
from evaluators.knowledge.endpoint import is_endpoint
from evaluators.knowledge.execution import (
    EndpointExecutor,
    ExecutionLimits,
    QueryExecutor,
    open_executor,
)
from evaluators.knowledge.reference import lexical_reference_differences
from evaluators.model import Dataset
from evaluators.qa.markings import Markings
from evaluators.systems.protocol import public_url
from evaluators.systems.registry import SystemRegistry
from store import graphs
from store.protocol import RdfStore
from store.visibility import token_hash
from vocab import iris
from vocab.project import QAB

log = logging.getLogger(__name__)

__all__ = [
    "ExperimentRequest",
    "ExperimentRunner",
    "ProgressEvent",
    "RunLimits",
    "Submission",
    "SystemRequest",
    "recover_interrupted",
]


@dataclass(frozen=True, slots=True)
class Submission:
    """A stored experiment: its id, IRI and the owner's access token (shown once)."""

    id: str
    iri: str
    token: str
    warnings: tuple[str, ...] = ()  # e.g. answers-file ids the dataset lacks, ignored


class ExperimentRunner:
    """Creates and runs the experiments of one store; one instance per process."""

    def __init__(
        self,
        store: RdfStore,
        base: str,
        *,
        limits: RunLimits,
        registry: SystemRegistry,
        release: model.SoftwareRelease,
        kb: str = "",
        strict_ids: bool = False,
        on_write: Callable[[], None] | None = None,
    ) -> None:
        """Prepare a runner.

        Args:
            store: the store experiments live in.
            base: the base IRI.
            limits: timeouts, concurrency and tolerance (``[evaluation]``).
            registry: the built-in systems.
            release: the qabench code that carries out tasks (provenance).
            kb: a KB name in the store or a SPARQL endpoint URL for matching ("" for none).
            strict_ids: refuse answers files with ids their dataset lacks (default: ignore
                them with a warning); a request may say otherwise.
            on_write: called after every store write.
        """
        self.store = store
        self.base = base
        self.limits = limits
        self.registry = registry
        self.release = release
        self.on_write = on_write
        self._kb_default = kb
        self.strict_ids = strict_ids
        self._kb_of: dict[str, str] = {}  # experiment id -> its KB spec (credentials kept here)
        self._kbs: dict[str, KnowledgeBase] = {}
        self._lock = threading.Lock()
        self._writer = StoreWriter(store, base, on_write)
        self._executors: dict[str, QueryExecutor] = {}
        self._executor_lock = threading.Lock()
        self._worker = TaskWorker(
            self._writer,
            limits=limits,
            release=release,
            knowledge=lambda eid: self._knowledge(self._kb_spec(eid))[0],
            completion=self._completion,
            reference_notes=self._reference_notes,
        )
        self._live: set[str] = set()
        self._cancel: dict[str, threading.Event] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._prepared: dict[str, SystemHandles] = {}

    def _kb_spec(self, eid: str) -> str:
        """Return the KB an experiment was submitted with (read back from its record)."""
        with self._lock:
            spec = self._kb_of.get(eid)
        if spec is None:
            spec = experiment_facts(self.store, self.base, eid).knowledge_base or ""
            with self._lock:
                self._kb_of.setdefault(eid, spec)
        return spec

    def _cache_key(self, spec: str) -> str:
        # a loaded KB is cached per load: reloading it gives the next experiments the new graph
        if is_endpoint(spec):
            return spec
        graph = kb_graph_of(self.store, self.base, spec)
        return f"{spec}\n{graph.value if graph is not None else ''}"

    def _completion(self, eid: str) -> Completion | None:
        """Return the step that runs SPARQL-only answers on the KB (None: no KB, or turned off)."""
        executor = self._executor(eid)
        return executing(executor) if executor is not None else None

    def _reference_notes(self, eid: str, dataset: Dataset) -> Mapping[str, str] | None:
        """Return where the dataset's reference queries give another result on the KB than its
        published gold (TEXT2SPARQL engine differences; None without a KB to run them on)."""
        executor = self._executor(eid)
        return lexical_reference_differences(dataset, executor) if executor is not None else None

    def _executor(self, eid: str) -> QueryExecutor | None:
        """Return the bounded executor on the experiment's KB (None: no KB, or turned off)."""
        spec = self._kb_spec(eid)
        if not self.limits.execute_queries or not spec:
            return None
        key = self._cache_key(spec)
        with self._executor_lock:
            executor = self._executors.get(key)
            if executor is None:
                limits = ExecutionLimits(
                    timeout_seconds=self.limits.query_timeout_seconds,
                    max_rows=self.limits.query_max_rows,
                    max_bytes=self.limits.max_response_bytes,
                )
                executor = open_executor(self.store, self.base, spec, limits)
                if isinstance(executor, EndpointExecutor):
                    executor.description = public_url(spec)
                self._executors[key] = executor
            return executor

    def _knowledge(self, spec: str) -> tuple[KnowledgeBase | None, model.KbDescription | None]:
        """Return the KB a spec names and its description (``KnowledgeBaseError`` if unknown)."""
        if not spec:
            return None, None
        key = self._cache_key(spec)
        with self._executor_lock:
            kb = self._kbs.get(key)
            if kb is None:
                kb = self._kbs[key] = open_kb(
                    self.store, self.base, spec, timeout=self.limits.request_timeout_seconds
                )
        if is_endpoint(spec):
            return kb, model.KbDescription(public_url(spec), endpoint=public_url(spec))
        # a loaded KB has a version when its catalog entry states one
        versions = self.store.quads(
            iris.kb_iri(self.base, spec), QAB.kbVersion, None, graphs.catalog_graph(self.base)
        )
        version = next((q.object.value for q in versions if isinstance(q.object, Literal)), None)
        graph = kb_graph_of(self.store, self.base, spec)
        described = graph.value if graph is not None else None
        return kb, model.KbDescription(spec, graph=described, version=version)

    # ------------------------------------------------------------------ submission
    def submit(self, request: ExperimentRequest) -> Submission:
        """Check a request and store the experiment with all its tasks queued.

        Raises:
            EvaluationError: (a subclass) if anything in the request is wrong: unknown dataset,
                profile or built-in system, bad URL, an answers file that does not fit. Nothing
                is written then.
        """
        planned = plan_experiment(
            self.store,
            self.base,
            request,
            registry=self.registry,
            limits_timeout=self.limits.request_timeout_seconds,
            limits_concurrency=self.limits.concurrency_per_system,
            max_file_bytes=self.limits.max_file_bytes,
            strict_ids=self.strict_ids,
        )
        spec = self._kb_default if request.kb is None else request.kb.strip()
        if is_endpoint(spec):
            check_kb_url(spec)
        _, kb = self._knowledge(spec)
        token = secrets.token_urlsafe(32)
        admin = graphs.admin_graph(self.base)
        with self._lock:
            eid = new_experiment_id(
                [o.id for o in list_experiments(self.store, self.base)], now().date()
            )
            record = model.ExperimentRecord(
                eid, now(), request.owner, planned.systems, planned.tasks, kb
            )
            quads = rdf.experiment_quads(self.base, record)
            quads += rdf.admin_quads(self.base, eid, token_hash(token), published=request.publish)
            quads += [
                Quad(
                    rdf.system_configuration_iri(self.base, eid, name),
                    QAB.sourcePath,
                    Literal(path),
                    admin,
                )
                for name, path in planned.answer_paths.items()
                if path
            ]
            if request.publish:
                quads += rdf.publication_quads(self.base, eid, record.created)
            self._writer.write([], quads)
            self._kb_of[eid] = spec
            self._prepared[eid] = SystemHandles.from_plan(
                planned, self.limits, self.registry, self.release
            )
        warnings = tuple(w for system in planned.systems for w in system.warnings)
        return Submission(eid, iris.experiment_iri(self.base, eid).value, token, warnings)

    def start(self, request: ExperimentRequest, *, progress: Progress | None = None) -> Submission:
        """Submit, then run in a background thread; return as soon as the experiment is stored.

        Raises:
            EvaluationError: as ``submit``.
        """
        submission = self.submit(request)
        thread = threading.Thread(
            target=self._run_logged,
            args=(submission.id, progress),
            name=f"experiment-{submission.id}",
            daemon=True,
        )
        with self._lock:
            self._threads = {k: t for k, t in self._threads.items() if t.is_alive()}
            self._threads[submission.id] = thread
            self._live.add(submission.id)
        thread.start()
        return submission

    def _run_logged(self, eid: str, progress: Progress | None) -> None:
        try:
            self.run(eid, progress=progress)
        except Exception:  # a background run has nobody to raise to; the log keeps it
            log.exception("Experiment %s stopped with an unexpected error", eid)
        finally:
            with self._lock:
                self._live.discard(eid)

    def wait(self, experiment_id: str, timeout: float | None = None) -> bool:
        """Wait for a background run of this runner; return whether it has ended."""
        thread = self._threads.get(experiment_id)
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def cancel(self, experiment_id: str) -> None:
        """Ask a running experiment to stop; its unfinished tasks end ``interrupted``."""
        event = self._cancel.get(experiment_id)
        if event is not None:
            event.set()

    def live(self) -> frozenset[str]:
        """Return the ids of the experiments running in this process."""
        with self._lock:
            return frozenset(self._live)

    # ------------------------------------------------------------------ running
    def run(
        self,
        experiment_id: str,
        *,
        progress: Progress | None = None,
        overrides: Mapping[str, SystemRequest] | None = None,
    ) -> ExperimentSummary:
        """Run every queued task of an experiment and return its summary.

        Raises:
            UnknownExperimentError: if there is no such experiment.
        """
        return self._run(experiment_id, (model.TaskStatus.QUEUED,), progress, overrides or {})

    def resume(
        self,
        experiment_id: str,
        *,
        progress: Progress | None = None,
        overrides: Mapping[str, SystemRequest] | None = None,
        kb: str | None = None,
    ) -> ExperimentSummary:
        """Finish an experiment's interrupted (and still queued) tasks; finished ones stay.

        ``kb`` gives the recorded knowledge base again, e.g. an endpoint URL with the
        credentials that were not stored; it must be the one the experiment records.

        Raises:
            UnknownExperimentError: if there is no such experiment.
            EvaluationError: if it is running in this process right now, or ``kb`` is not the
                knowledge base it records (``KnowledgeBaseError``).
        """
        if experiment_id in self.live():
            raise EvaluationError(f"Experiment {experiment_id} is running; wait for it to end")
        if kb is not None:
            self._use_kb(experiment_id, kb.strip())
        self.recover()
        wanted = (model.TaskStatus.QUEUED, model.TaskStatus.INTERRUPTED)
        return self._run(experiment_id, wanted, progress, overrides or {})

    def _use_kb(self, eid: str, spec: str) -> None:
        overview(self.store, self.base, eid)
        recorded = experiment_facts(self.store, self.base, eid).knowledge_base or ""
        shown = public_url(spec) if is_endpoint(spec) else spec
        if shown != recorded:
            raise KnowledgeBaseError(
                f"Experiment {eid} was run with knowledge base {recorded or 'none'!r}, not "
                f"{shown or 'none'!r}; resume it with the same one"
            )
        with self._lock:
            self._kb_of[eid] = spec

    def _run(
        self,
        eid: str,
        wanted: tuple[model.TaskStatus, ...],
        progress: Progress | None,
        overrides: Mapping[str, SystemRequest],
    ) -> ExperimentSummary:
        overview(self.store, self.base, eid)
        plans = [t.plan for t in task_summaries(self.store, self.base, eid) if t.status in wanted]
        with self._lock:
            self._live.add(eid)
            cancel = self._cancel.setdefault(eid, threading.Event())
            handles = self._prepared.pop(eid, None) or SystemHandles.from_store(
                self.store, self.base, eid, self.limits, self.registry, self.release
            )
        pool = ThreadPoolExecutor(max_workers=self.limits.parallel_tasks)
        try:
            handles.override(overrides)
            self._writer.mark_runner(eid)
            markings: dict[tuple[str, str], Markings] = {}  # shared by this run's tasks
            # one asking run per system, dataset version and language; its tasks (one per
            # profile) score the same stored answers
            futures = [
                pool.submit(self._worker.execute, eid, unit, handles, cancel, progress, markings)
                for unit in model.asking_units(plans).values()
            ]
            for future in futures:
                future.result()
        except BaseException:
            # Ctrl-C or a crash: stop asking, let running tasks record "interrupted", and mark
            # the tasks that never started the same way.
            cancel.set()
            pool.shutdown(wait=True, cancel_futures=True)
            with self._lock:
                self._live.discard(eid)
            self.recover()
            raise
        finally:
            pool.shutdown(wait=True)
            handles.close()
            with self._lock:
                self._live.discard(eid)
                self._cancel.pop(eid, None)
        if cancel.is_set():
            self.recover()  # cancelled: the tasks that never started become interrupted too
        return self.summary(eid)

    # ------------------------------------------------------------------ reading, publishing
    def summary(self, experiment_id: str, token: str | None = None) -> ExperimentSummary:
        """Return an experiment with its tasks and stored results.

        Raises:
            UnknownExperimentError: if there is no such experiment.
        """
        return experiment_summary(self.store, self.base, experiment_id, token)

    def publish(self, experiment_id: str) -> ExperimentOverview:
        """Make an experiment public and record when; publishing twice changes nothing.

        Raises:
            UnknownExperimentError: if there is no such experiment.
        """
        item = overview(self.store, self.base, experiment_id)
        if item.published:
            return item
        old = rdf.published_quad(self.base, experiment_id, published=False)
        new = rdf.published_quad(self.base, experiment_id, published=True)
        self._writer.write([old], [new, *rdf.publication_quads(self.base, experiment_id, now())])
        return overview(self.store, self.base, experiment_id)

    def recover(self) -> list[str]:
        """Mark the unfinished tasks of experiments no live process runs as interrupted."""
        return recover_interrupted(self.store, self.base, live=self.live(), on_write=self.on_write)

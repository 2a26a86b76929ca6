"""Carry out one task of an experiment and record it: the running state first, then the outcome
(state, times, error count and Data Cube results) in one transaction.

``StoreWriter`` serialises the writes of all tasks of a runner and calls ``on_write`` after each;
``TaskWorker`` reads the dataset, builds the system, asks and scores
(``evaluators.experiments.task``) and maps each stage's failure to GERBIL's state code (reference
gerbil-qa.md §2.5).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, MutableMapping
from dataclasses import dataclass
from datetime import UTC, datetime

from pyoxigraph import Quad

from evaluators.datasets import library
from evaluators.errors import EvaluationError
from evaluators.experiments import model, rdf
from evaluators.experiments.rdf import result_quads
from evaluators.experiments.recovery import process_token, task_state_quads
from evaluators.experiments.run_systems import RunLimits, SystemHandles
from evaluators.experiments.task import TaskOutcome, TaskSettings, run_task
from evaluators.knowledge.bases import KnowledgeBase
from evaluators.qa.markings import Markings
from store import graphs
from store.errors import StoreError
from store.protocol import RdfStore
from vocab import iris
from vocab.project import QAB

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """Progress of one task: ``done`` of ``total`` questions asked."""

    experiment_id: str
    task: int
    status: model.TaskStatus
    done: int
    total: int


Progress = Callable[[ProgressEvent], None]


def now() -> datetime:
    """Return the current time in UTC."""
    return datetime.now(UTC)


class StoreWriter:
    """One transaction per call, one call at a time, and ``on_write`` after each."""

    def __init__(
        self, store: RdfStore, base: str, on_write: Callable[[], None] | None = None
    ) -> None:
        self.store = store
        self.base = base
        self.on_write = on_write
        self._lock = threading.Lock()

    def write(self, remove: Iterable[Quad], add: Iterable[Quad]) -> None:
        """Remove and add quads in one transaction.

        Raises:
            StoreError: if the write fails; nothing is written then.
        """
        removed = list(remove)
        with self._lock:
            if removed:
                self.store.apply(remove=removed, add=add)
            else:
                self.store.add(add)
        if self.on_write is not None:
            self.on_write()

    def set_state(
        self, eid: str, number: int, state: model.TaskState, extra: Iterable[Quad] = ()
    ) -> None:
        """Replace a task's state (and add ``extra``, e.g. its results) in one transaction."""
        with self._lock:
            old = task_state_quads(self.store, self.base, eid, number)
        self.write(old, [*rdf.state_quads(self.base, eid, number, state), *extra])

    def mark_runner(self, eid: str) -> None:
        """Record this process as the one running an experiment (private admin graph)."""
        node = iris.experiment_iri(self.base, eid)
        admin = graphs.admin_graph(self.base)
        with self._lock:
            old = list(self.store.quads(node, QAB.runnerProcess, None, admin))
        self.write(old, [rdf.runner_quad(self.base, eid, process_token())])


def _failed(code: int, message: str) -> TaskOutcome:
    return TaskOutcome(model.TaskStatus.FAILED, code, errors=0, asked=0, message=message[:1000])


class TaskWorker:
    """Runs tasks for one runner (shared by its threads)."""

    def __init__(
        self,
        writer: StoreWriter,
        *,
        limits: RunLimits,
        release: model.SoftwareRelease,
        knowledge: Callable[[], KnowledgeBase | None],
    ) -> None:
        self.writer = writer
        self.store = writer.store
        self.base = writer.base
        self.limits = limits
        self.release = release
        self.knowledge = knowledge
        # Scoring parses SPARQL with rdflib, whose pyparsing grammar is not thread-safe; it is
        # CPU-bound anyway, so tasks take turns there (asking the systems still overlaps).
        self._scoring_lock = threading.Lock()

    def execute(
        self,
        eid: str,
        plan: model.TaskPlan,
        handles: SystemHandles,
        cancel: threading.Event,
        progress: Progress | None,
        markings: MutableMapping[tuple[str, str], Markings] | None = None,
    ) -> None:
        """Run one task and record its outcome (nothing happens once ``cancel`` is set).

        ``markings`` is a cache of query markings the tasks of one run share.
        """
        if cancel.is_set():
            return
        started = now()
        running = model.TaskState(
            model.TaskStatus.RUNNING, model.CODE_RUNNING, started=started, release=self.release
        )
        self.writer.set_state(eid, plan.number, running)
        outcome = self._outcome(eid, plan, handles, cancel, progress, markings)
        results: list[Quad] = []
        if outcome.result is not None:
            results = result_quads(self.base, eid, plan, outcome.result)
        final = model.TaskState(
            outcome.status,
            outcome.code,
            message=outcome.message,
            started=started,
            ended=now(),
            errors=outcome.errors,
            release=self.release,
        )
        self.writer.set_state(eid, plan.number, final, results)
        if progress is not None:
            progress(ProgressEvent(eid, plan.number, outcome.status, outcome.asked, outcome.asked))

    def _outcome(
        self,
        eid: str,
        plan: model.TaskPlan,
        handles: SystemHandles,
        cancel: threading.Event,
        progress: Progress | None,
        markings: MutableMapping[tuple[str, str], Markings] | None,
    ) -> TaskOutcome:
        try:
            version = library.version_info(self.store, self.base, plan.dataset, plan.version)
            dataset = library.read_dataset(self.store, version)
        except (EvaluationError, StoreError) as exc:
            return _failed(model.CODE_DATASET_ERROR, f"The dataset could not be read: {exc}")
        try:
            handle = handles.get(plan.system)
        except Exception as exc:  # building a system under test (e.g. loading a model) failed
            return _failed(model.CODE_SYSTEM_ERROR, f"The system could not be set up: {exc}")

        def report(done: int, total: int) -> None:
            if progress is not None:
                progress(ProgressEvent(eid, plan.number, model.TaskStatus.RUNNING, done, total))

        try:
            settings = TaskSettings(
                language=plan.language,
                profile=plan.profile,
                dataset_label=f"{plan.dataset}@{plan.version}",
                error_tolerance=self.limits.error_tolerance,
                concurrency=handle.concurrency,
                kb=self.knowledge(),
                bootstrap_samples=self.limits.bootstrap_samples,
                scoring_lock=self._scoring_lock,
                markings_cache=markings,
            )
            return run_task(
                dataset, handle.system, handle.gate, settings, cancel=cancel, progress=report
            )
        except Exception as exc:  # one task's crash must not take the others down (GERBIL -106)
            log.exception("Task %s of experiment %s failed unexpectedly", plan.number, eid)
            return _failed(model.CODE_UNEXPECTED, f"Unexpected error: {type(exc).__name__}: {exc}")

"""Carry out one asking run of an experiment and record it: ask once, score under every profile.

The tasks of an asking run (``model.AskingUnit``: one system, dataset version and language) differ
only in their profile. ``TaskWorker.execute`` marks them running, asks the questions that have no
stored reply (``evaluators.experiments.task``), stores every reply as it comes in (small
transactions through ``AnswerRecorder``, so a killed run keeps what it was told), then scores the
replies under each task's profile and records each task's outcome (state, times, error count and
Data Cube results) in one transaction. ``StoreWriter`` serialises the writes of all tasks of a
runner and calls ``on_write`` after each. Failures map to GERBIL's state codes (reference
gerbil-qa.md §2.5).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from pyoxigraph import Quad

from evaluators.datasets import library
from evaluators.defaults import RunLimits
from evaluators.errors import EvaluationError
from evaluators.experiments import model, rdf
from evaluators.experiments.answers import reply_quads, stored_replies
from evaluators.experiments.rdf import result_quads
from evaluators.experiments.recovery import process_token, task_state_quads
from evaluators.experiments.run_systems import SystemHandles
from evaluators.experiments.task import (
    AskOutcome,
    AskSettings,
    Reply,
    ScoreSettings,
    all_undefined,
    ask_questions,
    score_replies,
)
from evaluators.knowledge.bases import KnowledgeBase
from evaluators.model import Dataset, Question
from evaluators.qa.markings import Markings
from evaluators.qa.profiles import PROFILES
from evaluators.results import EvaluationResult
from evaluators.systems.protocol import SystemKind
from store import graphs
from store.errors import StoreError
from store.protocol import RdfStore
from vocab import iris
from vocab.project import QAB

log = logging.getLogger(__name__)

# Replies are stored in transactions of at most this many, or after this many seconds.
RECORD_BATCH = 25
RECORD_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """Progress of one task: ``done`` of ``total`` questions asked."""

    experiment_id: str
    task: int
    status: model.TaskStatus
    done: int
    total: int


Progress = Callable[[ProgressEvent], None]
# Turns a reply into the one that is scored (e.g. runs a SPARQL-only answer's query).
Completion = Callable[[Question, Reply], Reply]


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
        self.set_states(eid, (number,), state, extra)

    def set_states(
        self,
        eid: str,
        numbers: Sequence[int],
        state: model.TaskState,
        extra: Iterable[Quad] = (),
    ) -> None:
        """Give several tasks the same state (and add ``extra``) in one transaction."""
        old: list[Quad] = []
        new: list[Quad] = list(extra)
        with self._lock:
            for number in numbers:
                old += task_state_quads(self.store, self.base, eid, number)
        for number in numbers:
            new += rdf.state_quads(self.base, eid, number, state)
        self.write(old, new)

    def mark_runner(self, eid: str) -> None:
        """Record this process as the one running an experiment (private admin graph)."""
        node = iris.experiment_iri(self.base, eid)
        admin = graphs.admin_graph(self.base)
        with self._lock:
            old = list(self.store.quads(node, QAB.runnerProcess, None, admin))
        self.write(old, [rdf.runner_quad(self.base, eid, process_token())])


class AnswerRecorder:
    """Stores the replies of one asking run as they come in, a few per transaction."""

    def __init__(
        self,
        writer: StoreWriter,
        eid: str,
        unit: model.AskingUnit,
        positions: dict[str, int],
    ) -> None:
        self._writer = writer
        self._eid = eid
        self._unit = unit
        self._positions = positions
        self._pending: list[Reply] = []
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def __call__(self, reply: Reply) -> None:
        """Buffer a reply; write the buffer when it is full or old enough."""
        with self._lock:
            self._pending.append(reply)
            due = (
                len(self._pending) >= RECORD_BATCH
                or time.monotonic() - self._last >= RECORD_SECONDS
            )
        if due:
            self.flush()

    def flush(self) -> None:
        """Write every buffered reply in one transaction."""
        with self._lock:
            pending, self._pending = self._pending, []
            self._last = time.monotonic()
        if not pending:
            return
        quads: list[Quad] = []
        for reply in pending:
            position = self._positions.get(reply.question_id, 0)
            quads += reply_quads(self._writer.base, self._eid, self._unit, reply, position)
        self._writer.write([], quads)


@dataclass(frozen=True, slots=True)
class _Failure:
    code: int
    message: str


class TaskWorker:
    """Runs the asking runs of one runner (shared by its threads)."""

    def __init__(
        self,
        writer: StoreWriter,
        *,
        limits: RunLimits,
        release: model.SoftwareRelease,
        knowledge: Callable[[str], KnowledgeBase | None],
        completion: Callable[[str], Completion | None] | None = None,
        reference_notes: Callable[[str, Dataset], Mapping[str, str] | None] | None = None,
    ) -> None:
        self.writer = writer
        self.store = writer.store
        self.base = writer.base
        self.limits = limits
        self.release = release
        self.knowledge = knowledge
        # both take the experiment id: each experiment has its own knowledge base
        self.completion = completion or (lambda _eid: None)
        self.reference_notes = reference_notes or (lambda _eid, _dataset: None)
        # Scoring parses SPARQL with rdflib, whose pyparsing grammar is not thread-safe; it is
        # CPU-bound anyway, so tasks take turns there (asking the systems still overlaps).
        self._scoring_lock = threading.Lock()

    def execute(
        self,
        eid: str,
        plans: Sequence[model.TaskPlan],
        handles: SystemHandles,
        cancel: threading.Event,
        progress: Progress | None,
        markings: MutableMapping[tuple[str, str], Markings] | None = None,
    ) -> None:
        """Ask the questions of one asking run once, then score and record each of its tasks.

        ``plans`` are the tasks of one ``AskingUnit`` (one per profile); nothing happens once
        ``cancel`` is set. ``markings`` is a cache of query markings the tasks of a run share.
        """
        if cancel.is_set() or not plans:
            return
        numbers = [p.number for p in plans]
        started = now()
        running = model.TaskState(
            model.TaskStatus.RUNNING, model.CODE_RUNNING, started=started, release=self.release
        )
        self.writer.set_states(eid, numbers, running)
        asked = self._ask(eid, plans, handles, cancel, progress)
        if isinstance(asked, _Failure):
            self._end(eid, numbers, started, model.TaskStatus.FAILED, asked.code, asked.message, 0)
            return
        dataset, outcome = asked
        if outcome.status is not model.TaskStatus.FINISHED:
            self._end(
                eid,
                numbers,
                started,
                outcome.status,
                outcome.code,
                outcome.message,
                outcome.errors,
            )
        else:
            for plan in plans:
                self._score(eid, plan, dataset, outcome, started, markings)
        if progress is not None:
            for plan in plans:
                total = outcome.questions
                progress(ProgressEvent(eid, plan.number, outcome.status, total, total))

    def _end(
        self,
        eid: str,
        numbers: Sequence[int],
        started: datetime,
        status: model.TaskStatus,
        code: int,
        message: str | None,
        errors: int,
        extra: Iterable[Quad] = (),
    ) -> None:
        final = model.TaskState(
            status,
            code,
            message=(message or "")[:1000] or None,
            started=started,
            ended=now(),
            errors=errors,
            release=self.release,
        )
        self.writer.set_states(eid, numbers, final, extra)

    def _ask(
        self,
        eid: str,
        plans: Sequence[model.TaskPlan],
        handles: SystemHandles,
        cancel: threading.Event,
        progress: Progress | None,
    ) -> _Failure | tuple[Dataset, AskOutcome]:
        first = plans[0]
        unit = model.AskingUnit.of(first)
        try:
            version = library.version_info(self.store, self.base, first.dataset, first.version)
            dataset = library.read_dataset(self.store, version)
        except (EvaluationError, StoreError) as exc:
            return _Failure(model.CODE_DATASET_ERROR, f"The dataset could not be read: {exc}")
        try:
            handle = handles.get(first.system)
        except Exception as exc:  # building a system under test (e.g. loading a model) failed
            return _Failure(model.CODE_SYSTEM_ERROR, f"The system could not be set up: {exc}")

        def report(done: int, total: int) -> None:
            if progress is not None:
                progress(ProgressEvent(eid, first.number, model.TaskStatus.RUNNING, done, total))

        try:
            known = stored_replies(self.store, self.base, eid, unit)
            positions = {q.id: i for i, q in enumerate(dataset.questions)}
            recorder = AnswerRecorder(self.writer, eid, unit, positions)
            settings = AskSettings(
                language=first.language,
                error_tolerance=self.limits.error_tolerance,
                concurrency=handle.concurrency,
                timed=handle.kind is not SystemKind.ANSWER_FILE,
            )
            try:
                outcome = ask_questions(
                    dataset,
                    handle.system,
                    handle.gate,
                    settings,
                    known=known,
                    cancel=cancel,
                    progress=report,
                    record=recorder,
                    complete=self.completion(eid),
                )
            finally:
                recorder.flush()
        except EvaluationError as exc:
            return _Failure(model.CODE_DATASET_ERROR, str(exc))
        except Exception as exc:  # one run's crash must not take the others down (GERBIL -106)
            log.exception("Asking for tasks %s of experiment %s failed", first.number, eid)
            return _Failure(model.CODE_UNEXPECTED, f"Unexpected error: {type(exc).__name__}: {exc}")
        return dataset, outcome

    def _notes(self, eid: str, plan: model.TaskPlan, dataset: Dataset) -> Mapping[str, str] | None:
        rules = PROFILES.get(plan.profile)
        if rules is None or not rules.is_text2sparql:
            return None
        return self.reference_notes(eid, dataset)

    def _score(
        self,
        eid: str,
        plan: model.TaskPlan,
        dataset: Dataset,
        outcome: AskOutcome,
        started: datetime,
        markings: MutableMapping[tuple[str, str], Markings] | None,
    ) -> None:
        settings = ScoreSettings(
            profile=plan.profile,
            language=plan.language,
            dataset_label=f"{plan.dataset}@{plan.version}",
            kb=self.knowledge(eid),
            bootstrap_samples=self.limits.bootstrap_samples,
            scoring_lock=self._scoring_lock,
            markings_cache=markings,
            question_notes=self._notes(eid, plan, dataset),
        )
        try:
            result: EvaluationResult = score_replies(dataset, outcome.replies, settings)
        except EvaluationError as exc:
            self._end(
                eid, [plan.number], started, model.TaskStatus.FAILED,
                model.CODE_DATASET_ERROR, str(exc), outcome.errors,
            )  # fmt: skip
            return
        except Exception as exc:  # one task's crash must not take the others down (GERBIL -106)
            log.exception("Task %s of experiment %s failed unexpectedly", plan.number, eid)
            self._end(
                eid, [plan.number], started, model.TaskStatus.FAILED, model.CODE_UNEXPECTED,
                f"Unexpected error: {type(exc).__name__}: {exc}", outcome.errors,
            )  # fmt: skip
            return
        undefined = all_undefined(result)
        if undefined is not None:
            self._end(
                eid, [plan.number], started, model.TaskStatus.FAILED,
                model.CODE_SYSTEM_ERROR, undefined, outcome.errors,
            )  # fmt: skip
            return
        self._end(
            eid,
            [plan.number],
            started,
            model.TaskStatus.FINISHED,
            model.CODE_FINISHED,
            None,
            outcome.errors,
            result_quads(self.base, eid, plan, result),
        )

"""Run one task: ask a system every question of a dataset, count errors, score the answers.

No store access here: the caller (``evaluators.experiments.runner``) reads the dataset and writes
the outcome. Questions are asked in parallel, bounded by the system's ``RequestGate``. A failing
call is one error for that question and is scored as an empty answer; when errors exceed
``ceil(tolerance x N)`` (N = questions with text in the task's language; GERBIL's 25% rule,
reference gerbil-qa.md §2.5) the task stops asking and is aborted without scores.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from evaluators.bioasq.scoring import evaluate_bioasq
from evaluators.errors import SystemCallError
from evaluators.experiments.model import (
    CODE_FINISHED,
    CODE_INTERRUPTED,
    CODE_TOO_MANY_ERRORS,
    TaskStatus,
)
from evaluators.knowledge.bases import KnowledgeBase
from evaluators.model import Dataset, Question, SourceFormat
from evaluators.qa.markings import Markings
from evaluators.qa.scoring import evaluate
from evaluators.results import BIOASQ_PROFILE, EvaluationResult, MeasureValue
from evaluators.significance import DEFAULT_BOOTSTRAP_SAMPLES
from evaluators.systems.protocol import QASystem, RequestGate

log = logging.getLogger(__name__)

# GERBIL aborts a task whose errors exceed ceil(tolerance x questions).
DEFAULT_ERROR_TOLERANCE = 0.25


@dataclass(frozen=True, slots=True)
class TaskSettings:
    """How one task is evaluated."""

    language: str
    profile: str
    dataset_label: str
    error_tolerance: float = DEFAULT_ERROR_TOLERANCE
    concurrency: int = 1
    kb: KnowledgeBase | None = None
    bootstrap_samples: int = DEFAULT_BOOTSTRAP_SAMPLES
    # held while scoring (rdflib's SPARQL parser must not run in two threads at once)
    scoring_lock: threading.Lock = field(default_factory=threading.Lock, compare=False)
    # query markings shared by the tasks of one run (parsing SPARQL is scoring's costliest step)
    markings_cache: MutableMapping[tuple[str, str], Markings] | None = field(
        default=None, compare=False
    )


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    """What running a task produced."""

    status: TaskStatus
    code: int
    errors: int
    asked: int
    message: str | None = None
    result: EvaluationResult | None = None
    error_messages: tuple[tuple[str, str], ...] = ()


def allowed_errors(questions: int, tolerance: float) -> int:
    """Return how many errors a task may have before it aborts: ``ceil(tolerance x N)``.

    >>> allowed_errors(150, 0.25)
    38
    >>> allowed_errors(0, 0.25)
    0
    """
    # round() first so that 0.25 * 4 = 1.0000000000000002-style noise cannot add one
    return math.ceil(round(tolerance * questions, 9))


@dataclass
class _Collector:
    """Thread-safe accumulation of answers, errors and timings."""

    allowed: int
    answers: dict[str, Question] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    millis: dict[str, float] = field(default_factory=dict)
    done: int = 0
    error_count_at_abort: int | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)

    def success(self, question_id: str, reply: Question, millis: float) -> int:
        with self.lock:
            self.answers[question_id] = reply
            self.millis[question_id] = millis
            self.done += 1
            return self.done

    def failure(self, question_id: str, message: str) -> int:
        with self.lock:
            self.errors[question_id] = message
            self.done += 1
            if len(self.errors) > self.allowed and self.error_count_at_abort is None:
                # GERBIL stops at the first error over the limit; calls still in flight after
                # that moment do not change the recorded count.
                self.error_count_at_abort = len(self.errors)
                self.stop.set()
            return self.done


def _error_text(exc: Exception) -> str:
    if isinstance(exc, SystemCallError):
        return f"{exc.kind}: {exc}"
    return f"{type(exc).__name__}: {exc}"[:500]


def run_task(
    dataset: Dataset,
    system: QASystem,
    gate: RequestGate,
    settings: TaskSettings,
    *,
    cancel: threading.Event | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> TaskOutcome:
    """Ask ``system`` every question of ``dataset`` that has text in the task's language.

    Args:
        dataset: the gold dataset.
        system: the system under test.
        gate: bounds concurrent calls and their rate for this system (shared across tasks).
        settings: language, profile, tolerance, concurrency and KB.
        cancel: set it to stop asking; the task then ends ``interrupted``.
        progress: called with ``(questions done, questions to ask)`` after every question.

    Returns:
        ``finished`` with the evaluation result, ``aborted`` (25% rule) or ``interrupted``.
    """
    asked = [q for q in dataset.questions if q.text(settings.language)]
    total = len(asked)
    box = _Collector(allowed=allowed_errors(total, settings.error_tolerance))
    cancel = cancel or threading.Event()

    def ask(question: Question) -> None:
        if box.stop.is_set() or cancel.is_set():
            return
        with gate.slot():
            if box.stop.is_set() or cancel.is_set():
                return
            start = time.perf_counter()
            try:
                reply = system.answer(question, settings.language)
            except Exception as exc:  # a failing system is a result, not a crash (STYLE §4)
                done = box.failure(question.id, _error_text(exc))
            else:
                elapsed = (time.perf_counter() - start) * 1000.0
                if reply.id != question.id:
                    reply = replace(reply, id=question.id)
                done = box.success(question.id, reply, elapsed)
        if progress is not None:
            progress(done, total)

    with ThreadPoolExecutor(max_workers=max(1, settings.concurrency)) as pool:
        futures = [pool.submit(ask, q) for q in asked]
        for future in futures:
            future.result()
    messages = tuple(sorted(box.errors.items()))
    if box.error_count_at_abort is not None:
        return TaskOutcome(
            TaskStatus.ABORTED,
            CODE_TOO_MANY_ERRORS,
            errors=box.error_count_at_abort,
            asked=total,
            message=(
                f"Too many errors: {box.error_count_at_abort} of {total} questions failed; at "
                f"most {box.allowed} are tolerated (evaluation.error_tolerance = "
                f"{settings.error_tolerance:g}). First error: {messages[0][1]}"
            ),
            error_messages=messages,
        )
    if cancel.is_set() and box.done < total:
        return TaskOutcome(
            TaskStatus.INTERRUPTED,
            CODE_INTERRUPTED,
            errors=len(box.errors),
            asked=total,
            message=f"Stopped after {box.done} of {total} questions",
            error_messages=messages,
        )
    with settings.scoring_lock:
        result = _score(dataset, box, settings)
    return TaskOutcome(
        TaskStatus.FINISHED,
        CODE_FINISHED,
        errors=len(box.errors),
        asked=total,
        result=result,
        error_messages=messages,
    )


def _score(dataset: Dataset, box: _Collector, settings: TaskSettings) -> EvaluationResult:
    """Score the collected answers: BioASQ's official measures or a QA scoring profile."""
    if settings.profile == BIOASQ_PROFILE:
        response = Dataset(SourceFormat.BIOASQ, tuple(box.answers.values()))
        result = evaluate_bioasq(dataset, response, dataset_label=settings.dataset_label)
        # BioASQ's evaluator has no error or runtime measures; the task records them as QA does.
        extra = (
            MeasureValue("errors", float(len(box.errors))),
            _avg_millis(box.millis),
        )
        first = result.results[0]
        measures = first.measures + extra
        return replace(result, results=(replace(first, measures=measures), *result.results[1:]))
    return evaluate(
        dataset,
        box.answers,
        profile=settings.profile,
        language=settings.language,
        kb=settings.kb,
        dataset_label=settings.dataset_label,
        errors=box.errors,
        millis=box.millis,
        bootstrap_samples=settings.bootstrap_samples,
        markings_cache=settings.markings_cache,
    )


def _avg_millis(millis: MutableMapping[str, float]) -> MeasureValue:
    if not millis:
        return MeasureValue("avg_millis", None, "no system call succeeded")
    return MeasureValue("avg_millis", sum(millis.values()) / len(millis))

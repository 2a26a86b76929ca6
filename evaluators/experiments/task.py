"""Ask a system the questions of a dataset, then score the replies: the one scoring path.

``ask_questions`` asks every question that has text in the language and no reply yet (replies a
resumed run already stored are passed in), counts errors and reports each new reply to the
caller, who stores it. ``score_replies`` scores a set of replies under one profile. Experiments
ask once per system, dataset version and language and score under every requested profile;
``qabench evaluate`` replays an answers file through the same two functions, so both give the
same numbers for the same inputs.

No store access here. Questions are asked in parallel, bounded by the system's ``RequestGate``.
A failing call is one error for that question and is scored as an empty answer; a system that
has no answer to a question (an answers file without that id) leaves it unprocessed. When errors
exceed ``ceil(tolerance x N)`` (N = questions with text in the language; GERBIL's 25% rule,
reference gerbil-qa.md §2.5) asking stops and the tasks are aborted without scores.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Mapping, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from evaluators import defaults
from evaluators.bioasq.scoring import evaluate_bioasq
from evaluators.errors import NoQuestionsError, SystemCallError
from evaluators.experiments.model import (
    CODE_FINISHED,
    CODE_INTERRUPTED,
    CODE_TOO_MANY_ERRORS,
    TaskStatus,
)
from evaluators.knowledge.bases import KnowledgeBase
from evaluators.knowledge.execution import QueryExecutor, needs_execution
from evaluators.mirage.scoring import evaluate_mirage
from evaluators.model import Dataset, Question, SourceFormat, language_key
from evaluators.qa.markings import Markings
from evaluators.qa.profiles import PROFILES, AnswerMatching
from evaluators.qa.scoring import evaluate
from evaluators.results import BIOASQ_PROFILE, EvaluationResult, MeasureValue
from evaluators.sciqa.execution_em import evaluate_execution_em
from evaluators.significance import DEFAULT_BOOTSTRAP_SAMPLES
from evaluators.systems.protocol import QASystem, RequestGate, RetryingSystem

log = logging.getLogger(__name__)

# GERBIL aborts a task whose errors exceed ceil(tolerance x questions).
DEFAULT_ERROR_TOLERANCE = defaults.ERROR_TOLERANCE
NOT_TIMED = "the answers were read from a file, not timed"


@dataclass(frozen=True, slots=True)
class Reply:
    """What asking one question produced.

    ``answer`` is the system's answer; ``None`` with no ``error`` means the system has no answer
    to this question (the classic script's "not processed"). ``executed`` names the knowledge
    base the system's SPARQL query was run on (its results are then the answer), and
    ``execution_problem`` why that gave no results (or that they were cut).
    """

    question_id: str
    answer: Question | None
    error: str | None = None
    millis: float | None = None
    executed: str | None = None
    execution_problem: str | None = None
    # the system's retry log of this question (TEXT2SPARQL protocol), in the client's words
    retries: tuple[str, ...] = ()
    # the rows of the system's query as run here (row-level measures; not stored)
    rows: tuple[tuple[str | None, ...], ...] | None = None

    @property
    def answered(self) -> bool:
        """Return whether the system returned an answer (possibly empty) without failing."""
        return self.answer is not None and self.error is None


@dataclass(frozen=True, slots=True)
class AskSettings:
    """How the questions are asked."""

    language: str
    error_tolerance: float = DEFAULT_ERROR_TOLERANCE
    concurrency: int = 1
    # answers files are replayed, not timed: their avg_millis is undefined, not a random ~0
    timed: bool = True


@dataclass(frozen=True, slots=True)
class AskOutcome:
    """The replies of one asking run (stored ones included) and how it ended."""

    status: TaskStatus
    code: int
    replies: dict[str, Reply]
    questions: int
    errors: int
    message: str | None = None


@dataclass(frozen=True, slots=True)
class ScoreSettings:
    """How replies are scored."""

    profile: str
    language: str
    dataset_label: str
    kb: KnowledgeBase | None = None
    bootstrap_samples: int = DEFAULT_BOOTSTRAP_SAMPLES
    bioasq_version: int = 8
    # held while scoring (rdflib's SPARQL parser must not run in two threads at once)
    scoring_lock: threading.Lock = field(default_factory=threading.Lock, compare=False)
    # query markings shared by the tasks of one run (parsing SPARQL is scoring's costliest step)
    markings_cache: MutableMapping[tuple[str, str], Markings] | None = field(
        default=None, compare=False
    )
    # question id -> a remark shown with its result (TEXT2SPARQL engine differences)
    question_notes: Mapping[str, str] | None = field(default=None, compare=False)


def executing(executor: QueryExecutor) -> Callable[[Question, Reply], Reply]:
    """Return the ``complete`` step that runs SPARQL-only answers on ``executor``'s KB.

    An answer with a query and no answer set gets the query's results as its one answer set
    (none when the query could not run: it is then an empty answer) and the reply records the
    knowledge base and any problem. Other replies pass unchanged.
    """

    def complete(question: Question, reply: Reply) -> Reply:
        answer = reply.answer
        if answer is None or answer.sparql is None or not needs_execution(answer):
            return reply
        outcome = executor.run(answer.sparql)
        if outcome.answers is not None:
            answer = replace(answer, answers=(outcome.answers,))
        return replace(
            reply,
            answer=answer,
            executed=executor.description,
            execution_problem=outcome.problem,
            rows=outcome.rows,
        )

    return complete


def allowed_errors(questions: int, tolerance: float) -> int:
    """Return how many errors a task may have before it aborts: ``ceil(tolerance x N)``.

    >>> allowed_errors(150, 0.25)
    38
    >>> allowed_errors(0, 0.25)
    0
    """
    # round() first so that 0.25 * 4 = 1.0000000000000002-style noise cannot add one
    return math.ceil(round(tolerance * questions, 9))


def questions_in(dataset: Dataset, language: str) -> list[Question]:
    """Return the questions that have a text in ``language`` (GERBIL leaves the others out).

    Raises:
        NoQuestionsError: if there is none; the message names the languages the dataset has.
    """
    found = [q for q in dataset.questions if q.text(language)]
    if not found:
        have = sorted({language_key(lang) for q in dataset.questions for lang in q.languages})
        raise NoQuestionsError(language, tuple(have), len(dataset.questions))
    return found


@dataclass
class _Collector:
    """Thread-safe accumulation of replies; decides the abort."""

    allowed: int
    replies: dict[str, Reply]
    record: Callable[[Reply], None] | None
    done: int = 0
    error_count_at_abort: int | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)

    def errors(self) -> int:
        return sum(1 for r in self.replies.values() if r.error is not None)

    def add(self, reply: Reply) -> int:
        with self.lock:
            self.replies[reply.question_id] = reply
            self.done += 1
            if reply.error is not None:
                count = self.errors()
                if count > self.allowed and self.error_count_at_abort is None:
                    # GERBIL stops at the first error over the limit; calls still in flight
                    # after that moment do not change the recorded count.
                    self.error_count_at_abort = count
                    self.stop.set()
            done = self.done
        if self.record is not None:
            self.record(reply)
        return done


def _error_text(exc: Exception) -> str:
    if isinstance(exc, SystemCallError):
        return f"{exc.kind}: {exc}"
    return f"{type(exc).__name__}: {exc}"[:500]


def ask_questions(
    dataset: Dataset,
    system: QASystem,
    gate: RequestGate,
    settings: AskSettings,
    *,
    known: Mapping[str, Reply] | None = None,
    cancel: threading.Event | None = None,
    progress: Callable[[int, int], None] | None = None,
    record: Callable[[Reply], None] | None = None,
    complete: Callable[[Question, Reply], Reply] | None = None,
) -> AskOutcome:
    """Ask ``system`` every question with text in the language that has no reply in ``known``.

    Args:
        dataset: the gold dataset.
        system: the system under test.
        gate: bounds concurrent calls and their rate for this system (shared across runs).
        settings: language, tolerance, concurrency, whether calls are timed.
        known: replies stored by an earlier, interrupted run; those questions are not asked.
        cancel: set it to stop asking; the outcome is then ``interrupted``.
        progress: called with ``(questions done, questions in the language)``.
        record: called with every new reply (from the asking threads), e.g. to store it.
        complete: turns a reply into the one that is scored (e.g. runs a SPARQL-only answer's
            query); called in the asking thread before ``record``.

    Returns:
        ``finished``, ``aborted`` (25% rule) or ``interrupted``, with every reply.

    Raises:
        NoQuestionsError: if no question has a text in the language.
    """
    wanted = questions_in(dataset, settings.language)
    total = len(wanted)
    replies = {qid: r for qid, r in (known or {}).items() if any(q.id == qid for q in wanted)}
    box = _Collector(allowed_errors(total, settings.error_tolerance), dict(replies), record)
    box.done = len(replies)
    if box.errors() > box.allowed:
        box.error_count_at_abort = box.errors()
    cancel = cancel or threading.Event()

    def ask(question: Question) -> None:
        if box.stop.is_set() or cancel.is_set():
            return
        with gate.slot():
            if box.stop.is_set() or cancel.is_set():
                return
            start = time.perf_counter()
            try:
                answer = system.answer(question, settings.language)
            except Exception as exc:  # a failing system is a result, not a crash (STYLE §4)
                reply = Reply(question.id, None, _error_text(exc))
            else:
                elapsed = (time.perf_counter() - start) * 1000.0 if settings.timed else None
                if answer is not None and answer.id != question.id:
                    answer = replace(answer, id=question.id)
                reply = Reply(question.id, answer, millis=elapsed)
            if isinstance(system, RetryingSystem):
                reply = replace(reply, retries=system.retries_of(question.id))
        if complete is not None and reply.answered:
            reply = complete(question, reply)
        done = box.add(reply)
        if progress is not None:
            progress(done, total)

    todo = [q for q in wanted if q.id not in replies]
    if todo and box.error_count_at_abort is None:
        with ThreadPoolExecutor(max_workers=max(1, settings.concurrency)) as pool:
            for future in [pool.submit(ask, q) for q in todo]:
                future.result()
    return _outcome(box, total, settings)


def _outcome(box: _Collector, total: int, settings: AskSettings) -> AskOutcome:
    errors = sorted((r.question_id, r.error) for r in box.replies.values() if r.error)
    if box.error_count_at_abort is not None:
        return AskOutcome(
            TaskStatus.ABORTED,
            CODE_TOO_MANY_ERRORS,
            box.replies,
            total,
            box.error_count_at_abort,
            f"Too many errors: {box.error_count_at_abort} of {total} questions failed; at "
            f"most {box.allowed} are tolerated (evaluation.error_tolerance = "
            f"{settings.error_tolerance:g}). First error: {errors[0][1]}",
        )
    if len(box.replies) < total:
        return AskOutcome(
            TaskStatus.INTERRUPTED,
            CODE_INTERRUPTED,
            box.replies,
            total,
            len(errors),
            f"Stopped after {len(box.replies)} of {total} questions",
        )
    return AskOutcome(TaskStatus.FINISHED, CODE_FINISHED, box.replies, total, len(errors))


def score_replies(
    dataset: Dataset, replies: Mapping[str, Reply], settings: ScoreSettings
) -> EvaluationResult:
    """Score replies under one profile: BioASQ's official measures or a QA scoring profile.

    A question whose reply carries no answer and no error is left out of the answers (not
    processed); a failed call is an error, scored as an empty answer.

    Raises:
        NoQuestionsError: if no question has a text in the language.
    """
    questions_in(dataset, settings.language)
    answers = {qid: r.answer for qid, r in replies.items() if r.answered and r.answer is not None}
    errors = {qid: r.error for qid, r in replies.items() if r.error is not None}
    millis = {qid: r.millis for qid, r in replies.items() if r.millis is not None}
    with settings.scoring_lock:
        if settings.profile == BIOASQ_PROFILE:
            return _bioasq(dataset, answers, errors, millis, settings)
        rules = PROFILES.get(settings.profile)
        if rules is not None and rules.family_scored:
            result = _family(rules.answers, dataset, answers, errors, millis, settings)
            return result if millis or not answers else _untimed(result)
        result = evaluate(
            dataset,
            answers,
            profile=settings.profile,
            language=settings.language,
            kb=settings.kb,
            dataset_label=settings.dataset_label,
            errors=errors,
            millis=millis,
            bootstrap_samples=settings.bootstrap_samples,
            markings_cache=settings.markings_cache,
            question_notes=settings.question_notes,
        )
    if millis or not answers:
        return result
    return _untimed(result)


def _untimed(result: EvaluationResult) -> EvaluationResult:
    # answers read from a file: the mean time would be a meaningless ~0, so it is undefined
    typed = []
    for r in result.results:
        measures = tuple(
            MeasureValue("avg_millis", None, NOT_TIMED) if m.measure == "avg_millis" else m
            for m in r.measures
        )
        typed.append(replace(r, measures=measures))
    return replace(result, results=tuple(typed))


def _family(
    family: AnswerMatching,
    dataset: Dataset,
    answers: Mapping[str, Question],
    errors: Mapping[str, str],
    millis: Mapping[str, float],
    settings: ScoreSettings,
) -> EvaluationResult:
    """Score under a profile whose family scores it (issue 39: MIRAGE, execution EM)."""
    scorer = evaluate_mirage if family is AnswerMatching.MIRAGE else evaluate_execution_em
    return scorer(
        dataset,
        answers,
        language=settings.language,
        label=settings.dataset_label,
        errors=errors,
        millis=millis,
    )


def _bioasq(
    dataset: Dataset,
    answers: Mapping[str, Question],
    errors: Mapping[str, str],
    millis: Mapping[str, float],
    settings: ScoreSettings,
) -> EvaluationResult:
    response = Dataset(SourceFormat.BIOASQ, tuple(answers.values()))
    result = evaluate_bioasq(
        dataset,
        response,
        version=settings.bioasq_version,
        dataset_label=settings.dataset_label,
    )
    # BioASQ's evaluator has no error or runtime measures; the task records them as QA does.
    extra = (MeasureValue("errors", float(len(errors))), _avg_millis(millis, bool(answers)))
    first = result.results[0]
    measures = first.measures + extra
    return replace(result, results=(replace(first, measures=measures), *result.results[1:]))


def _avg_millis(millis: Mapping[str, float], answered: bool) -> MeasureValue:
    if not millis:
        reason = NOT_TIMED if answered else "no system call succeeded"
        return MeasureValue("avg_millis", None, reason)
    return MeasureValue("avg_millis", sum(millis.values()) / len(millis))


# Counts the task adds next to the scores; they are defined even when nothing could be scored.
_BOOKKEEPING = frozenset({"errors", "avg_millis", "questions"})


def all_undefined(result: EvaluationResult) -> str | None:
    """Return why nothing could be scored when every measure is undefined, else ``None``.

    A task whose every measure is undefined has not measured the system (for example a
    BioASQ task whose system answered without documents, snippets or exact answers); it is
    an error with this reason, never "finished".
    """
    reasons: dict[str, str] = {}
    for part in result.results:
        for measure in part.measures:
            if measure.measure in _BOOKKEEPING:
                continue
            if measure.value is not None:
                return None
            reasons.setdefault(part.experiment_type, measure.undefined_reason or "undefined")
    if not reasons:
        return None
    detail = "; ".join(f"{kind}: {why}" for kind, why in reasons.items())
    return (
        f"Nothing could be scored, every measure is undefined ({detail}). Check that the "
        "system's answers carry what this dataset scores (a BioASQ web service must answer "
        "BioASQ JSON when asked for application/vnd.bioasq+json)."
    )[:1000]

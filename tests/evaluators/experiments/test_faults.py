"""A misbehaving QA service, one fault at a time: every faulty question is exactly one error,
scored as an empty answer, and the task finishes, or aborts by GERBIL's 25% rule with that
state and error count recorded."""

from __future__ import annotations

import math

import pytest

from evaluators.experiments.model import TaskStatus
from evaluators.experiments.runner import ExperimentRequest, SystemRequest
from evaluators.experiments.task import allowed_errors
from evaluators.model import Question
from evaluators.qa.scoring import evaluate
from evaluators.systems.protocol import SystemKind
from tests.plugins.qa_stub import FAULTS, Reply
from tests.plugins.qa_stub_experiments import TextOracle, faulty, is_faulted, limits_for_tests

DATASET = "qald-8-test"  # 41 questions, all with English text
EVERY = 5  # questions 5, 10, 15, ... misbehave


def _run(load_qald, make_runner, qa_stubs, behaviour_for, **limits):
    data = load_qald(DATASET)[DATASET]
    oracle = TextOracle()
    oracle.add(data)
    stub = qa_stubs(behaviour_for(oracle))
    runner = make_runner(limits_for_tests(**limits))
    submission = runner.submit(
        ExperimentRequest(
            systems=(SystemRequest("flaky", SystemKind.WEB_SERVICE, url=stub.url),),
            datasets=(DATASET,),
        )
    )
    summary = runner.run(submission.id)
    [task] = summary.tasks
    return data, stub, task


def test_the_faulted_share_stays_within_the_tolerance() -> None:
    # 41 questions; ids 5, 10, ..., 45 fail (9 errors) and GERBIL tolerates ceil(0.25 * 41) = 11
    assert allowed_errors(41, 0.25) == math.ceil(0.25 * 41) == 11
    assert len(FAULTS) == 7


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_fault_is_one_error_per_question_and_the_task_finishes(
    load_qald, make_runner, qa_stubs, fault: str
) -> None:
    data, stub, task = _run(
        load_qald,
        make_runner,
        qa_stubs,
        lambda oracle: faulty(oracle, [fault], EVERY),
        max_response_bytes=10_000_000,
    )
    faulted = {q.id for q in data.questions if is_faulted(q.id, EVERY)}
    assert len(faulted) == 9
    assert task.status is TaskStatus.FINISHED, task.message
    assert task.errors == len(faulted)
    qa = next(r for r in task.results if r.experiment_type == "QA")
    assert qa.value("errors") == len(faulted)
    # the faulty questions are scored as empty answers, the others got their gold answers
    answers = {
        q.id: Question(id=q.id, answers=q.answers) for q in data.questions if q.id not in faulted
    }
    expected = evaluate(data, answers, errors=dict.fromkeys(faulted, "x"), bootstrap_samples=20)
    for measure in ("macro_precision", "macro_recall", "macro_f1", "micro_f1", "macro_f1_qald"):
        assert qa.value(measure) == pytest.approx(expected.get("QA").value(measure)), measure  # type: ignore[union-attr]
    assert len(stub.requests) == 41  # nothing retried


def test_too_many_errors_abort_the_task_without_scores(load_qald, make_runner, qa_stubs) -> None:
    always_500 = lambda oracle: lambda text, lang: Reply(kind="status", status=500)  # noqa: E731
    _, stub, task = _run(load_qald, make_runner, qa_stubs, always_500)
    assert task.status is TaskStatus.ABORTED
    assert task.code == -108
    # GERBIL stops at the first error over the limit: 11 are tolerated, the 12th aborts
    assert task.errors == allowed_errors(41, 0.25) + 1 == 12
    assert task.results == ()
    assert "12 of 41" in (task.message or "")
    assert len(stub.requests) < 41  # it stopped asking


def test_a_stricter_tolerance_aborts_earlier(load_qald, make_runner, qa_stubs) -> None:
    _, _, task = _run(
        load_qald,
        make_runner,
        qa_stubs,
        lambda oracle: faulty(oracle, ["http-500"], EVERY),
        error_tolerance=0.1,
    )
    # ceil(0.1 * 41) = 5 tolerated; the 6th of the 9 faulty questions aborts
    assert task.status is TaskStatus.ABORTED
    assert task.errors == 6


def test_rate_limited_service_is_retried_and_scores_normally(
    load_qald, make_runner, qa_stubs
) -> None:
    seen: set[str] = set()

    def behaviour_for(oracle: TextOracle):
        good = faulty(oracle, ["http-500"], 10_000)  # never faults: gold for everything

        def behave(text: str, lang: str) -> Reply:
            if text not in seen:
                seen.add(text)
                return Reply(kind="status", status=429, headers=(("Retry-After", "0"),))
            return good(text, lang)

        return behave

    _, stub, task = _run(load_qald, make_runner, qa_stubs, behaviour_for, retries=1)
    assert task.status is TaskStatus.FINISHED and task.errors == 0
    assert len(stub.requests) == 82
    qa = next(r for r in task.results if r.experiment_type == "QA")
    assert qa.value("macro_f1") == 1.0

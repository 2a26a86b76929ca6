"""Experiments: submission checks, ids, publication, credentials, built-in systems and
background runs, on real QALD data in a temporary store (the three-system acceptance run is in
``tests/evaluators/experiments/test_acceptance.py``)."""

from __future__ import annotations

import dataclasses
import threading
from datetime import date
from importlib import resources
from pathlib import Path

import pytest
from pyoxigraph import RdfFormat

from evaluators.datasets import library
from evaluators.errors import (
    AnswerFileMismatchError,
    KnowledgeBaseError,
    UnknownDatasetError,
    UnknownExperimentError,
    UnknownSubExperimentError,
    UnknownSystemError,
)
from evaluators.experiments.model import TaskStatus
from evaluators.experiments.plan import new_experiment_id
from evaluators.experiments.read import list_experiments
from evaluators.experiments.runner import ExperimentRequest, SystemRequest
from evaluators.knowledge.bases import load_kb
from evaluators.systems.protocol import SystemKind
from store import graphs
from store.visibility import private_experiment_ids
from tests import REPO
from tests.evaluators.integrity import violations
from tests.plugins.qa_stub import ok
from tests.plugins.qa_stub_experiments import (
    TextOracle,
    even_gold,
    limits_for_tests,
)


def _gold_request(**changes) -> ExperimentRequest:
    settings = {
        "systems": (SystemRequest("gold", SystemKind.BUILT_IN, builtin="gold"),),
        "datasets": ("qald-8-test",),
    }
    settings.update(changes)
    return ExperimentRequest(**settings)  # type: ignore[arg-type]


def test_publish_flips_the_flag_and_records_the_time_once(
    load_qald, make_runner, store, config
) -> None:
    load_qald("qald-8-test")
    runner = make_runner()
    submission = runner.submit(_gold_request())
    assert private_experiment_ids(store, config.base_iri) == {submission.id}
    assert runner.publish(submission.id).published
    assert runner.publish(submission.id).published
    g = graphs.experiment_graph(config.base_iri, submission.id)
    times = store.select(
        "PREFIX qab: <https://w3id.org/qabench/vocab#> PREFIX dct: <http://purl.org/dc/terms/> "
        "SELECT ?g ?t ?i WHERE { GRAPH ?g { ?e qab:publishedAt ?t ; dct:issued ?i } }",
        g=g,
    )
    assert len(times) == 1 and times[0]["t"] == times[0]["i"]
    assert private_experiment_ids(store, config.base_iri) == set()
    with pytest.raises(UnknownExperimentError, match="202001010000"):
        runner.publish("202001010000")


def test_publish_at_submission_makes_the_experiment_public_at_once(
    load_qald, make_runner, store, config
) -> None:
    load_qald("qald-8-test")
    submission = make_runner().submit(_gold_request(publish=True))
    assert private_experiment_ids(store, config.base_iri) == set()
    assert store.ask(
        "PREFIX qab: <https://w3id.org/qabench/vocab#> ASK { GRAPH ?g { ?e qab:publishedAt ?t } }",
        g=graphs.experiment_graph(config.base_iri, submission.id),
    )


# ------------------------------------------------------------------------------ submission


def test_credentials_in_a_service_url_are_used_but_never_stored(
    load_qald, make_runner, qa_stubs, store
) -> None:
    load_qald("qald-8-test")
    stub = qa_stubs()
    secret_url = stub.url.replace("http://", "http://alice:s3cret-pw@") + "?api_key=TOPSECRET&x=1"
    runner = make_runner()
    submission = runner.submit(
        ExperimentRequest(
            systems=(SystemRequest("mine", SystemKind.WEB_SERVICE, url=secret_url),),
            datasets=("qald-8-test",),
        )
    )
    summary = runner.run(submission.id)
    assert summary.tasks[0].status is TaskStatus.FINISHED
    assert len(stub.requests) == 41
    dump = "\n".join(str(q) for q in store.quads())
    assert "s3cret-pw" not in dump and "TOPSECRET" not in dump and "alice" not in dump
    assert stub.url + "?x=1" in dump


def test_answer_file_with_unknown_or_duplicated_ids_is_refused_before_anything_is_written(
    load_qald, make_runner, store, tmp_path: Path
) -> None:
    load_qald("qald-8-test")
    before = len(store)
    answers = tmp_path / "answers.json"
    answers.write_text(
        '{"questions": ['
        '{"id": "1", "answers": []}, {"id": "1", "answers": []}, {"id": "4711", "answers": []}]}'
    )
    with pytest.raises(AnswerFileMismatchError) as caught:
        make_runner().submit(
            ExperimentRequest(
                systems=(SystemRequest("f", SystemKind.ANSWER_FILE, answers_path=answers),),
                datasets=("qald-8-test",),
            )
        )
    assert caught.value.unknown_ids == () and caught.value.duplicate_ids == ("1",)
    # without the duplicate, the unknown id is ignored and listed, unless ids are strict
    answers.write_text('{"questions": [{"id": "1", "answers": []}, {"id": "4711", "answers": []}]}')
    files = (SystemRequest("f", SystemKind.ANSWER_FILE, answers_path=answers),)
    for runner, request in (
        (make_runner(strict_ids=True), ExperimentRequest(files, ("qald-8-test",))),
        (make_runner(), ExperimentRequest(files, ("qald-8-test",), strict_ids=True)),
    ):
        with pytest.raises(AnswerFileMismatchError) as caught:
            runner.submit(request)
        assert caught.value.unknown_ids == ("4711",)
    assert len(store) == before
    submission = make_runner().submit(ExperimentRequest(files, ("qald-8-test",)))
    warning = "answers file answers.json: 1 id(s) not in qald-8-test@1 were ignored: '4711'"
    assert submission.warnings == (warning,)
    summary = make_runner(strict_ids=True).run(submission.id)
    assert summary.warnings == (warning,) and summary.tasks[0].status is TaskStatus.FINISHED


@pytest.mark.parametrize(
    ("request_", "error"),
    [
        (
            ExperimentRequest(
                systems=(SystemRequest("g", SystemKind.BUILT_IN, builtin="gold"),),
                datasets=("no-such-dataset",),
            ),
            UnknownDatasetError,
        ),
        (
            ExperimentRequest(
                systems=(SystemRequest("g", SystemKind.BUILT_IN, builtin="rag"),),
                datasets=("qald-8-test",),
            ),
            UnknownSystemError,
        ),
        (
            ExperimentRequest(
                systems=(SystemRequest("w", SystemKind.WEB_SERVICE, url="ftp://x/"),),
                datasets=("qald-8-test",),
            ),
            UnknownSystemError,
        ),
        (
            ExperimentRequest(
                systems=(SystemRequest("g", SystemKind.BUILT_IN, builtin="gold"),),
                datasets=("qald-8-test",),
                profiles=("lenient",),
            ),
            UnknownSubExperimentError,
        ),
        (
            ExperimentRequest(
                systems=(
                    SystemRequest("g", SystemKind.BUILT_IN, builtin="gold"),
                    SystemRequest("g", SystemKind.BUILT_IN, builtin="gold"),
                ),
                datasets=("qald-8-test",),
            ),
            UnknownSystemError,
        ),
        (ExperimentRequest(systems=(), datasets=("qald-8-test",)), UnknownSystemError),
        # Issue 41: a system named as a built-in merged into /system/gold, whatever its case
        *(
            (
                ExperimentRequest(
                    systems=(SystemRequest(name, SystemKind.WEB_SERVICE, url="http://x.test/"),),
                    datasets=("qald-8-test",),
                ),
                UnknownSystemError,
            )
            for name in ("gold", "GOLD", "Gold!")
        ),
        (
            ExperimentRequest(
                systems=(SystemRequest("gold", SystemKind.BUILT_IN, builtin="rag"),),
                datasets=("qald-8-test",),
            ),
            UnknownSystemError,
        ),
        (
            ExperimentRequest(
                systems=(
                    SystemRequest("My QA", SystemKind.WEB_SERVICE, url="http://x.test/"),
                    SystemRequest("my-qa", SystemKind.WEB_SERVICE, url="http://y.test/"),
                ),
                datasets=("qald-8-test",),
            ),
            UnknownSystemError,
        ),
    ],
)
def test_bad_requests_are_refused_and_nothing_is_written(
    load_qald, make_runner, store, request_, error
) -> None:
    load_qald("qald-8-test")
    before = len(store)
    with pytest.raises(error):
        make_runner().submit(request_)
    assert len(store) == before


def test_gold_builtin_scores_one_on_every_qa_measure(load_qald, make_runner) -> None:
    load_qald("qald-8-test")
    runner = make_runner()
    submission = runner.submit(
        ExperimentRequest(
            systems=(SystemRequest("gold", SystemKind.BUILT_IN, builtin="gold"),),
            datasets=("qald-8-test",),
            profiles=("strict", "gerbil"),
        )
    )
    summary = runner.run(submission.id)
    assert [t.plan.profile for t in summary.tasks] == ["strict", "gerbil"]
    for task in summary.tasks:
        qa = next(r for r in task.results if r.experiment_type == "QA")
        for measure in (
            "micro_precision",
            "micro_recall",
            "micro_f1",
            "macro_precision",
            "macro_recall",
            "macro_f1",
            "macro_f1_qald",
        ):
            assert qa.value(measure) == 1.0, (task.plan.profile, measure)
        assert qa.value("errors") == 0


def test_ids_count_up_within_a_day(load_qald, make_runner) -> None:
    load_qald("qald-8-test")
    runner = make_runner()
    request = ExperimentRequest(
        systems=(SystemRequest("gold", SystemKind.BUILT_IN, builtin="gold"),),
        datasets=("qald-8-test",),
    )
    first = runner.submit(request).id
    second = runner.submit(request).id
    assert second[:8] == first[:8] and int(second[8:]) == int(first[8:]) + 1


@pytest.mark.parametrize(
    ("existing", "today", "expected"),
    [
        ([], "20240101", "202401010000"),
        (["202401010000", "202401010007"], "20240101", "202401010008"),
        (["202312319999"], "20240101", "202401010000"),
        (["20240101000", "garbage", "202401010003"], "20240101", "202401010004"),
    ],
)
def test_new_experiment_id_resumes_the_day_counter(existing, today, expected) -> None:

    day = date(int(today[:4]), int(today[4:6]), int(today[6:]))
    assert new_experiment_id(existing, day) == expected


def test_background_start_returns_at_once_and_reports_every_write(
    load_qald, make_runner, qa_stubs
) -> None:
    data = load_qald("qald-8-test")
    oracle = TextOracle()
    oracle.add(data["qald-8-test"])
    release = threading.Event()

    def slow(text: str, lang: str):
        release.wait(10)
        return even_gold(oracle)(text, lang)

    stub = qa_stubs(slow)
    writes: list[int] = []
    runner = make_runner(
        limits_for_tests(request_timeout_seconds=30), on_write=lambda: writes.append(1)
    )
    submission = runner.start(
        ExperimentRequest(
            systems=(SystemRequest("s", SystemKind.WEB_SERVICE, url=stub.url),),
            datasets=("qald-8-test",),
        )
    )
    assert submission.id in runner.live()
    states = [t.status for t in runner.summary(submission.id).tasks]
    assert states in ([TaskStatus.QUEUED], [TaskStatus.RUNNING])
    release.set()
    assert runner.wait(submission.id, 60)
    summary = runner.summary(submission.id)
    assert summary.tasks[0].status is TaskStatus.FINISHED
    # submission, runner record, running state, the stored answers (41 replies, written in
    # batches of at most RECORD_BATCH or every RECORD_SECONDS), final state
    assert 4 + 2 <= len(writes) <= 4 + 41
    assert submission.id not in runner.live()
    assert [e.id for e in list_experiments(runner.store, runner.base)] == [submission.id]


def test_experiment_graphs_pass_the_data_cube_integrity_constraints(
    make_runner, qa_stubs, store, config, shared_data: Path
) -> None:
    base = config.base_iri
    small = shared_data / "qald/ag-sc_QALD/4/data/qald-4_hybrid_test_withanswers.xml"
    library.load_dataset(store, base, small, name="qald-4-hybrid-test")
    store.load(
        resources.files("vocab").joinpath("project.ttl").read_bytes(),
        RdfFormat.TURTLE,
        graph=graphs.vocab_graph(base),
    )
    stub = qa_stubs(lambda text, lang: ok(None))  # a system that never knows
    runner = make_runner()
    submission = runner.submit(
        _gold_request(
            systems=(
                SystemRequest("gold", SystemKind.BUILT_IN, builtin="gold"),
                SystemRequest("empty", SystemKind.WEB_SERVICE, url=stub.url),
            ),
            datasets=("qald-4-hybrid-test",),
        )
    )
    summary = runner.run(submission.id)
    assert [t.status for t in summary.tasks] == [TaskStatus.FINISHED] * 2
    found = violations(store.ask, lambda q: [r["p"].value for r in store.select(q)], grouped=True)
    assert found == []


def test_the_knowledge_base_is_part_of_every_task_provenance(
    load_qald, make_runner, store, config
) -> None:
    load_qald("qald-8-test")
    base = config.base_iri
    load_kb(store, base, REPO / "server/examples/example-kb.ttl", "example")
    runner = make_runner(kb="example")
    submission = runner.submit(_gold_request(profiles=("strict", "gerbil")))
    summary = runner.run(submission.id)
    assert [t.status for t in summary.tasks] == [TaskStatus.FINISHED] * 2
    rows = store.select(
        "PREFIX prov: <http://www.w3.org/ns/prov#> PREFIX qab: <https://w3id.org/qabench/vocab#> "
        "SELECT ?g ?task ?kb WHERE { GRAPH ?g { ?task a qab:Task ; prov:used ?kb . "
        "?kb qab:kbGraph ?graph } }",
        g=graphs.experiment_graph(base, submission.id),
    )
    assert {r["kb"].value for r in rows} == {f"{base}/kb/example"}
    assert len(rows) == 2


def test_each_experiment_keeps_the_knowledge_base_it_was_submitted_with(
    load_qald, make_runner, store, config
) -> None:
    load_qald("qald-8-test")
    load_kb(store, config.base_iri, REPO / "server/examples/example-kb.ttl", "example")
    runner = make_runner()  # no default knowledge base
    with_kb = runner.submit(_gold_request(kb="example"))
    without = runner.submit(_gold_request())
    # a runner of another process reads the knowledge base back from the record
    other = make_runner(kb="example")
    assert other._kb_spec(with_kb.id) == "example" and other._kb_spec(without.id) == ""
    before = len(store)
    with pytest.raises(KnowledgeBaseError, match="was run with knowledge base 'example'"):
        other.resume(with_kb.id, kb="another")
    with pytest.raises(KnowledgeBaseError, match="was run with knowledge base 'none'"):
        other.resume(without.id, kb="example")
    assert len(store) == before
    summary = other.resume(with_kb.id, kb="example")
    assert [t.status for t in summary.tasks] == [TaskStatus.FINISHED]


def test_an_unknown_knowledge_base_is_refused_at_submission(load_qald, make_runner, store) -> None:
    load_qald("qald-8-test")
    before = len(store)
    with pytest.raises(KnowledgeBaseError, match="no-such-kb"):
        make_runner(kb="no-such-kb").submit(_gold_request())
    with pytest.raises(KnowledgeBaseError, match="no-such-kb"):
        make_runner().submit(_gold_request(kb="no-such-kb"))
    with pytest.raises(KnowledgeBaseError, match="not an absolute http"):
        make_runner().submit(_gold_request(kb="https://:8080/sparql"))
    assert len(store) == before


def test_cancel_interrupts_the_running_and_the_waiting_tasks(
    load_qald, make_runner, qa_stubs
) -> None:
    data = load_qald("qald-8-test")
    oracle = TextOracle()
    oracle.add(data["qald-8-test"])
    asked = threading.Event()

    def slow(text: str, lang: str):
        asked.set()
        return dataclasses.replace(even_gold(oracle)(text, lang), delay=0.2)

    stub = qa_stubs(slow)
    runner = make_runner(limits_for_tests(request_timeout_seconds=30, parallel_tasks=1))
    submission = runner.start(
        ExperimentRequest(
            systems=(SystemRequest("s", SystemKind.WEB_SERVICE, url=stub.url),),
            datasets=("qald-8-test",),
            profiles=("strict", "gerbil"),
        )
    )
    assert asked.wait(30)
    runner.cancel(submission.id)
    assert runner.wait(submission.id, 60)
    summary = runner.summary(submission.id)
    assert [t.status for t in summary.tasks] == [TaskStatus.INTERRUPTED] * 2
    assert len(stub.requests) < 41
    # resume finishes both
    resumed = runner.resume(submission.id)
    assert [t.status for t in resumed.tasks] == [TaskStatus.FINISHED] * 2


def test_each_question_is_asked_once_and_scored_under_every_profile(
    load_qald, make_runner, qa_stubs, store, config
) -> None:
    data = load_qald("qald-8-test")
    oracle = TextOracle()
    oracle.add(data["qald-8-test"])
    stub = qa_stubs(even_gold(oracle))
    profiles = ("strict", "gerbil", "gerbil-legacy", "qald-classic")
    runner = make_runner()
    submission = runner.submit(
        ExperimentRequest(
            systems=(SystemRequest("s", SystemKind.WEB_SERVICE, url=stub.url),),
            datasets=("qald-8-test",),
            languages=("en",),
            profiles=profiles,
        )
    )
    summary = runner.run(submission.id)
    assert [t.plan.profile for t in summary.tasks] == list(profiles)
    assert all(t.status is TaskStatus.FINISHED for t in summary.tasks)
    # 41 questions, four profiles: asked 41 times, not 164
    assert len(stub.requests) == 41
    assert sorted(stub.asked()) == sorted(q.text("en") for q in data["qald-8-test"].questions)
    # every task points at the one asking run, which holds one reply per question
    g = graphs.experiment_graph(config.base_iri, submission.id)
    runs = store.select(
        "PREFIX qab: <https://w3id.org/qabench/vocab#> "
        "SELECT DISTINCT ?g ?run WHERE { GRAPH ?g { ?task qab:usedAnswers ?run } }",
        g=g,
    )
    assert len(runs) == 1
    replies = store.select(
        "PREFIX qab: <https://w3id.org/qabench/vocab#> "
        "SELECT ?g (COUNT(?a) AS ?n) WHERE { GRAPH ?g { ?a qab:askedIn ?run } } GROUP BY ?g",
        g=g,
    )
    assert int(replies[0]["n"].value) == 41
    # resuming a finished experiment asks nothing
    runner.resume(submission.id)
    assert len(stub.requests) == 41

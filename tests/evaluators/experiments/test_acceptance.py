"""Acceptance: experiments end to end on real QALD data: three systems (a well-behaved loopback service, a
faulty one and an answers file) on QALD-8 test and QALD-9 test, with states, error counts, scores,
provenance, visibility records and the JSON summary checked against independent expectations."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode

from evaluators.datasets import library
from evaluators.experiments.model import SoftwareRelease, TaskStatus
from evaluators.experiments.read import (
    ExperimentSummary,
    summary_json,
)
from evaluators.experiments.runner import (
    ExperimentRequest,
    ExperimentRunner,
    Submission,
    SystemRequest,
)
from evaluators.formats import parse_file
from evaluators.model import Dataset, Question
from evaluators.qa.scoring import evaluate
from evaluators.results import EvaluationResult, to_json
from evaluators.systems.protocol import SystemKind
from evaluators.systems.registry import builtin_registry
from store import graphs
from store.triplestore import TripleStore
from store.visibility import private_experiment_ids
from tests.plugins.qa_stub import QaStub, start_stub
from tests.plugins.qa_stub_experiments import (
    QALD_FILES,
    TextOracle,
    even_gold,
    faulty,
    is_faulted,
    limits_for_tests,
)

BASE = "http://qabench.test"
RELEASE = SoftwareRelease("0.1.0", "0123456789abcdef0123456789abcdef01234567")
DATASETS = ("qald-8-test", "qald-9-test")
FAST_FAULTS = ["http-500", "close", "invalid-json", "wrong-shape"]
# avg_millis depends on the clock; every other measure must match the direct evaluation.
TIMED = {"avg_millis"}
XSD_BOOLEAN = NamedNode("http://www.w3.org/2001/XMLSchema#boolean")


@dataclass
class Acceptance:
    store: TripleStore
    data: dict[str, Dataset]
    oracle: TextOracle
    good: QaStub
    bad: QaStub
    answers: Path
    submission: Submission
    summary: ExperimentSummary


pytestmark = pytest.mark.slow  # one real three-system experiment (~450 questions, ~300k quads)


def _asked(dataset: Dataset) -> list[Question]:
    return [q for q in dataset.questions if q.text("en")]


def _expected(dataset: Dataset, name: str, answers: dict[str, Question], errors: dict[str, str]):
    return evaluate(
        dataset,
        answers,
        profile="strict",
        language="en",
        dataset_label=f"{name}@1",
        errors=errors,
        bootstrap_samples=20,
    )


def _assert_same_scores(task, expected) -> None:
    stored = {r.experiment_type: r for r in task.results}
    assert set(stored) == {r.experiment_type for r in expected.results}
    compared = 0
    for result in expected.results:
        for measure in result.measures:
            if measure.measure in TIMED:
                continue
            got = stored[result.experiment_type].value(measure.measure)
            if measure.value is None:
                assert got is None, (result.experiment_type, measure.measure)
            else:
                assert got == pytest.approx(measure.value, abs=1e-12), (
                    result.experiment_type,
                    measure.measure,
                )
            compared += 1
    assert compared >= 30


def _answers_file(source: Path, target: Path) -> None:
    """Write an answers file derived from a gold file: ids divisible by 3 keep their gold
    answers, ids with remainder 1 get one wrong resource, the others are left out."""
    doc = json.loads(source.read_text("utf-8"))
    kept = []
    for entry in doc["questions"]:
        qid = int(entry["id"])
        if qid % 3 == 1:
            entry["answers"] = [
                {
                    "head": {"vars": ["uri"]},
                    "results": {
                        "bindings": [
                            {"uri": {"type": "uri", "value": "http://dbpedia.org/resource/Nowhere"}}
                        ]
                    },
                }
            ]
        if qid % 3 != 2:
            kept.append(entry)
    target.write_text(json.dumps({"questions": kept}), "utf-8")


@pytest.fixture(scope="module")
def acceptance(tmp_path_factory: pytest.TempPathFactory, shared_data: Path):
    """Run the three-system experiment once; the tests of this module only read its results."""
    tmp = tmp_path_factory.mktemp("acceptance")
    store = TripleStore.open(tmp / "store")
    data = {}
    for name in DATASETS:
        outcome = library.load_dataset(store, BASE, shared_data / QALD_FILES[name], name=name)
        data[name] = library.read_dataset(store, outcome.info)
    oracle = TextOracle()
    oracle.add(data["qald-9-test"])
    oracle.add(data["qald-8-test"])
    answers = tmp / "answers.json"
    _answers_file(shared_data / QALD_FILES["qald-8-test"], answers)
    servers = [start_stub(even_gold(oracle)), start_stub(faulty(oracle, FAST_FAULTS, every=5))]
    good, bad = (server.stub for server in servers)
    request = ExperimentRequest(
        systems=(
            SystemRequest("good", SystemKind.WEB_SERVICE, url=good.url),
            SystemRequest("faulty", SystemKind.WEB_SERVICE, url=bad.url),
            SystemRequest(
                "derived",
                SystemKind.ANSWER_FILE,
                answers_path=answers,
                answers_dataset="qald-8-test",
            ),
        ),
        datasets=DATASETS,
        owner="tester",
    )
    runner = ExperimentRunner(
        store,
        BASE,
        # a generous timeout: this experiment is about the faults the stub is told to make
        limits=limits_for_tests(request_timeout_seconds=10.0),
        registry=builtin_registry(),
        release=RELEASE,
    )
    submission = runner.submit(request)
    summary = runner.run(submission.id)
    yield Acceptance(store, data, oracle, good, bad, answers, submission, summary)
    for server in servers:
        server.stop()
    store.close()


def test_three_systems_on_two_datasets_give_the_expected_states_errors_and_scores(
    acceptance: Acceptance,
) -> None:
    data, oracle, summary = acceptance.data, acceptance.oracle, acceptance.summary
    assert [(t.plan.system, t.plan.dataset) for t in summary.tasks] == [
        ("good", "qald-8-test"),
        ("good", "qald-9-test"),
        ("faulty", "qald-8-test"),
        ("faulty", "qald-9-test"),
        ("derived", "qald-8-test"),
    ]
    tasks = {(t.plan.system, t.plan.dataset): t for t in summary.tasks}
    checked = 0
    for name in DATASETS:
        dataset = data[name]
        asked = _asked(dataset)
        # well-behaved: gold for even ids (found through the question string), nothing otherwise
        replies = {q.id: oracle.gold(q.text("en") or "") for q in asked}
        good_answers = {
            qid: Question(id=qid, answers=g.answers)
            for qid, g in replies.items()
            if g is not None and int(g.id) % 2 == 0
        }
        task = tasks[("good", name)]
        assert task.status is TaskStatus.FINISHED and task.code == 0
        assert task.errors == 0
        assert task.avg_millis is not None and task.avg_millis > 0
        _assert_same_scores(task, _expected(dataset, name, good_answers, {}))
        # faulty: one error per faulted question, gold otherwise
        faulted = {qid for qid, g in replies.items() if g is not None and is_faulted(g.id, 5)}
        assert 0 < len(faulted) <= -(-len(asked) // 4)  # some faults, within GERBIL's 25%
        bad_answers = {
            qid: Question(id=qid, answers=g.answers)
            for qid, g in replies.items()
            if qid not in faulted and g is not None
        }
        task = tasks[("faulty", name)]
        assert task.status is TaskStatus.FINISHED
        assert task.errors == len(faulted)
        expected = _expected(dataset, name, bad_answers, dict.fromkeys(faulted, "failed"))
        assert _qa(expected).value("errors") == len(faulted)
        _assert_same_scores(task, expected)
        checked += 2
    # the answers file: gold for ids divisible by 3, a wrong resource for remainder 1, else none
    gold = data["qald-8-test"]
    file_answers = parse_file(acceptance.answers).by_id()
    assert {qid: [a.values for a in q.answers or ()] for qid, q in file_answers.items()} == {
        q.id: [a.values for a in q.answers or ()] if int(q.id) % 3 == 0 else [_NOWHERE]
        for q in gold.questions
        if int(q.id) % 3 != 2
    }
    task = tasks[("derived", "qald-8-test")]
    assert task.status is TaskStatus.FINISHED and task.errors == 0
    expected = _expected(gold, "qald-8-test", file_answers, {})
    _assert_same_scores(task, expected)
    # hand-checkable: a question is fully right exactly when its id is divisible by 3 (the gold
    # of QALD-8 test is never the single resource dbr:Nowhere, and no gold answer is empty)
    assert all(q.answers and not q.answers[0].is_empty for q in gold.questions)
    right = sum(1 for q in gold.questions if int(q.id) % 3 == 0)
    assert _qa(expected).value("macro_recall") == pytest.approx(right / len(gold.questions))
    checked += 1
    assert checked == 5
    # every question was asked once: no retries after a request reached a service
    total = sum(len(_asked(data[n])) for n in DATASETS)
    assert total == 41 + 150
    assert len(acceptance.good.requests) == total
    assert len(acceptance.bad.requests) == total


_NOWHERE = (NamedNode("http://dbpedia.org/resource/Nowhere"),)


def _qa(result: EvaluationResult):
    found = result.get("QA")
    assert found is not None
    return found


def test_summary_json_has_the_documented_shape(acceptance: Acceptance) -> None:
    doc = summary_json(acceptance.summary)
    submission = acceptance.submission
    assert doc["id"] == submission.id and len(doc["id"]) == 12 and doc["id"].isdigit()
    assert doc["iri"] == f"{BASE}/experiment/{submission.id}"
    assert doc["published"] is False
    assert "token" not in doc  # the token is only part of the submission's own output
    assert len(doc["tasks"]) == 5
    reference = to_json(evaluate(acceptance.data["qald-8-test"], {}, bootstrap_samples=20))
    for task in doc["tasks"]:
        assert set(task) >= {
            "system",
            "dataset",
            "language",
            "profile",
            "state",
            "errors",
            "avg_millis",
            "results",
        }
        assert task["state"] == "finished"
        assert task["language"] == "en" and task["profile"] == "strict"
        assert task["dataset"] in ("qald-8-test@1", "qald-9-test@1")
        assert set(task["results"]) == set(reference["results"])
        for kind, measures in reference["results"].items():
            assert set(task["results"][kind]) >= set(measures) - {"avg_millis_undefined"}
    json.dumps(doc, allow_nan=False)  # strict JSON


def test_provenance_of_every_task_is_recorded(acceptance: Acceptance) -> None:
    store, submission = acceptance.store, acceptance.submission
    g = graphs.experiment_graph(BASE, submission.id)
    for task in acceptance.summary.tasks:
        version = NamedNode(f"{BASE}/dataset/{task.plan.dataset}/v{task.plan.version}")
        assert store.ask(
            """PREFIX prov: <http://www.w3.org/ns/prov#>
            PREFIX qab: <https://w3id.org/qabench/vocab#>
            ASK { GRAPH ?g {
              ?t a prov:Activity, qab:Task ; prov:used ?v, qab:StrictProfile, ?conf ;
                 qab:datasetVersion ?v ; qab:system ?sys ;
                 prov:startedAtTime ?s ; prov:endedAtTime ?e ; qab:state qab:Finished ;
                 qab:stateCode 0 ; prov:wasAssociatedWith ?rel .
              ?v qab:sha256 ?sha .
              ?conf qab:system ?sys ; qab:systemKind ?kind .
              ?sys a qab:System ; qab:owner "tester" .
              ?rel a qab:SoftwareRelease ; qab:qabenchVersion "0.1.0" ;
                   qab:gitRevision "0123456789abcdef0123456789abcdef01234567" .
              FILTER (?s <= ?e)
            } }""",
            g=g,
            t=NamedNode(task.iri),
            v=version,
        ), task.plan
    # the SHA-256 recorded with each version is the one the library computed from the file
    query = (
        "PREFIX qab: <https://w3id.org/qabench/vocab#> "
        "SELECT ?g ?v ?sha WHERE { GRAPH ?g { ?v qab:sha256 ?sha } }"
    )
    used = (
        "PREFIX qab: <https://w3id.org/qabench/vocab#> "
        "SELECT ?g ?v ?sha WHERE { GRAPH ?g { ?t qab:datasetVersion ?v . ?v qab:sha256 ?sha } }"
    )
    mine = {(r["v"], r["sha"]) for r in store.select(used, g=g)}
    catalog = {(r["v"], r["sha"]) for r in store.select(query, g=graphs.catalog_graph(BASE))}
    assert len(mine) == 2 and mine <= catalog
    # the web services are described by their URL, the answers file by name and checksum
    digest = hashlib.sha256(acceptance.answers.read_bytes()).hexdigest()
    assert store.ask(
        "PREFIX qab: <https://w3id.org/qabench/vocab#> PREFIX dct: <http://purl.org/dc/terms/> "
        'ASK { GRAPH ?g { ?c qab:systemKind "answer-file" ; dct:source "answers.json" ; '
        "qab:sha256 ?d } }",
        g=g,
        d=Literal(digest),
    )
    assert store.ask(
        "PREFIX qab: <https://w3id.org/qabench/vocab#> "
        'ASK { GRAPH ?g { ?c qab:systemKind "web-service" ; qab:endpointUrl ?u } }',
        g=g,
        u=Literal(
            acceptance.good.url, datatype=NamedNode("http://www.w3.org/2001/XMLSchema#anyURI")
        ),
    )


def test_visibility_records_are_private_and_hash_the_token(acceptance: Acceptance) -> None:
    store, submission = acceptance.store, acceptance.submission
    admin = graphs.admin_graph(BASE)
    experiment = NamedNode(submission.iri)
    values = {
        q.predicate.value.rsplit("#", 1)[-1]: q.object
        for q in store.quads(experiment, None, None, admin)
    }
    assert values["published"] == Literal("false", datatype=XSD_BOOLEAN)
    assert values["accessTokenHash"].value == hashlib.sha256(submission.token.encode()).hexdigest()
    # the token itself is stored nowhere
    token = Literal(submission.token)
    assert not store.ask(f"ASK {{ GRAPH ?g {{ ?s ?p ?o FILTER (CONTAINS(STR(?o), {token})) }} }}")
    assert private_experiment_ids(store, BASE) == {submission.id}

"""Experiment records as RDF: the pure quads of ``evaluators.experiments.rdf`` and reading them back."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pyoxigraph import BlankNode, Literal, NamedNode, Quad

from evaluators.experiments.model import (
    CODE_FINISHED,
    CODE_INTERRUPTED,
    CODE_RUNNING,
    ExperimentRecord,
    KbDescription,
    SoftwareRelease,
    SystemDescription,
    TaskPlan,
    TaskState,
    TaskStatus,
)
from evaluators.experiments.rdf import (
    STATE_PREDICATES,
    STATUS_TERMS,
    admin_quads,
    experiment_quads,
    publication_quads,
    release_iri,
    state_quads,
    system_configuration_iri,
)
from evaluators.experiments.read import (
    list_experiments,
    system_descriptions,
    task_summaries,
)
from evaluators.systems.protocol import SystemKind
from store import graphs
from vocab import iris
from vocab.project import QAB
from vocab.standard import PROV, RDF

BASE = "http://qabench.test"
EID = "202401020003"
WHEN = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)


def _record(kb: KbDescription | None = None) -> ExperimentRecord:
    systems = (
        SystemDescription(
            "svc",
            SystemKind.WEB_SERVICE,
            url="http://qa.example/gerbil?x=1",
            owner="ann",
            timeout_seconds=30.0,
            concurrency=4,
        ),
        SystemDescription(
            "file", SystemKind.ANSWER_FILE, answers_file="a.json", answers_sha256="ab" * 32
        ),
        SystemDescription("gold", SystemKind.BUILT_IN, builtin="gold", description="Gold."),
    )
    tasks = tuple(
        TaskPlan(n, system, "qald-9-test", 2, "cd" * 32, "en", profile)
        for n, (system, profile) in enumerate(
            [("svc", "strict"), ("svc", "gerbil"), ("file", "strict"), ("gold", "qald-classic")],
            start=1,
        )
    )
    return ExperimentRecord(EID, WHEN, "ann", systems, tasks, kb)


def test_all_submission_quads_are_in_the_experiment_graph() -> None:
    quads = experiment_quads(BASE, _record(KbDescription("dbpedia", graph=f"{BASE}/graph/kb/x")))
    assert quads
    assert {q.graph_name for q in quads} == {graphs.experiment_graph(BASE, EID)}
    # no blank nodes: SPARQL DELETE DATA (state changes) cannot remove them
    assert not any(isinstance(t, BlankNode) for q in quads for t in (q.subject, q.object))


def test_every_task_starts_queued_with_its_provenance() -> None:
    quads = experiment_quads(
        BASE, _record(KbDescription("ep", endpoint="http://kb.example/sparql"))
    )
    triples = {(q.subject, q.predicate, q.object) for q in quads}
    experiment = iris.experiment_iri(BASE, EID)
    version = iris.dataset_version_iri(BASE, "qald-9-test", 2)
    assert (experiment, RDF.type, QAB.Experiment) in triples
    tasks = [o for s, p, o in triples if s == experiment and p == QAB.task]
    assert len(tasks) == 4
    for n in range(1, 5):
        task = iris.task_iri(BASE, EID, n)
        assert task in tasks
        assert (task, QAB.state, QAB.Queued) in triples
        assert (
            task,
            QAB.stateCode,
            Literal("-1", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#int")),
        ) in triples
        assert (task, RDF.type, PROV.Activity) in triples
        assert (task, PROV.used, version) in triples
        kb = [o for s, p, o in triples if s == task and p == PROV.used and "/kb" in str(o)]
        assert len(kb) == 1
    assert (version, QAB.sha256, Literal("cd" * 32)) in triples
    assert (iris.task_iri(BASE, EID, 4), PROV.used, QAB.QaldClassicProfile) in triples
    conf = system_configuration_iri(BASE, EID, "svc")
    assert (iris.task_iri(BASE, EID, 1), PROV.used, conf) in triples
    assert (conf, QAB.system, iris.system_iri(BASE, "svc")) in triples


@pytest.mark.parametrize("status", list(TaskStatus))
def test_state_quads_use_only_the_state_predicates(status: TaskStatus) -> None:
    release = SoftwareRelease("1.2.3", "f" * 40)
    state = TaskState(status, 0, message="m", started=WHEN, ended=WHEN, errors=3, release=release)
    quads = state_quads(BASE, EID, 2, state)
    task = iris.task_iri(BASE, EID, 2)
    on_task = [q for q in quads if q.subject == task]
    assert {q.predicate for q in on_task} == set(STATE_PREDICATES)
    assert Quad(task, QAB.state, STATUS_TERMS[status], graphs.experiment_graph(BASE, EID)) in quads
    rel = release_iri(BASE, EID, release)
    assert rel.value.endswith("/release/1.2.3+ffffffffffff")
    assert any(q.subject == rel and q.predicate == QAB.gitRevision for q in quads)


def test_state_codes_follow_gerbil() -> None:
    assert (CODE_RUNNING, CODE_FINISHED, CODE_INTERRUPTED) == (-1, 0, -107)
    assert len(STATUS_TERMS) == len(TaskStatus) == 6


def test_admin_and_publication_quads_go_to_their_graphs() -> None:
    admin = admin_quads(BASE, EID, "00" * 32, published=False)
    assert {q.graph_name for q in admin} == {graphs.admin_graph(BASE)}
    published = publication_quads(BASE, EID, WHEN)
    assert {q.graph_name for q in published} == {graphs.experiment_graph(BASE, EID)}
    assert {q.object for q in published} == {
        Literal(WHEN.isoformat(), datatype=NamedNode("http://www.w3.org/2001/XMLSchema#dateTime"))
    }


def test_stored_record_reads_back(store) -> None:
    record = _record()
    store.add(experiment_quads(BASE, record) + admin_quads(BASE, EID, "00" * 32, published=True))
    [item] = list_experiments(store, BASE)
    assert (item.id, item.published) == (EID, True)
    tasks = task_summaries(store, BASE, EID)
    assert [t.plan for t in tasks] == list(record.tasks)
    assert all(t.status is TaskStatus.QUEUED and t.code == -1 for t in tasks)
    assert system_descriptions(store, BASE, EID) == {s.name: s for s in record.systems}

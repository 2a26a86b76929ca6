"""Experiments as RDF: pure functions from experiment values to quads (no store, no clock).

An experiment graph (``store.graphs.experiment_graph``) holds the experiment, its tasks (each a
``prov:Activity``), the systems and their configurations, the provenance of every task (dataset
version with its SHA-256, system configuration, scoring profile, knowledge base, qabench
release), the asking runs whose stored answers the tasks score (``evaluators.experiments.answers``)
and, once a task finished, its Data Cube results (``result_quads`` through
``evaluators.cube``; read back by ``evaluators.experiments.results``). The private
admin graph holds publication state, the access-token hash and the runner process.
"""

from __future__ import annotations

from datetime import datetime

from pyoxigraph import Literal, NamedNode, Quad

from evaluators import cube
from evaluators.experiments.answers import asking_run_iri, asking_run_quads
from evaluators.experiments.model import (
    CODE_RUNNING,
    AskingUnit,
    ExperimentRecord,
    KbDescription,
    SoftwareRelease,
    SystemDescription,
    TaskPlan,
    TaskState,
    TaskStatus,
    asking_units,
)
from evaluators.qa.profiles import PROFILE_TERMS
from evaluators.results import EvaluationResult
from store import graphs
from vocab import iris
from vocab.project import QAB
from vocab.standard import DCTERMS, GERBIL, PROV, RDF, RDFS, RESULTS_LICENSE, XSD

STATUS_TERMS: dict[TaskStatus, NamedNode] = {
    TaskStatus.QUEUED: QAB.Queued,
    TaskStatus.RUNNING: QAB.Running,
    TaskStatus.FINISHED: QAB.Finished,
    TaskStatus.FAILED: QAB.Failed,
    TaskStatus.INTERRUPTED: QAB.Interrupted,
    TaskStatus.ABORTED: QAB.Aborted,
}


# The task properties that change with its state; a state change replaces all of them.
STATE_PREDICATES = (
    QAB.state,
    QAB.stateCode,
    QAB.stateMessage,
    PROV.startedAtTime,
    PROV.endedAtTime,
    GERBIL.errorCount,
    PROV.wasAssociatedWith,
)


def _dt(value: datetime) -> Literal:
    return Literal(value.isoformat(), datatype=XSD.dateTime)


def _int(value: int) -> Literal:
    return Literal(str(value), datatype=XSD.int)


def system_configuration_iri(base: str, experiment_id: str, system: str) -> NamedNode:
    """Return the IRI of a system's configuration within one experiment."""
    return iris.sub_iri(iris.experiment_iri(base, experiment_id), "system", iris.slug(system))


def kb_resource(base: str, experiment_id: str, kb: KbDescription) -> NamedNode:
    """Return the resource standing for the knowledge base of an experiment."""
    if kb.endpoint is None:
        return iris.kb_iri(base, kb.name)
    return iris.sub_iri(iris.experiment_iri(base, experiment_id), "kb")


def release_iri(base: str, experiment_id: str, release: SoftwareRelease) -> NamedNode:
    """Return the IRI of the qabench release that ran tasks of an experiment."""
    tag = release.version + (f"+{release.git_revision[:12]}" if release.git_revision else "")
    return iris.sub_iri(iris.experiment_iri(base, experiment_id), "release", tag)


def experiment_quads(base: str, record: ExperimentRecord) -> list[Quad]:
    """Return the quads written at submission: experiment, systems, tasks (queued), provenance."""
    g = graphs.experiment_graph(base, record.id)
    exp = iris.experiment_iri(base, record.id)
    out = [
        Quad(exp, RDF.type, QAB.Experiment, g),
        Quad(exp, RDFS.label, Literal(f"Experiment {record.id}"), g),
        Quad(exp, DCTERMS.identifier, Literal(record.id), g),
        Quad(exp, DCTERMS.created, _dt(record.created), g),
        Quad(exp, QAB.experimentType, GERBIL.QA, g),
        Quad(exp, DCTERMS.license, RESULTS_LICENSE, g),
    ]
    if record.owner:
        out.append(Quad(exp, QAB.owner, Literal(record.owner), g))
    for system in record.systems:
        out += _system_quads(base, record.id, system, g)
    if record.kb is not None:
        out += _kb_quads(base, record.id, record.kb, g)
    for task in record.tasks:
        out += _task_quads(base, record, task, g)
    for unit in asking_units(record.tasks):
        out += asking_run_quads(base, record.id, unit)
    return out


def _system_quads(
    base: str, experiment_id: str, system: SystemDescription, g: NamedNode
) -> list[Quad]:
    node = iris.system_iri(base, system.name)
    conf = system_configuration_iri(base, experiment_id, system.name)
    out = [
        Quad(node, RDF.type, QAB.System, g),
        Quad(node, RDFS.label, Literal(system.name), g),
        Quad(node, QAB.systemKind, Literal(system.kind.value), g),
        Quad(conf, RDF.type, PROV.Entity, g),
        Quad(conf, RDFS.label, Literal(f"{system.name} as configured for this experiment"), g),
        Quad(conf, QAB.system, node, g),
        Quad(conf, QAB.systemKind, Literal(system.kind.value), g),
    ]
    if system.description:
        out.append(Quad(node, DCTERMS.description, Literal(system.description), g))
    if system.owner:
        out.append(Quad(node, QAB.owner, Literal(system.owner), g))
    if system.url:
        out.append(Quad(conf, QAB.endpointUrl, Literal(system.url, datatype=XSD.anyURI), g))
    if system.builtin:
        out.append(Quad(conf, DCTERMS.identifier, Literal(system.builtin), g))
    if system.answers_file:
        out.append(Quad(conf, DCTERMS.source, Literal(system.answers_file), g))
    if system.answers_sha256:
        out.append(Quad(conf, QAB.sha256, Literal(system.answers_sha256), g))
    if system.timeout_seconds is not None:
        value = Literal(repr(float(system.timeout_seconds)), datatype=XSD.double)
        out.append(Quad(conf, QAB.timeoutSeconds, value, g))
    if system.concurrency is not None:
        out.append(Quad(conf, QAB.concurrency, _int(system.concurrency), g))
    out += [Quad(conf, QAB.warning, Literal(w), g) for w in system.warnings]
    return out


def _kb_quads(base: str, experiment_id: str, kb: KbDescription, g: NamedNode) -> list[Quad]:
    node = kb_resource(base, experiment_id, kb)
    out = [Quad(node, RDF.type, PROV.Entity, g), Quad(node, RDFS.label, Literal(kb.name), g)]
    if kb.endpoint:
        out.append(Quad(node, QAB.kbEndpoint, Literal(kb.endpoint, datatype=XSD.anyURI), g))
    if kb.graph:
        out.append(Quad(node, QAB.kbGraph, NamedNode(kb.graph), g))
    if kb.version:
        out.append(Quad(node, QAB.kbVersion, Literal(kb.version), g))
    return out


def _task_quads(base: str, record: ExperimentRecord, task: TaskPlan, g: NamedNode) -> list[Quad]:
    node = iris.task_iri(base, record.id, task.number)
    exp = iris.experiment_iri(base, record.id)
    version = iris.dataset_version_iri(base, task.dataset, task.version)
    profile = PROFILE_TERMS.get(task.profile)
    conf = system_configuration_iri(base, record.id, task.system)
    out = [
        Quad(exp, QAB.task, node, g),
        Quad(node, RDF.type, QAB.Task, g),
        Quad(node, RDF.type, PROV.Activity, g),
        Quad(node, RDFS.label, Literal(f"Task {task.number} of experiment {record.id}"), g),
        Quad(node, DCTERMS.identifier, Literal(str(task.number)), g),
        Quad(node, DCTERMS.isPartOf, exp, g),
        Quad(node, QAB.system, iris.system_iri(base, task.system), g),
        Quad(node, QAB.datasetVersion, version, g),
        Quad(node, DCTERMS.language, Literal(task.language), g),
        Quad(node, PROV.used, version, g),
        Quad(node, PROV.used, conf, g),
        Quad(version, QAB.sha256, Literal(task.sha256), g),
        Quad(node, QAB.usedAnswers, asking_run_iri(base, record.id, AskingUnit.of(task)), g),
    ]
    if profile is not None:
        out += [Quad(node, QAB.profile, profile, g), Quad(node, PROV.used, profile, g)]
    if record.kb is not None:
        out.append(Quad(node, PROV.used, kb_resource(base, record.id, record.kb), g))
    out += state_quads(base, record.id, task.number, TaskState(TaskStatus.QUEUED, CODE_RUNNING))
    return out


def state_quads(base: str, experiment_id: str, number: int, state: TaskState) -> list[Quad]:
    """Return the quads stating a task's current state (see ``STATE_PREDICATES``)."""
    g = graphs.experiment_graph(base, experiment_id)
    node = iris.task_iri(base, experiment_id, number)
    out = [
        Quad(node, QAB.state, STATUS_TERMS[state.status], g),
        Quad(node, QAB.stateCode, _int(state.code), g),
    ]
    if state.message:
        out.append(Quad(node, QAB.stateMessage, Literal(state.message), g))
    if state.started is not None:
        out.append(Quad(node, PROV.startedAtTime, _dt(state.started), g))
    if state.ended is not None:
        out.append(Quad(node, PROV.endedAtTime, _dt(state.ended), g))
    if state.errors is not None:
        out.append(Quad(node, GERBIL.errorCount, _int(state.errors), g))
    if state.release is not None:
        rel = release_iri(base, experiment_id, state.release)
        out += [
            Quad(node, PROV.wasAssociatedWith, rel, g),
            Quad(rel, RDF.type, QAB.SoftwareRelease, g),
            Quad(rel, RDFS.label, Literal(_release_label(state.release)), g),
            Quad(rel, QAB.qabenchVersion, Literal(state.release.version), g),
        ]
        if state.release.git_revision:
            out.append(Quad(rel, QAB.gitRevision, Literal(state.release.git_revision), g))
    return out


def _release_label(release: SoftwareRelease) -> str:
    rev = f" ({release.git_revision[:12]})" if release.git_revision else ""
    return f"qabench {release.version}{rev}"


def admin_quads(base: str, experiment_id: str, token_hash: str, *, published: bool) -> list[Quad]:
    """Return the private admin-graph quads of a new experiment (publication state, token)."""
    g = graphs.admin_graph(base)
    exp = iris.experiment_iri(base, experiment_id)
    return [
        Quad(
            exp, QAB.published, Literal("true" if published else "false", datatype=XSD.boolean), g
        ),
        Quad(exp, QAB.accessTokenHash, Literal(token_hash), g),
    ]


def published_quad(base: str, experiment_id: str, *, published: bool) -> Quad:
    """Return the admin-graph quad stating whether an experiment is published."""
    value = Literal("true" if published else "false", datatype=XSD.boolean)
    return Quad(
        iris.experiment_iri(base, experiment_id), QAB.published, value, graphs.admin_graph(base)
    )


def publication_quads(base: str, experiment_id: str, when: datetime) -> list[Quad]:
    """Return the experiment-graph quads recording when the experiment was published."""
    g = graphs.experiment_graph(base, experiment_id)
    exp = iris.experiment_iri(base, experiment_id)
    return [Quad(exp, QAB.publishedAt, _dt(when), g), Quad(exp, DCTERMS.issued, _dt(when), g)]


def runner_quad(base: str, experiment_id: str, process: str) -> Quad:
    """Return the admin-graph quad naming the process that runs an experiment."""
    return Quad(
        iris.experiment_iri(base, experiment_id),
        QAB.runnerProcess,
        Literal(process),
        graphs.admin_graph(base),
    )


def result_quads(
    base: str, experiment_id: str, plan: TaskPlan, result: EvaluationResult
) -> list[Quad]:
    """Return the Data Cube quads of one finished task (aggregate and per-question)."""
    g = graphs.experiment_graph(base, experiment_id)
    question_iris = {
        score.question_id: iris.question_iri(base, plan.dataset, plan.version, score.question_id)
        for typed in result.results
        for score in typed.per_question
    }
    return list(
        cube.observation_quads(
            result,
            base=base,
            task=iris.task_iri(base, experiment_id, plan.number),
            graph=g,
            system=iris.system_iri(base, plan.system),
            dataset_version=iris.dataset_version_iri(base, plan.dataset, plan.version),
            question_iris=question_iris,
        )
    )

"""Read experiments back from the store: listings, facts, systems, task states, summaries.

Read-only, and typed against the ``RdfStore`` role (the embedded and the remote store). Reads of
one experiment go through its own graph (quad-index lookups with the graph given, or named queries
with it bound), so they cost the same however many experiments the store holds. Aggregate results
come from ``evaluators.experiments.results``. The ``--json`` document of ``qabench experiment
run|show`` (``summary_json``) is built here so that the CLI and the web pages describe an
experiment the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyoxigraph import Literal, NamedNode

from evaluators.errors import UnknownExperimentError
from evaluators.experiments.model import SystemDescription, TaskPlan, TaskStatus
from evaluators.experiments.rdf import STATUS_TERMS, system_configuration_iri
from evaluators.experiments.results import aggregate_results
from evaluators.qa.profiles import PROFILE_TERMS
from evaluators.results import ExperimentTypeResult, measures_json
from evaluators.systems.protocol import SystemKind
from store import graphs, queries
from store.protocol import RdfStore
from vocab import iris
from vocab.project import QAB
from vocab.standard import DCTERMS, RDF, RDFS

_STATUS_BY_TERM = {term.value: status for status, term in STATUS_TERMS.items()}
_PROFILE_BY_TERM = {term.value: name for name, term in PROFILE_TERMS.items()}


@dataclass(frozen=True, slots=True)
class ExperimentOverview:
    """One line of ``qabench experiment list``."""

    id: str
    iri: str
    published: bool
    runner: str | None


@dataclass(frozen=True, slots=True)
class TaskSummary:
    """A task as stored: its plan, state and (for finished tasks) aggregate results."""

    plan: TaskPlan
    iri: str
    status: TaskStatus
    code: int
    message: str | None = None
    started: str | None = None
    ended: str | None = None
    errors: int | None = None
    results: tuple[ExperimentTypeResult, ...] = ()

    @property
    def avg_millis(self) -> float | None:
        """Return the average milliseconds per successful call (QA, or BioASQ's first type)."""
        for result in self.results:
            value = result.value("avg_millis")
            if value is not None:
                return value
        return None


@dataclass(frozen=True, slots=True)
class ExperimentSummary:
    """An experiment with all its tasks (``token`` only right after submission)."""

    id: str
    iri: str
    published: bool
    created: str | None
    tasks: tuple[TaskSummary, ...]
    token: str | None = None
    warnings: tuple[str, ...] = ()  # what the systems' configurations warn about


def _text(row: Mapping[str, Any], key: str) -> str | None:
    term = row.get(key)
    return term.value if term is not None else None


def _true(term: object) -> bool:
    return isinstance(term, Literal) and term.value.strip().lower() in ("true", "1")


def list_experiments(store: RdfStore, base: str) -> list[ExperimentOverview]:
    """Return every experiment (private ones too; the caller decides what to show), by id."""
    rows = store.select(queries.load("experiment_list"), admin=graphs.admin_graph(base))
    found: dict[str, ExperimentOverview] = {}
    for row in rows:
        node = row["experiment"]
        if not isinstance(node, NamedNode):
            continue
        eid = iris.experiment_id_of(node.value)
        found[eid] = ExperimentOverview(
            eid, node.value, _true(row.get("published")), _text(row, "runner")
        )
    return [found[k] for k in sorted(found)]


def overview(store: RdfStore, base: str, experiment_id: str) -> ExperimentOverview:
    """Return one experiment's overview.

    Raises:
        UnknownExperimentError: if there is no such experiment.
    """
    for item in list_experiments(store, base):
        if item.id == experiment_id:
            return item
    raise UnknownExperimentError(
        f"No experiment {experiment_id!r}; `qabench experiment list` shows the known ids"
    )


def _plan(row: Mapping[str, Any]) -> TaskPlan:
    name, number = iris.version_of(row["version"].value)
    return TaskPlan(
        number=int(row["number"].value),
        system=row["name"].value,
        dataset=name,
        version=number,
        sha256=_text(row, "sha256") or "",
        language=row["language"].value,
        profile=_PROFILE_BY_TERM.get(_text(row, "profile") or "", _text(row, "profile") or ""),
    )


def _task_rows(
    store: RdfStore, base: str, experiment_id: str, task: NamedNode | None = None
) -> list[dict[str, Any]]:
    """Return the raw task rows of an experiment (or the row of ``task``), by task number."""
    bound = {"graph": graphs.experiment_graph(base, experiment_id)}
    if task is not None:
        bound["task"] = task
    rows = store.select(queries.load("experiment_tasks"), **bound)
    return sorted(rows, key=lambda r: int(r["number"].value))


def task_summaries(
    store: RdfStore,
    base: str,
    experiment_id: str,
    results: Mapping[int, tuple[ExperimentTypeResult, ...]] | None = None,
    task: NamedNode | None = None,
) -> tuple[TaskSummary, ...]:
    """Return every task of an experiment (or ``task`` alone) with its state (and ``results``
    by task number)."""
    out = []
    for row in _task_rows(store, base, experiment_id, task):
        plan = _plan(row)
        out.append(
            TaskSummary(
                plan=plan,
                iri=row["task"].value,
                status=_STATUS_BY_TERM[row["state"].value],
                code=int(row["code"].value),
                message=_text(row, "message"),
                started=_text(row, "started"),
                ended=_text(row, "ended"),
                errors=int(row["errors"].value) if "errors" in row else None,
                results=(results or {}).get(plan.number, ()),
            )
        )
    return tuple(out)


def _literal(store: RdfStore, subject: NamedNode, predicate: NamedNode, graph: NamedNode) -> str:
    for quad in store.quads(subject, predicate, None, graph):
        return str(getattr(quad.object, "value", quad.object))
    return ""


def system_descriptions(
    store: RdfStore, base: str, experiment_id: str
) -> dict[str, SystemDescription]:
    """Return the systems of an experiment by name, as configured at submission.

    Reads the configurations (the subjects with ``qab:systemKind`` and ``qab:system``) through
    the quad index: observations also name their system, so a pattern query would visit every
    observation of the experiment.
    """
    graph = graphs.experiment_graph(base, experiment_id)
    found: dict[str, SystemDescription] = {}
    for quad in store.quads(None, QAB.systemKind, None, graph):
        conf = quad.subject
        if not isinstance(conf, NamedNode):
            continue
        system = next((q.object for q in store.quads(conf, QAB.system, None, graph)), None)
        if not isinstance(system, NamedNode):
            continue
        try:
            kind = SystemKind(str(getattr(quad.object, "value", "")))
        except ValueError:
            continue
        name = _literal(store, system, RDFS.label, graph) or system.value.rsplit("/", 1)[-1]
        timeout = _literal(store, conf, QAB.timeoutSeconds, graph)
        concurrency = _literal(store, conf, QAB.concurrency, graph)
        found[name] = SystemDescription(
            name,
            kind,
            url=_literal(store, conf, QAB.endpointUrl, graph) or None,
            builtin=_literal(store, conf, DCTERMS.identifier, graph) or None,
            answers_file=_literal(store, conf, DCTERMS.source, graph) or None,
            answers_sha256=_literal(store, conf, QAB.sha256, graph) or None,
            description=_literal(store, system, DCTERMS.description, graph),
            owner=_literal(store, system, QAB.owner, graph),
            timeout_seconds=float(timeout) if timeout else None,
            concurrency=int(concurrency) if concurrency else None,
            warnings=tuple(
                sorted(
                    q.object.value
                    for q in store.quads(conf, QAB.warning, None, graph)
                    if isinstance(q.object, Literal)
                )
            ),
        )
    return {k: found[k] for k in sorted(found)}


@dataclass(frozen=True, slots=True)
class ExperimentFacts:
    """The header of an experiment page."""

    id: str
    iri: str
    graph: NamedNode
    created: str | None
    published_at: str | None
    owner: str | None
    releases: tuple[str, ...]
    knowledge_base: str | None
    description: str | None = None


def experiment_facts(store: RdfStore, base: str, experiment_id: str) -> ExperimentFacts:
    """Return the header facts of an experiment (times, owner, releases, knowledge base)."""
    graph = graphs.experiment_graph(base, experiment_id)
    iri = iris.experiment_iri(base, experiment_id)
    releases = sorted(
        _literal(store, q.subject, RDFS.label, graph) or q.subject.value
        for q in store.quads(None, RDF.type, QAB.SoftwareRelease, graph)
        if isinstance(q.subject, NamedNode)
    )
    kb = next(
        (
            _literal(store, q.subject, RDFS.label, graph)
            for q in store.quads(None, QAB.kbGraph, None, graph)
            if isinstance(q.subject, NamedNode)
        ),
        None,
    ) or next(
        (getattr(q.object, "value", None) for q in store.quads(None, QAB.kbEndpoint, None, graph)),
        None,
    )
    return ExperimentFacts(
        id=experiment_id,
        iri=iri.value,
        graph=graph,
        created=_literal(store, iri, DCTERMS.created, graph) or None,
        published_at=_literal(store, iri, QAB.publishedAt, graph) or None,
        owner=_literal(store, iri, QAB.owner, graph) or None,
        releases=tuple(releases),
        knowledge_base=kb,
        description=_literal(store, iri, DCTERMS.description, graph)
        or _literal(store, iri, RDFS.comment, graph)
        or None,
    )


@dataclass(frozen=True, slots=True)
class ExperimentRead:
    """An experiment as its page shows it: facts, tasks with results, systems."""

    facts: ExperimentFacts
    tasks: tuple[TaskSummary, ...]
    systems: tuple[SystemDescription, ...]


def read_experiment(store: RdfStore, base: str, experiment_id: str) -> ExperimentRead:
    """Return an experiment's facts, its tasks with their aggregate results, and its systems."""
    tasks = task_summaries(
        store, base, experiment_id, aggregate_results(store, base, experiment_id)
    )
    systems = tuple(system_descriptions(store, base, experiment_id).values())
    return ExperimentRead(experiment_facts(store, base, experiment_id), tasks, systems)


def read_task(store: RdfStore, base: str, experiment_id: str, number: int) -> TaskSummary | None:
    """Return one task of an experiment with its aggregate results (None: no such task), as
    ``read_experiment`` has it, reading that task's data only."""
    task = iris.task_iri(base, experiment_id, number)
    results = aggregate_results(store, base, experiment_id, task)
    found = task_summaries(store, base, experiment_id, results, task)
    return found[0] if found else None


def answers_path(store: RdfStore, base: str, experiment_id: str, system: str) -> str | None:
    """Return where an answer-file system's file was read from (private admin graph)."""
    conf = system_configuration_iri(base, experiment_id, system)
    for quad in store.quads(conf, QAB.sourcePath, None, graphs.admin_graph(base)):
        if isinstance(quad.object, Literal):
            return quad.object.value
    return None


def summary_json(summary: ExperimentSummary) -> dict[str, Any]:
    """Return the ``qabench experiment run|show --json`` document."""
    doc: dict[str, Any] = {"id": summary.id, "iri": summary.iri, "published": summary.published}
    if summary.token is not None:
        doc["token"] = summary.token
    doc["tasks"] = [_task_json(t) for t in summary.tasks]
    if summary.warnings:
        doc["warnings"] = list(summary.warnings)
    return doc


def _task_json(task: TaskSummary) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "task": task.plan.number,
        "iri": task.iri,
        "system": task.plan.system,
        "dataset": f"{task.plan.dataset}@{task.plan.version}",
        "language": task.plan.language,
        "profile": task.plan.profile,
        "state": task.status.value,
        "state_code": task.code,
        "errors": task.errors,
        "avg_millis": task.avg_millis,
        "results": {r.experiment_type: measures_json(r.measures) for r in task.results},
    }
    if task.message:
        doc["message"] = task.message
    if task.started:
        doc["started"] = task.started
    if task.ended:
        doc["ended"] = task.ended
    return doc


def experiment_summary(
    store: RdfStore, base: str, experiment_id: str, token: str | None = None
) -> ExperimentSummary:
    """Return an experiment with its tasks and the aggregate results of finished tasks.

    Raises:
        UnknownExperimentError: if there is no such experiment.
    """
    item = overview(store, base, experiment_id)
    results = aggregate_results(store, base, experiment_id)
    tasks = task_summaries(store, base, experiment_id, results)
    created = None
    rows = _task_rows(store, base, experiment_id)
    if rows:
        created = _text(rows[0], "created")
    systems = system_descriptions(store, base, experiment_id).values()
    warnings = tuple(w for system in systems for w in system.warnings)
    return ExperimentSummary(item.id, item.iri, item.published, created, tasks, token, warnings)

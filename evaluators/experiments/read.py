"""Read experiments back from the store: listings, task states, plans for resuming, summaries.

Read-only. The ``--json`` document of ``qabench experiment run|show`` (``summary_json``) is
built here so that the CLI and the web pages describe an experiment the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from pyoxigraph import Literal, NamedNode

from evaluators.errors import UnknownExperimentError
from evaluators.experiments.model import SystemDescription, TaskPlan, TaskStatus
from evaluators.experiments.rdf import PROFILE_TERMS, STATUS_TERMS, system_configuration_iri
from evaluators.experiments.results import stored_results
from evaluators.results import ExperimentTypeResult, measures_json
from evaluators.systems.protocol import SystemKind
from store import graphs, queries
from store.triplestore import TripleStore
from vocab.project import QAB

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


def _text(row: Mapping[str, Any], key: str) -> str | None:
    term = row.get(key)
    return term.value if term is not None else None


def _true(term: object) -> bool:
    return isinstance(term, Literal) and term.value.strip().lower() in ("true", "1")


def experiment_id_of(iri: NamedNode) -> str:
    """Return the id at the end of an experiment IRI."""
    return unquote(iri.value.rstrip("/").rsplit("/", 1)[-1])


def list_experiments(store: TripleStore, base: str) -> list[ExperimentOverview]:
    """Return every experiment (private ones too; the caller decides what to show), by id."""
    rows = store.select(queries.load("experiment_list"), admin=graphs.admin_graph(base))
    found: dict[str, ExperimentOverview] = {}
    for row in rows:
        node = row["experiment"]
        if not isinstance(node, NamedNode):
            continue
        eid = experiment_id_of(node)
        found[eid] = ExperimentOverview(
            eid, node.value, _true(row.get("published")), _text(row, "runner")
        )
    return [found[k] for k in sorted(found)]


def overview(store: TripleStore, base: str, experiment_id: str) -> ExperimentOverview:
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
    name, number = _version_from_iri(row["version"].value)
    return TaskPlan(
        number=int(row["number"].value),
        system=row["name"].value,
        dataset=name,
        version=number,
        sha256=_text(row, "sha256") or "",
        language=row["language"].value,
        profile=_PROFILE_BY_TERM.get(_text(row, "profile") or "", _text(row, "profile") or ""),
    )


def _version_from_iri(iri: str) -> tuple[str, int]:
    head, _, tail = iri.rstrip("/").rpartition("/v")
    return unquote(head.rsplit("/", 1)[-1]), int(tail) if tail.isdigit() else 0


def _task_rows(store: TripleStore, base: str, experiment_id: str) -> list[dict[str, Any]]:
    """Return the raw task rows of an experiment, ordered by task number."""
    rows = store.select(
        queries.load("experiment_tasks"), graph=graphs.experiment_graph(base, experiment_id)
    )
    return sorted(rows, key=lambda r: int(r["number"].value))


def task_summaries(
    store: TripleStore,
    base: str,
    experiment_id: str,
    results: Mapping[int, tuple[ExperimentTypeResult, ...]] | None = None,
) -> tuple[TaskSummary, ...]:
    """Return every task of an experiment with its state (and ``results`` by task number)."""
    out = []
    for row in _task_rows(store, base, experiment_id):
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


def system_descriptions(
    store: TripleStore, base: str, experiment_id: str
) -> dict[str, SystemDescription]:
    """Return the systems of an experiment by name, as recorded at submission."""
    rows = store.select(
        queries.load("experiment_systems"), graph=graphs.experiment_graph(base, experiment_id)
    )
    out: dict[str, SystemDescription] = {}
    for row in rows:
        timeout = _text(row, "timeout")
        concurrency = _text(row, "concurrency")
        name = row["name"].value
        out[name] = SystemDescription(
            name=name,
            kind=SystemKind(row["kind"].value),
            url=_text(row, "url"),
            builtin=_text(row, "builtin"),
            answers_file=_text(row, "file"),
            answers_sha256=_text(row, "sha256"),
            description=_text(row, "description") or "",
            owner=_text(row, "owner") or "",
            timeout_seconds=float(timeout) if timeout else None,
            concurrency=int(concurrency) if concurrency else None,
        )
    return out


def answers_path(store: TripleStore, base: str, experiment_id: str, system: str) -> str | None:
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
    store: TripleStore, base: str, experiment_id: str, token: str | None = None
) -> ExperimentSummary:
    """Return an experiment with its tasks and the aggregate results of finished tasks.

    Raises:
        UnknownExperimentError: if there is no such experiment.
    """
    item = overview(store, base, experiment_id)
    results = stored_results(store, base, experiment_id)
    tasks = task_summaries(store, base, experiment_id, results)
    created = None
    rows = _task_rows(store, base, experiment_id)
    if rows:
        created = _text(rows[0], "created")
    return ExperimentSummary(item.id, item.iri, item.published, created, tasks, token)

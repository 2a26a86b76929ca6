"""Experiments as values: task states and GERBIL's state codes, what an experiment records
at submission (systems, tasks, knowledge base, qabench release) and a task's changing state.

Pure data; ``evaluators.experiments.rdf`` turns these into quads and ``evaluators.experiments.read``
reads them back.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from evaluators.systems.protocol import SystemKind


class TaskStatus(StrEnum):
    """The life cycle of a task (the JSON ``state`` values)."""

    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    ABORTED = "aborted"


# GERBIL's task status codes (reference gerbil-qa.md §2.5). GERBIL has no "queued": a task it
# has not finished is "still running" (-1).
CODE_RUNNING = -1
CODE_FINISHED = 0
CODE_DATASET_ERROR = -104
CODE_SYSTEM_ERROR = -105
CODE_UNEXPECTED = -106
CODE_INTERRUPTED = -107
CODE_TOO_MANY_ERRORS = -108


@dataclass(frozen=True, slots=True)
class SystemDescription:
    """A system as an experiment records it (never with secrets)."""

    name: str
    kind: SystemKind
    url: str | None = None  # web services: the URL without credentials
    builtin: str | None = None  # built-in systems: the registry name
    answers_file: str | None = None  # answer files: the file name (no directory)
    answers_sha256: str | None = None
    description: str = ""
    owner: str = ""
    timeout_seconds: float | None = None
    concurrency: int | None = None
    warnings: tuple[str, ...] = ()  # e.g. the ids of an answers file its dataset lacks


@dataclass(frozen=True, slots=True)
class TaskPlan:
    """One task: a system on one dataset version, in one language, under one profile."""

    number: int
    system: str
    dataset: str
    version: int
    sha256: str
    language: str
    profile: str


@dataclass(frozen=True, slots=True)
class AskingUnit:
    """One system asked the questions of one dataset version in one language.

    The tasks that share a unit differ only in their scoring profile: the questions are asked
    once, the answers stored, and scored under every profile.
    """

    system: str
    dataset: str
    version: int
    language: str

    @classmethod
    def of(cls, plan: TaskPlan) -> AskingUnit:
        """Return the unit a task belongs to."""
        return cls(plan.system, plan.dataset, plan.version, plan.language)


def asking_units(plans: Iterable[TaskPlan]) -> dict[AskingUnit, list[TaskPlan]]:
    """Group tasks by asking unit, in the order of their first task.

    >>> plans = [TaskPlan(n, "s", "d", 1, "", "en", p) for n, p in ((1, "strict"), (2, "gerbil"))]
    >>> [(u.system, [t.number for t in ts]) for u, ts in asking_units(plans).items()]
    [('s', [1, 2])]
    """
    units: dict[AskingUnit, list[TaskPlan]] = {}
    for plan in plans:
        units.setdefault(AskingUnit.of(plan), []).append(plan)
    return units


@dataclass(frozen=True, slots=True)
class KbDescription:
    """The knowledge base used for matching: a store graph or an endpoint, maybe versioned."""

    name: str
    endpoint: str | None = None
    graph: str | None = None
    version: str | None = None


@dataclass(frozen=True, slots=True)
class SoftwareRelease:
    """The qabench code carrying out a task."""

    version: str
    git_revision: str | None = None


@dataclass(frozen=True, slots=True)
class ExperimentRecord:
    """Everything fixed at submission."""

    id: str
    created: datetime
    owner: str
    systems: tuple[SystemDescription, ...]
    tasks: tuple[TaskPlan, ...]
    kb: KbDescription | None = None


@dataclass(frozen=True, slots=True)
class TaskState:
    """The changing part of a task."""

    status: TaskStatus
    code: int
    message: str | None = None
    started: datetime | None = None
    ended: datetime | None = None
    errors: int | None = None
    release: SoftwareRelease | None = None

"""Compare two tasks on the same dataset version question by question (``/compare``).

``/compare?a=<task>&b=<task>[&type=QA]`` takes task IRIs, site paths (``/task/<id>/<n>``) or
``<experiment id>/<n>``. It shows which questions each task got right (per-question F1 = 1),
both, or neither; the paired approximate-randomisation test of the per-question F1 and the
percentile-bootstrap 95% intervals of both macro F1 values and of their difference
(``evaluators.significance``, seeded, so the page is repeatable). Tasks the reader cannot see
are 404; tasks on different dataset versions, or that scored different questions, are refused
with 400. Results are cached per store generation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from flask import Blueprint, Response, render_template, request
from pyoxigraph import NamedNode

from evaluators import cube
from evaluators.errors import EvaluationError
from evaluators.experiments.read import TaskSummary
from evaluators.experiments.results import QuestionValues, question_values
from evaluators.model import question_order
from evaluators.results import EvaluationResult, ExperimentTypeResult, QuestionScore
from evaluators.significance import (
    Interval,
    RandomisationTest,
    bootstrap_interval,
    compare_runs,
)
from server.linked_data.terms import href
from server.pages.experiments import cached_task
from server.pages.task_rows import question_texts
from server.services import Services, Visibility, services
from server.sparql.page import query_link
from server.web.auth import request_tokens
from server.web.problems import Problem
from store import graphs, queries
from vocab import iris

bp = Blueprint("compare", __name__)

# The table behind a page as SPARQL results: (format, media type, label).
DATA_FORMS = (
    ("json", "application/sparql-results+json", "SPARQL results (JSON)"),
    ("csv", "text/csv", "CSV"),
)
ITERATIONS = 10_000
SEED = 0
_REF = re.compile(r"(?:.*/task/)?([^/?#\s]+)/(\d+)/?")


@dataclass(frozen=True, slots=True)
class Side:
    """One of the two compared tasks."""

    ref: str
    task: TaskSummary
    iri: NamedNode
    macro_f1: float
    interval: Interval | None


@dataclass(frozen=True, slots=True)
class QuestionLink:
    """A question in one of the four groups."""

    id: str
    href: str | None
    text: str


@dataclass(frozen=True, slots=True)
class Comparison:
    """What the compare page shows."""

    a: Side
    b: Side
    experiment_type: str
    both: tuple[QuestionLink, ...]
    only_a: tuple[QuestionLink, ...]
    only_b: tuple[QuestionLink, ...]
    neither: tuple[QuestionLink, ...]
    test: RandomisationTest
    difference: Interval | None
    query: str


def parse_ref(text: str) -> tuple[str, int]:
    """Return ``(experiment id, task number)`` of a task reference.

    >>> parse_ref("http://x.test/task/202401010001/2"), parse_ref("202401010001/1")
    (('202401010001', 2), ('202401010001', 1))

    Raises:
        Problem: 400 when ``text`` names no task.
    """
    found = _REF.fullmatch(text.strip())
    if found is None:
        raise Problem(
            400, f"{text[:80]!r} names no task; pass a task IRI or <experiment id>/<task number>."
        )
    return found.group(1), int(found.group(2))


def _task(svc: Services, vis: Visibility, ref: str, which: str) -> tuple[TaskSummary, NamedNode]:
    experiment_id, number = parse_ref(ref)
    graph = graphs.experiment_graph(svc.base, experiment_id)
    task = cached_task(svc, experiment_id, number) if vis.can_see(graph) else None
    if task is None:
        # The reference is not repeated: it may name a private experiment.
        raise Problem(404, f"Task {which} does not exist (or it is not published).")
    return task, graph


def _result(task: TaskSummary, kind: str, values: list[QuestionValues]) -> EvaluationResult:
    scores = tuple(QuestionScore(v.id, v.values) for v in values)
    typed = ExperimentTypeResult(kind, (), scores)
    return EvaluationResult(task.plan.dataset, task.plan.profile, task.plan.language, 0, (typed,))


def _f1(values: list[QuestionValues]) -> dict[str, float]:
    return {v.id: v.value("f1") or 0.0 for v in values}


def compare_tasks(svc: Services, vis: Visibility, a: str, b: str, kind: str) -> Comparison:
    """Compare two visible tasks on one experiment type.

    Raises:
        Problem: 404 for an unknown or invisible task; 400 for tasks on different dataset
            versions, without results of ``kind``, or over different questions.
    """
    (task_a, graph_a), (task_b, graph_b) = _task(svc, vis, a, "a"), _task(svc, vis, b, "b")
    version_a = (task_a.plan.dataset, task_a.plan.version)
    version_b = (task_b.plan.dataset, task_b.plan.version)
    if version_a != version_b:
        raise Problem(
            400,
            f"The tasks ran on different dataset versions ({version_a[0]} v{version_a[1]} and "
            f"{version_b[0]} v{version_b[1]}); only tasks on the same version can be compared "
            "question by question.",
        )
    term = cube.experiment_type_term(svc.base, kind)
    samples = svc.config.evaluation.bootstrap_samples
    values_a = question_values(svc.store, graph_a, NamedNode(task_a.iri), term)
    values_b = question_values(svc.store, graph_b, NamedNode(task_b.iri), term)
    if not values_a or not values_b:
        raise Problem(400, f"Both tasks need per-question {kind} results to be compared.")
    try:
        test = compare_runs(
            _result(task_a, kind, values_a),
            _result(task_b, kind, values_b),
            experiment_type=kind,
            measure="f1",
            iterations=ITERATIONS,
            seed=SEED,
        )
    except EvaluationError as exc:
        raise Problem(400, str(exc)) from exc
    f1_a, f1_b = _f1(values_a), _f1(values_b)
    ids = sorted(f1_a, key=question_order)
    version = graphs.dataset_graph(svc.base, *version_a)
    nodes = {v.id: v.question for v in values_a}
    texts = question_texts(
        svc.store,
        list(nodes.values()),
        version if vis.can_see(version) else None,
        task_a.plan.language,
    )

    def link(qid: str) -> QuestionLink:
        node = nodes[qid]
        return QuestionLink(qid, href(node.value, svc.base), texts.get(node.value, ""))

    def group(want_a: bool, want_b: bool) -> tuple[QuestionLink, ...]:
        return tuple(
            link(q) for q in ids if (f1_a[q] == 1.0) == want_a and (f1_b[q] == 1.0) == want_b
        )

    deltas = [f1_a[q] - f1_b[q] for q in ids]
    return Comparison(
        _side(a, task_a, [f1_a[q] for q in ids], samples),
        _side(b, task_b, [f1_b[q] for q in ids], samples),
        kind,
        group(True, True),
        group(True, False),
        group(False, True),
        group(False, False),
        test,
        bootstrap_interval(deltas, samples=samples, seed=SEED),
        compare_query((graph_a, NamedNode(task_a.iri)), (graph_b, NamedNode(task_b.iri)), term),
    )


def compare_query(
    a: tuple[NamedNode, NamedNode], b: tuple[NamedNode, NamedNode], kind: NamedNode
) -> str:
    """Return the query of both tasks' per-question F1; each task as (graph, task IRI)."""
    terms = (
        a[0],
        iris.sub_iri(a[1], "cube", cube.PER_QUESTION),
        b[0],
        iris.sub_iri(b[1], "cube", cube.PER_QUESTION),
        kind,
    )
    values = "VALUES (?graphA ?datasetA ?graphB ?datasetB ?type) { ("
    values += " ".join(str(t) for t in terms) + ") }"
    return queries.load("page_compare").replace("#BINDINGS#", values)


def _side(ref: str, task: TaskSummary, scores: list[float], samples: int) -> Side:
    mean = sum(scores) / len(scores) if scores else 0.0
    interval = bootstrap_interval(scores, samples=samples, seed=SEED)
    return Side(ref, task, NamedNode(task.iri), mean, interval)


@bp.route("/compare")
def compare() -> Response:
    """Compare two tasks (or show the form when ``a`` or ``b`` is missing)."""
    svc = services()
    a, b = request.args.get("a", "").strip(), request.args.get("b", "").strip()
    kind = request.args.get("type", "").strip() or "QA"
    comparison = None
    if a and b:
        vis = svc.visibility(request_tokens())
        comparison = svc.cache.get_or_make(
            svc.generation,
            f"compare {a} {b} {kind} {vis.key}",
            lambda: compare_tasks(svc, vis, a, b, kind),
        )
    alternates = (
        [(query_link(comparison.query, fmt), media, label) for fmt, media, label in DATA_FORMS]
        if comparison is not None
        else []
    )
    body = render_template(
        "compare.html",
        alternates=alternates,
        query_href=query_link(comparison.query) if comparison is not None else None,
        title="Compare two tasks",
        a=a,
        b=b,
        kind=kind,
        comparison=comparison,
        iterations=ITERATIONS,
        samples=svc.config.evaluation.bootstrap_samples,
    )
    return Response(body, mimetype="text/html")

"""Compare tasks on the same dataset version question by question (``/compare``).

``/compare?a=<task>&b=<task>[&type=QA]`` takes task IRIs, site paths (``/task/<id>/<n>``) or
``<experiment id>/<n>``. It shows which questions each task got right (per-question F1 = 1),
both, or neither; the paired approximate-randomisation test of the per-question F1 and the
percentile-bootstrap 95% intervals of both macro F1 values and of their difference
(``evaluators.significance``, seeded, so the page is repeatable). Every comparison (two tasks,
or ``task=`` repeated for up to ``MAX_TASKS``) also ranks the tasks by the first task's profile
headline measure (``&measure=`` switches), lists sanity systems apart, and tests the ranked
ones with Friedman's test and Holm-corrected pairwise tests. ``Accept: text/csv`` (or
``?format=csv``) gives the per-question values as CSV. Tasks the reader cannot see are 404;
tasks on different dataset versions or scored under different profiles (a test between them
would measure the profiles, not systems), or that scored different questions, are refused with
400. Results are cached per store generation.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from flask import Blueprint, Response, render_template, request
from pyoxigraph import NamedNode

from evaluators import cube
from evaluators.errors import EvaluationError
from evaluators.experiments.read import TaskSummary
from evaluators.experiments.results import QuestionValues, question_values
from evaluators.qa.profiles import profile_order
from evaluators.reports.comparisons import PAIRWISE_ITERATIONS, compare_pair
from evaluators.reports.headline import is_sanity, question_score, ranking_measures
from evaluators.reports.many import (
    ManyComparison,
    Member,
    compare_members,
    comparison_csv,
    comparison_json,
)
from evaluators.results import (
    MEASURES,
)
from evaluators.significance import (
    Interval,
    RandomisationTest,
)
from server.linked_data.pipeline import Reader, Resource, serve
from server.linked_data.terms import href, query_link
from server.pages.experiments import cached_experiment, cached_task
from server.pages.task_rows import question_texts
from server.services import Services, Visibility
from server.web.problems import Problem
from server.web.representations import CSV, HTML, JSON_REPORT
from store import graphs, queries

bp = Blueprint("compare", __name__)

# The table behind a page as SPARQL results: (format, media type, label).
DATA_FORMS = (
    ("json", "application/sparql-results+json", "SPARQL results (JSON)"),
    ("csv", "text/csv", "CSV"),
)
ITERATIONS = 10_000
SEED = 0
# At most this many tasks in one comparison (k(k-1)/2 pairwise tests).
MAX_TASKS = 12
# The page, the per-question values as CSV, or the ranking and tests as JSON.
COMPARE_FORMATS = (HTML, CSV, JSON_REPORT)
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


def _f1(values: list[QuestionValues]) -> dict[str, float]:
    return {v.id: question_score(v.value) for v in values}


def refuse_mixed_profiles(tasks: list[TaskSummary]) -> None:
    """Refuse to test tasks scored under different profiles against each other.

    Raises:
        Problem: 400 naming the profiles: the test would measure the profiles' rules on the
            same answers, not a difference between systems.
    """
    profiles = sorted({t.plan.profile for t in tasks}, key=profile_order)
    if len(profiles) > 1:
        raise Problem(
            400,
            "The tasks were scored under different profiles (" + ", ".join(profiles) + "): a "
            "significance test between them would measure how the profiles count the same "
            "answers, not a difference between systems. Compare tasks scored under one "
            "profile; the experiment page says what each historical profile counts that "
            "strict does not, and on how many answers.",
            extensions={"profiles": profiles},
        )


def compare_tasks(svc: Services, vis: Visibility, a: str, b: str, kind: str) -> Comparison:
    """Compare two visible tasks on one experiment type (``compare_pair`` does the statistics).

    Raises:
        Problem: 404 for an unknown or invisible task; 400 for tasks on different dataset
            versions or under different profiles, without results of ``kind``, or over
            different questions.
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
    refuse_mixed_profiles([task_a, task_b])
    term = cube.experiment_type_term(svc.base, kind)
    values_a = question_values(svc.store, graph_a, NamedNode(task_a.iri), term)
    values_b = question_values(svc.store, graph_b, NamedNode(task_b.iri), term)
    if not values_a or not values_b:
        raise Problem(400, f"Both tasks need per-question {kind} results to be compared.")
    try:
        pair = compare_pair(
            _f1(values_a),
            _f1(values_b),
            iterations=ITERATIONS,
            samples=svc.config.evaluation.bootstrap_samples,
            seed=SEED,
        )
    except EvaluationError as exc:
        raise Problem(400, str(exc)) from exc
    version = graphs.dataset_graph(svc.base, *version_a)
    nodes = {v.id: v.question for v in values_a}
    texts = question_texts(
        svc.store,
        list(nodes.values()),
        version if vis.can_see(version) else None,
        task_a.plan.language,
    )

    def links(ids: tuple[str, ...]) -> tuple[QuestionLink, ...]:
        return tuple(
            QuestionLink(q, href(nodes[q].value, svc.base), texts.get(nodes[q].value, ""))
            for q in ids
        )

    return Comparison(
        Side(a, task_a, NamedNode(task_a.iri), pair.means[0], pair.intervals[0]),
        Side(b, task_b, NamedNode(task_b.iri), pair.means[1], pair.intervals[1]),
        kind,
        links(pair.both),
        links(pair.only_first),
        links(pair.only_second),
        links(pair.neither),
        pair.test,
        pair.difference,
        compare_query((graph_a, NamedNode(task_a.iri)), (graph_b, NamedNode(task_b.iri)), term),
    )


def compare_query(
    a: tuple[NamedNode, NamedNode], b: tuple[NamedNode, NamedNode], kind: NamedNode
) -> str:
    """Return the query of both tasks' per-question F1; each task as (graph, task IRI)."""
    terms = (a[0], a[1], b[0], b[1], kind)
    values = "VALUES (?graphA ?taskA ?graphB ?taskB ?type) { ("
    values += " ".join(str(t) for t in terms) + ") }"
    return queries.load("page_compare").replace("#BINDINGS#", values)


def _member(
    svc: Services, vis: Visibility, ref: str, kind: str, ranking: tuple[str, str]
) -> tuple[Member, dict[str, float]]:
    task, graph = _task(svc, vis, ref, ref)
    experiment_id = parse_ref(ref)[0]
    systems = {s.name: s for s in cached_experiment(svc, experiment_id).systems}
    described = systems.get(task.plan.system)
    sanity = described is not None and is_sanity(described.kind, described.builtin)
    result = next((r for r in task.results if r.experiment_type == kind), None)
    if result is None:
        raise Problem(400, f"Task {ref[:80]!r} has no per-question {kind} results to compare.")
    term = cube.experiment_type_term(svc.base, kind)
    values = question_values(svc.store, graph, NamedNode(task.iri), term)
    member = Member(ref, task, result.value(ranking[0]), result.value(ranking[1]), sanity)
    return member, _f1(values)


def compare_many(
    svc: Services, vis: Visibility, refs: list[str], kind: str, measure: str | None
) -> ManyComparison:
    """Compare two or more visible tasks on one dataset version.

    Members are ranked by the first task's profile headline (or ``measure``); sanity systems
    are listed apart and left out of the tests.

    Raises:
        Problem: 404 for an unknown or invisible task; 400 for tasks on different dataset
            versions, without results of ``kind``, an unknown measure, or too many tasks.
    """
    if len(refs) > MAX_TASKS:
        raise Problem(400, f"Compare at most {MAX_TASKS} tasks at a time.")
    first, _ = _task(svc, vis, refs[0], "1")
    try:
        ranking = ranking_measures(first.plan.profile, kind, measure)
    except KeyError:
        raise Problem(400, f"Unknown measure {(measure or '')[:40]!r}.") from None
    members = [_member(svc, vis, ref, kind, ranking) for ref in refs]
    versions = {(m.task.plan.dataset, m.task.plan.version) for m, _ in members}
    if len(versions) > 1:
        raise Problem(400, "The tasks ran on different dataset versions; compare tasks on one.")
    refuse_mixed_profiles([m.task for m, _ in members])
    return compare_members(
        members, kind, ranking, iterations=PAIRWISE_ITERATIONS, seed=SEED, max_pairwise=MAX_TASKS
    )


def _refs() -> list[str]:
    refs = [r.strip() for r in request.args.getlist("task") if r.strip()]
    a, b = request.args.get("a", "").strip(), request.args.get("b", "").strip()
    return refs or [r for r in (a, b) if r]


@dataclass(frozen=True, slots=True)
class Compared:
    """A comparison as loaded for one request (nothing compared: the form alone)."""

    a: str
    b: str
    kind: str
    refs: list[str]
    comparison: Comparison | None
    many: ManyComparison | None


def _load_compared(reader: Reader) -> Compared:
    svc, vis = reader.svc, reader.vis
    a, b = request.args.get("a", "").strip(), request.args.get("b", "").strip()
    kind = request.args.get("type", "").strip() or "QA"
    measure = request.args.get("measure", "").strip() or None
    refs = _refs()
    comparison = many = None
    if len(refs) >= 2:
        if a and b and not request.args.getlist("task"):
            comparison = compare_tasks(svc, vis, a, b, kind)
        many = compare_many(svc, vis, refs, kind, measure)
    elif reader.rep != HTML:
        raise Problem(400, "Name two or more tasks (a and b, or task repeated).")
    return Compared(a, b, kind, refs, comparison, many)


def _compared_csv(_reader: Reader, found: Compared) -> str:
    assert found.many is not None
    return comparison_csv(found.many)


def _compared_json(_reader: Reader, found: Compared) -> str:
    assert found.many is not None
    return json.dumps(comparison_json(found.many), ensure_ascii=False)


def _compared_html(reader: Reader, found: Compared) -> str:
    comparison = found.comparison
    alternates = (
        [(query_link(comparison.query, fmt), media, label) for fmt, media, label in DATA_FORMS]
        if comparison is not None
        else []
    )
    return render_template(
        "compare.html",
        alternates=alternates,
        query_href=query_link(comparison.query) if comparison is not None else None,
        title="Compare tasks",
        a=found.a,
        b=found.b,
        refs=found.refs,
        kind=found.kind,
        comparison=comparison,
        many=found.many,
        measures=list(MEASURES),
        iterations=ITERATIONS,
        pairwise_iterations=PAIRWISE_ITERATIONS,
        samples=reader.svc.config.evaluation.bootstrap_samples,
    )


COMPARE: Resource[Compared] = Resource(
    formats=COMPARE_FORMATS,
    load=_load_compared,
    html=_compared_html,
    extra=((CSV, _compared_csv), (JSON_REPORT, _compared_json)),
    documents=False,
)


@bp.route("/compare")
def compare() -> Response:
    """Compare two tasks (``a``, ``b``), or several (``task`` repeated); the form without.

    ``Accept: text/csv`` (or ``?format=csv``) gives the per-question values as CSV.
    """
    return serve(COMPARE, "/compare")

"""A task's Data Cube results read back from its experiment graph, aggregate and per question.

``aggregate_results`` is the one reader of aggregate results: ``qabench experiment show``, the
experiment, system and leaderboard pages and compare all read them through it. Every function
reads one experiment graph (bound in the named queries ``aggregate_values``, ``task_questions``
and ``task_messages``), so its cost does not grow with the rest of the store; none checks who may
see the graph (callers do). Nothing here writes; the quads are written by ``rdf.result_quads``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from pyoxigraph import Literal, NamedNode, QuerySolutions

from evaluators.cube import experiment_type_term
from evaluators.model import Dataset
from evaluators.qa import text2sparql_file
from evaluators.results import (
    MEASURES,
    QA,
    ExperimentTypeResult,
    MeasureValue,
    QuestionScore,
    type_order,
)
from store import graphs, queries
from store.protocol import RdfStore
from vocab import iris
from vocab.project import QAB
from vocab.standard import GERBIL

_MEASURE_BY_TERM = {info.term.value: key for key, info in MEASURES.items()}
_MEASURE_ORDER = {key: n for n, key in enumerate(MEASURES)}


def type_name(term: object) -> str:
    """Return the short name of an experiment type IRI (``gerbil:QA`` -> ``QA``).

    >>> type_name(NamedNode("http://w3id.org/gerbil/vocab#C2KB"))
    'C2KB'
    """
    value = getattr(term, "value", str(term))
    return str(value).rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _ordered(values: list[MeasureValue]) -> tuple[MeasureValue, ...]:
    return tuple(sorted(values, key=lambda v: _MEASURE_ORDER[v.measure]))


def experiment_table_query(base: str, experiment_id: str) -> str:
    """Return the text of the ``experiment_table`` query with its terms bound by ``VALUES``."""
    values = f"VALUES ?graph {{ {graphs.experiment_graph(base, experiment_id)} }}"
    return queries.load("experiment_table").replace("#BINDINGS#", values)


def aggregate_results(
    store: RdfStore, base: str, experiment_id: str, task: NamedNode | None = None
) -> dict[int, tuple[ExperimentTypeResult, ...]]:
    """Return the aggregate results of every task of an experiment (or of ``task`` alone), by
    task number.

    Experiment types come in ``evaluators.results.EXPERIMENT_TYPES`` order and measures in
    registry order; an undefined measure carries its reason.
    """
    bound: dict[str, NamedNode] = {"graph": graphs.experiment_graph(base, experiment_id)}
    if task is not None:
        bound["task"] = task
    result = store.query(queries.load("aggregate_values"), substitutions=bound)
    assert isinstance(result, QuerySolutions)
    found: dict[int, dict[str, list[MeasureValue]]] = defaultdict(lambda: defaultdict(list))
    for row in result:
        measure = _MEASURE_BY_TERM.get(row["measure"].value)
        number = iris.task_number_of(row["task"].value)
        if measure is None or number is None:
            continue
        values = found[number][type_name(row["type"])]
        value, reason = row["value"], row["reason"]
        if isinstance(value, Literal):
            values.append(MeasureValue(measure, float(value.value)))
        elif isinstance(reason, Literal):
            values.append(MeasureValue(measure, None, reason.value or "undefined"))
    return {
        number: tuple(
            ExperimentTypeResult(kind, _ordered(types[kind]))
            for kind in sorted(types, key=type_order)
        )
        for number, types in sorted(found.items())
    }


def question_id(question: NamedNode) -> str:
    """Return a question's id from its IRI (``.../question/<id>``).

    >>> question_id(NamedNode("http://x.test/dataset/d/v1/question/a%20b"))
    'a b'
    """
    return iris.question_id_of(question.value)


@dataclass(frozen=True, slots=True)
class QuestionValues:
    """One question's per-question measure values for one experiment type of one task."""

    question: NamedNode
    id: str
    values: tuple[MeasureValue, ...]
    message: str | None = None

    def value(self, measure: str) -> float | None:
        """Return the value of ``measure`` (``None`` if absent)."""
        for m in self.values:
            if m.measure == measure:
                return m.value
        return None


def question_values(
    store: RdfStore, graph: NamedNode, task: NamedNode, experiment_type: NamedNode
) -> list[QuestionValues]:
    """Return the per-question values (and failure messages) of one task and experiment type.

    Read by quad lookups along the IRI layout of ``evaluators.cube`` (the task's question
    results ``<task>/question/<id>/<type>`` and their observations ``.../obs/<measure>``): a
    task's observations once, then one lookup per value, so the cost follows the task's
    questions, never the experiment graph (the ``task_questions`` query, which the task page
    links to, gives the same values).
    """
    below = f"{task.value}/question/"
    kind = "/" + iris.segment(type_name(experiment_type))
    values: dict[str, list[MeasureValue]] = defaultdict(list)
    for quad in store.quads(None, QAB.ofTask, task, graph):
        obs = quad.subject
        if not isinstance(obs, NamedNode) or not obs.value.startswith(below):
            continue
        owner, marker, measure = obs.value.rpartition("/obs/")
        info = MEASURES.get(unquote(measure)) if marker else None
        if info is None or not owner.endswith(kind):
            continue
        for found in store.quads(obs, info.term, None, graph):
            if isinstance(found.object, Literal):
                values[owner].append(MeasureValue(info.id, float(found.object.value)))
    out: list[QuestionValues] = []
    for quad in store.quads(task, QAB.questionResult, None, graph):
        result = quad.object
        if not isinstance(result, NamedNode) or not result.value.endswith(kind):
            continue
        question = next(store.quads(result, GERBIL.datasetElement, None, graph), None)
        message = next(store.quads(result, QAB.message, None, graph), None)
        text = message.object.value if message and isinstance(message.object, Literal) else None
        if question is None or not isinstance(question.object, NamedNode):
            continue
        if result.value in values or text is not None:
            measured = _ordered(values.get(result.value, []))
            node = question.object
            out.append(QuestionValues(node, question_id(node), measured, text))
    return sorted(out, key=lambda v: v.question.value)


def question_measure(
    store: RdfStore,
    graph: NamedNode,
    task: NamedNode,
    experiment_type: NamedNode,
    measures: tuple[str, ...],
) -> dict[str, float | None]:
    """Return per question id the first of ``measures`` a task's question has (None: none).

    One lookup per question and measure along the IRI layout (``<result>/obs/<measure>``):
    what the significance tests of an experiment page read for every task, never a scan.
    """
    kind = "/" + iris.segment(type_name(experiment_type))
    found: dict[str, float | None] = {}
    for quad in store.quads(task, QAB.questionResult, None, graph):
        result = quad.object
        if not isinstance(result, NamedNode) or not result.value.endswith(kind):
            continue
        qid = iris.question_id_of(result.value[: -len(kind)])
        found[qid] = None
        for measure in measures:
            obs = NamedNode(f"{result.value}/obs/{iris.segment(measure)}")
            value = next(store.quads(obs, MEASURES[measure].term, None, graph), None)
            if value is not None and isinstance(value.object, Literal):
                found[qid] = float(value.object.value)
                break
    return found


def questions_query(graph: NamedNode, task: NamedNode, experiment_type: NamedNode) -> str:
    """Return the text of the ``task_questions`` query with its terms bound by ``VALUES``."""
    bound = (graph, task, experiment_type)
    values = "VALUES (?graph ?task ?type) { (" + " ".join(str(t) for t in bound) + ") }"
    return queries.load("task_questions").replace("#BINDINGS#", values)


def text2sparql_eval(
    store: RdfStore,
    base: str,
    experiment_id: str,
    task_iri: str,
    gold: Dataset,
    profile: str = text2sparql_file.OFFICIAL,
) -> dict[str, Any] | None:
    """Return a finished TEXT2SPARQL-profile task's evaluation in the official file's shape.

    Rebuilt from the stored per-question values, in the dataset's question order (the client's
    means depend on it), under ``profile``'s averaging rules, so it equals what the task
    printed when it ran.
    """
    graph = graphs.experiment_graph(base, experiment_id)
    stored = question_values(store, graph, NamedNode(task_iri), experiment_type_term(base, QA))
    by_id = {q.id: q for q in stored}
    scores = [QuestionScore(q.id, by_id[q.id].values) for q in gold.questions if q.id in by_id]
    languages = {q.id: q.languages[0] for q in gold.questions if q.languages}
    rules = text2sparql_file.RULES.get(profile, text2sparql_file.RULES[text2sparql_file.OFFICIAL])
    return text2sparql_file.evaluation_document(text2sparql_file.rows(scores, languages), rules)

"""Read what the experiment, task and compare pages show from an experiment's named graph.

Every function reads one experiment graph that the caller has already found visible to the
reader (``Visibility.can_see``); none of them checks visibility itself. Reads are canned:
quad-index lookups with an explicit graph, and the named queries ``page_experiment_table`` and
``page_task_questions`` with the graph bound, so a page costs the same however many other
experiments the store holds. Nothing here renders HTML or writes.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import cast
from urllib.parse import unquote

from pyoxigraph import Literal, NamedNode, QuerySolutions

from evaluators import cube
from evaluators.experiments.model import SystemDescription
from evaluators.experiments.read import TaskSummary, task_summaries
from evaluators.results import MEASURES, ExperimentTypeResult, MeasureValue
from evaluators.systems.protocol import SystemKind
from server.pages.tables import BIOASQ_TYPES, QALD_TYPES
from server.sparql.page import query_link
from store import graphs, queries
from store.protocol import RdfStore
from store.triplestore import TripleStore
from vocab import iris
from vocab.project import QAB
from vocab.standard import DCTERMS, RDF, RDFS

_MEASURE_BY_TERM = {info.term.value: key for key, info in MEASURES.items()}
_ORDER = {key: n for n, key in enumerate(MEASURES)}
# Experiment types in GERBIL's order, then BioASQ's; others sort after them by name.
TYPE_ORDER = (*QALD_TYPES, *BIOASQ_TYPES)


def type_key(name: str) -> tuple[int, str]:
    """Return the sort key of an experiment type name (GERBIL's order, then BioASQ's)."""
    return (TYPE_ORDER.index(name), "") if name in TYPE_ORDER else (len(TYPE_ORDER), name)


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


@dataclass(frozen=True, slots=True)
class ExperimentRead:
    """An experiment as its page shows it: facts, tasks with results, systems."""

    facts: ExperimentFacts
    tasks: tuple[TaskSummary, ...]
    systems: tuple[SystemDescription, ...]


def _triples(store: RdfStore) -> TripleStore:
    # The experiment readers of ``evaluators`` are typed for the embedded store but only use
    # what every ``RdfStore`` offers (select, quads), so the remote store works as well.
    return cast(TripleStore, store)


def type_name(term: object) -> str:
    """Return the short name of an experiment type IRI (``gerbil:QA`` -> ``QA``).

    >>> type_name(NamedNode("http://w3id.org/gerbil/vocab#C2KB"))
    'C2KB'
    """
    value = getattr(term, "value", str(term))
    return str(value).rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _text(store: RdfStore, subject: NamedNode, predicate: NamedNode, graph: NamedNode) -> str:
    for quad in store.quads(subject, predicate, None, graph):
        return str(getattr(quad.object, "value", quad.object))
    return ""


def experiment_facts(store: RdfStore, base: str, experiment_id: str) -> ExperimentFacts:
    """Return the header facts of an experiment (times, owner, releases, knowledge base)."""
    graph = graphs.experiment_graph(base, experiment_id)
    iri = iris.experiment_iri(base, experiment_id)
    releases = sorted(
        _text(store, q.subject, RDFS.label, graph) or q.subject.value
        for q in store.quads(None, RDF.type, QAB.SoftwareRelease, graph)
        if isinstance(q.subject, NamedNode)
    )
    kb = next(
        (
            _text(store, q.subject, RDFS.label, graph)
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
        created=_text(store, iri, DCTERMS.created, graph) or None,
        published_at=_text(store, iri, QAB.publishedAt, graph) or None,
        owner=_text(store, iri, QAB.owner, graph) or None,
        releases=tuple(releases),
        knowledge_base=kb,
        description=_text(store, iri, DCTERMS.description, graph)
        or _text(store, iri, RDFS.comment, graph)
        or None,
    )


def table_query(base: str, experiment_id: str) -> str:
    """Return the text of the experiment table query with its graph bound by ``VALUES``."""
    bound = (graphs.experiment_graph(base, experiment_id), cube.structure_iri(base, "aggregate"))
    values = "VALUES (?graph ?structure) { (" + " ".join(str(t) for t in bound) + ") }"
    return queries.load("page_experiment_table").replace("#BINDINGS#", values)


def table_link(base: str, experiment_id: str) -> str:
    """Return the ``/sparql`` link that reproduces an experiment's tables."""
    return query_link(table_query(base, experiment_id))


def aggregate_results(
    store: RdfStore, base: str, experiment_id: str
) -> dict[str, tuple[ExperimentTypeResult, ...]]:
    """Return the aggregate results of every task of an experiment, by task IRI."""
    result = store.query(
        queries.load("page_experiment_table"),
        substitutions={
            "graph": graphs.experiment_graph(base, experiment_id),
            "structure": cube.structure_iri(base, "aggregate"),
        },
    )
    assert isinstance(result, QuerySolutions)
    found: dict[str, dict[str, list[MeasureValue]]] = defaultdict(lambda: defaultdict(list))
    for row in result:
        measure = _MEASURE_BY_TERM.get(row["measure"].value)
        if measure is None:
            continue
        values = found[row["task"].value][type_name(row["type"])]
        value, reason = row["value"], row["reason"]
        if isinstance(value, Literal):
            values.append(MeasureValue(measure, float(value.value)))
        elif isinstance(reason, Literal):
            values.append(MeasureValue(measure, None, reason.value or "undefined"))
    return {
        task: tuple(
            ExperimentTypeResult(kind, tuple(sorted(types[kind], key=lambda v: _ORDER[v.measure])))
            for kind in sorted(types, key=type_key)
        )
        for task, types in found.items()
    }


def read_experiment(store: RdfStore, base: str, experiment_id: str) -> ExperimentRead:
    """Return everything the experiment page shows."""
    results = aggregate_results(store, base, experiment_id)
    by_number: dict[int, tuple[ExperimentTypeResult, ...]] = {
        int(task.rsplit("/", 1)[-1]): typed for task, typed in results.items()
    }
    tasks = task_summaries(_triples(store), base, experiment_id, by_number)
    facts = experiment_facts(store, base, experiment_id)
    return ExperimentRead(facts, tasks, systems_of(store, facts.graph))


def systems_of(store: RdfStore, graph: NamedNode) -> tuple[SystemDescription, ...]:
    """Return the systems of an experiment as configured for it, by name.

    Reads the configurations (the subjects with ``qab:systemKind`` and ``qab:system``) through
    the quad index: observations also name their system, so a pattern query would visit every
    observation of the experiment.
    """
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
        name = _text(store, system, RDFS.label, graph) or system.value.rsplit("/", 1)[-1]
        found[name] = SystemDescription(
            name,
            kind,
            url=_text(store, conf, QAB.endpointUrl, graph) or None,
            builtin=_text(store, conf, DCTERMS.identifier, graph) or None,
            answers_file=_text(store, conf, DCTERMS.source, graph) or None,
            answers_sha256=_text(store, conf, QAB.sha256, graph) or None,
            description=_text(store, system, DCTERMS.description, graph),
        )
    return tuple(found[k] for k in sorted(found))


def question_id(question: NamedNode) -> str:
    """Return a question's id from its IRI (``.../question/<id>``).

    >>> question_id(NamedNode("http://x.test/dataset/d/v1/question/a%20b"))
    'a b'
    """
    return unquote(question.value.rsplit("/", 1)[-1])


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
    """Return the per-question values (and failure messages) of one task and experiment type."""
    per_question = iris.sub_iri(task, "cube", cube.PER_QUESTION)
    bound = {"graph": graph, "dataset": per_question, "type": experiment_type}
    result = store.query(queries.load("page_task_questions"), substitutions=bound)
    assert isinstance(result, QuerySolutions)
    found: dict[str, list[MeasureValue]] = defaultdict(list)
    nodes: dict[str, NamedNode] = {}
    for row in result:
        measure = _MEASURE_BY_TERM.get(row["measure"].value)
        question, value = row["question"], row["value"]
        if measure is None or not isinstance(question, NamedNode):
            continue
        if isinstance(value, Literal):
            nodes[question.value] = question
            found[question.value].append(MeasureValue(measure, float(value.value)))
    bound = {"graph": graph, "task": task, "type": experiment_type}
    messages = store.query(queries.load("page_task_messages"), substitutions=bound)
    assert isinstance(messages, QuerySolutions)
    failed: dict[str, str] = {}
    for row in messages:
        question, message = row["question"], row["message"]
        if isinstance(question, NamedNode) and isinstance(message, Literal):
            nodes[question.value] = question
            failed[question.value] = message.value
    return [
        QuestionValues(
            node,
            question_id(node),
            tuple(sorted(found.get(key, []), key=lambda v: _ORDER[v.measure])),
            failed.get(key),
        )
        for key, node in nodes.items()
    ]


def questions_query(graph: NamedNode, task: NamedNode, experiment_type: NamedNode) -> str:
    """Return the text of the task table query with its terms bound by ``VALUES``."""
    bound = (graph, iris.sub_iri(task, "cube", cube.PER_QUESTION), experiment_type)
    values = "VALUES (?graph ?dataset ?type) { (" + " ".join(str(t) for t in bound) + ") }"
    return queries.load("page_task_questions").replace("#BINDINGS#", values)

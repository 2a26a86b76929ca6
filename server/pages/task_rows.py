"""The rows of a task page: per-question values, diagnostics, question texts and breakdowns.

``TaskTable`` holds every question of one task and experiment type (read once per store
generation and cached by the page); filtering ("only wrong") and pagination work on it, and the
diagnostics (gold and system values, matched pairs and their rules) are read only for the
questions of the page shown. Breakdowns by answer type, aggregation, hybrid and language come
from ``evaluators.qa.scoring.breakdowns`` over the stored per-question values and the dataset
version read back from the store. Reads only graphs the caller found visible.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pyoxigraph import BlankNode, Literal, NamedNode, QuerySolutions

from evaluators.datasets import library
from evaluators.errors import EvaluationError
from evaluators.experiments.answers import reply_iri
from evaluators.experiments.read import TaskSummary
from evaluators.experiments.results import QuestionValues, question_values
from evaluators.model import question_order
from evaluators.qa.scoring import Breakdown, breakdowns
from evaluators.reports.headline import SCORED_MEASURES, question_score
from evaluators.results import QA_TYPES, EvaluationResult, ExperimentTypeResult, QuestionScore
from server.linked_data.terms import TermView, term_view
from store import queries
from store.protocol import RdfStore, Term
from vocab import iris
from vocab.prefixes import ANSWER_ABBREVIATIONS, KNOWLEDGE_BASES
from vocab.project import QAB

# Experiment types whose per-question scores are precision/recall/F1 with counts.
# Answer namespaces shown as prefixed names in the diagnostics (the full IRI is the tooltip).
ANSWER_PREFIXES = tuple((f"{p}:", KNOWLEDGE_BASES[p]) for p in ANSWER_ABBREVIATIONS)


def short_view(term: Term, base: str) -> TermView:
    """Return the display form of an answer value, IRIs of common KBs as prefixed names.

    >>> short_view(NamedNode("http://dbpedia.org/resource/Berlin"), "http://x.test").label
    'dbr:Berlin'
    """
    view = term_view(term, base)
    if view.kind == "uri":
        for prefix, namespace in ANSWER_PREFIXES:
            if view.value.startswith(namespace) and len(view.value) > len(namespace):
                return replace(view, label=prefix + view.value[len(namespace) :])
    return view


@dataclass(frozen=True, slots=True)
class QuestionLine:
    """One question of a task table, before its diagnostics are read."""

    position: int
    values: QuestionValues

    @property
    def is_wrong(self) -> bool:
        """Return whether the system did not get this question fully right (F1, or the TEXT2SPARQL
        headline, execution EM or MIRAGE's accuracy, below 1, or an error)."""
        defined = any(self.values.value(m) is not None for m in SCORED_MEASURES)
        score = question_score(self.values.value)
        return self.values.message is not None or not defined or score < 1.0


@dataclass(frozen=True, slots=True)
class TaskTable:
    """Every question of one task and experiment type, in dataset order."""

    lines: tuple[QuestionLine, ...]
    measures: tuple[str, ...]

    def select(self, only_wrong: bool) -> tuple[QuestionLine, ...]:
        """Return the lines to show (all, or only the wrong ones)."""
        return tuple(line for line in self.lines if line.is_wrong) if only_wrong else self.lines


def _positions(store: RdfStore, version_graph: NamedNode) -> dict[str, int]:
    result = store.query(
        queries.load("page_version_questions"), default_graph=[version_graph], named_graphs=[]
    )
    assert isinstance(result, QuerySolutions)
    return {row["question"].value: n for n, row in enumerate(result, start=1)}


def task_table(
    store: RdfStore,
    graph: NamedNode,
    task: NamedNode,
    experiment_type: NamedNode,
    version_graph: NamedNode | None,
) -> TaskTable:
    """Read the per-question values of one task and type, ordered as in the dataset."""
    values = question_values(store, graph, task, experiment_type)
    order = _positions(store, version_graph) if version_graph is not None else {}
    values.sort(key=lambda v: (order.get(v.question.value, 1 << 30), question_order(v.id)))
    lines = tuple(
        QuestionLine(order.get(v.question.value, n), v) for n, v in enumerate(values, start=1)
    )
    seen: dict[str, None] = {}
    for v in values:
        for m in v.values:
            seen.setdefault(m.measure, None)
    return TaskTable(lines, tuple(seen))


@dataclass(frozen=True, slots=True)
class ValueView:
    """A gold or system value and whether a matched pair used it."""

    term: TermView
    matched: bool


@dataclass(frozen=True, slots=True)
class MatchView:
    """A matched gold/system pair and the rule that matched them."""

    gold: TermView
    system: TermView
    rule: str


@dataclass(frozen=True, slots=True)
class Diagnostics:
    """What one question result records besides its measures."""

    result: NamedNode
    text: str
    gold: tuple[ValueView, ...]
    system: tuple[ValueView, ...]
    matches: tuple[MatchView, ...]
    # what the system replied (its query, the reply of a TEXT2SPARQL API, why the query gave no
    # results) and remarks on the gold (the reference query's engine difference)
    query: str = ""
    reply: str = ""
    execution: str = ""
    notes: tuple[str, ...] = ()
    # issue 39: how the answer was read (a recorded execution's status, MIRAGE's rule)
    reading: str = ""


def _objects(
    store: RdfStore, subject: NamedNode, predicate: NamedNode, graph: NamedNode
) -> list[Term]:
    return [
        q.object
        for q in store.quads(subject, predicate, None, graph)
        if isinstance(q.object, NamedNode | BlankNode | Literal)
    ]


def diagnostics(
    store: RdfStore,
    base: str,
    graph: NamedNode,
    task: NamedNode,
    experiment_type: str,
    line: QuestionLine,
    texts: dict[str, str],
) -> Diagnostics:
    """Read one question result's gold and system values and matched pairs."""
    result = iris.sub_iri(task, "question", line.values.id, experiment_type)
    matches: list[MatchView] = []
    used_gold: set[str] = set()
    used_system: set[str] = set()
    for pair in _objects(store, result, QAB.matchedPair, graph):
        if not isinstance(pair, NamedNode):
            continue
        gold = _objects(store, pair, QAB.goldValue, graph)
        system = _objects(store, pair, QAB.systemValue, graph)
        rule = _objects(store, pair, QAB.matchRule, graph)
        if gold and system:
            used_gold.add(str(gold[0]))
            used_system.add(str(system[0]))
            matches.append(
                MatchView(
                    short_view(gold[0], base),
                    short_view(system[0], base),
                    getattr(rule[0], "value", "") if rule else "",
                )
            )

    def _values(predicate: NamedNode, used: set[str]) -> tuple[ValueView, ...]:
        found = sorted(_objects(store, result, predicate, graph), key=str)
        return tuple(ValueView(short_view(v, base), str(v) in used) for v in found)

    reply = _reply(store, graph, task, line.values.id)

    def text(subject: NamedNode | None, predicate: NamedNode) -> str:
        found = _objects(store, subject, predicate, graph) if subject is not None else []
        return found[0].value if found and isinstance(found[0], Literal) else ""

    notes = _objects(store, result, QAB.referenceDifference, graph)
    reading = _objects(store, result, QAB.answerReading, graph)
    return Diagnostics(
        result,
        texts.get(line.values.question.value, ""),
        _values(QAB.goldValue, used_gold),
        _values(QAB.systemValue, used_system),
        tuple(sorted(matches, key=lambda m: (m.gold.value, m.system.value))),
        text(reply, QAB.sparql),
        text(reply, QAB.replyJson),
        text(reply, QAB.executionProblem),
        tuple(n.value for n in notes if isinstance(n, Literal)),
        reading[0].value if reading and isinstance(reading[0], Literal) else "",
    )


def _reply(store: RdfStore, graph: NamedNode, task: NamedNode, qid: str) -> NamedNode | None:
    """Return the stored reply the task scored for question ``qid`` (its asking run's)."""
    for run in _objects(store, task, QAB.usedAnswers, graph):
        if isinstance(run, NamedNode):
            return reply_iri(run, qid)
    return None


def question_texts(
    store: RdfStore, questions: list[NamedNode], version_graph: NamedNode | None, language: str
) -> dict[str, str]:
    """Return each question's text in ``language`` (else its first text) from the version."""
    out: dict[str, str] = {}
    if version_graph is None:
        return out
    for question in questions:
        texts = [
            q.object
            for q in store.quads(question, QAB.text, None, version_graph)
            if isinstance(q.object, Literal)
        ]
        chosen = next((t for t in texts if t.language == language), None) or next(
            iter(sorted(texts, key=lambda t: (t.language or "", t.value))), None
        )
        if chosen is not None:
            out[question.value] = chosen.value
    return out


def task_breakdowns(
    store: RdfStore, base: str, task: TaskSummary, table: TaskTable, experiment_type: str
) -> tuple[Breakdown, ...]:
    """Regroup a task's per-question values by the dataset's question properties.

    Returns nothing for types that are not scored by precision/recall/F1, or when the dataset
    version cannot be read back.
    """
    if experiment_type not in QA_TYPES or not table.lines:
        return ()
    try:
        info = library.version_info(store, base, task.plan.dataset, task.plan.version)
    except EvaluationError:
        return ()
    dataset = library.read_dataset(store, info)
    scores = tuple(QuestionScore(line.values.id, line.values.values) for line in table.lines)
    result = EvaluationResult(
        dataset=task.plan.dataset,
        profile=task.plan.profile,
        language=task.plan.language,
        questions=len(scores),
        results=(ExperimentTypeResult(experiment_type, (), scores),),
    )
    return breakdowns(result, dataset, experiment_type=experiment_type)

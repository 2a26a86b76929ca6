"""Evaluation results as RDF Data Cube quads (normalised form, measure-dimension pattern).

Pure: quads out, nothing written. Every observation states its type, its data set and every
dimension (task, experiment type, ``qb:measureType``, system, dataset version, language, profile;
per question also the question) and carries exactly one measure value, so experiment types may
report different measures. GERBIL's measure properties are reused (``results.MEASURES``).

The W3C integrity constraint IC-17 wants every measure a structure declares at every point (every
combination of the other dimensions). Experiment types report different measures, and undefined
values are no observations, so the points of one task do not share one set of measures: each set
of measures that occurs gets its own ``qb:DataStructureDefinition`` (named by the set, the same
IRI wherever the set occurs) and each task one ``qb:DataSet`` per level (aggregate, per question)
and set, typed ``qab:AggregateDataSet`` or ``qab:PerQuestionDataSet``. Undefined values are
``qab:UndefinedValue`` resources linked from the task that say which measure has no value and
why. Per-question diagnostics (gold and system values, matched pairs and their rule) are
``qab:QuestionResult`` resources.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping

from pyoxigraph import Literal, NamedNode, Quad

from evaluators.qa.profiles import PROFILE_TERMS
from evaluators.results import MEASURES, EvaluationResult, ExperimentTypeResult, QuestionScore
from vocab import iris
from vocab.project import QAB
from vocab.qb import QB
from vocab.standard import GERBIL, PROV, RDF, RDFS, XSD

AGGREGATE = "aggregate"
PER_QUESTION = "per-question"
# (dimension property, its rdfs:range); the per-question structure adds the question
DIMENSIONS: tuple[tuple[NamedNode, NamedNode], ...] = (
    (QAB.ofTask, QAB.Task),
    (QAB.experimentType, QAB.ExperimentType),
    (QB.measureType, QB.MeasureProperty),
    (QAB.system, QAB.System),
    (QAB.datasetVersion, QAB.DatasetVersion),
    (QAB.inLanguage, XSD.string),
    (QAB.profile, QAB.Profile),
)
QUESTION_DIMENSION = (GERBIL.datasetElement, QAB.Question)
Dim = tuple[NamedNode, NamedNode | Literal]
_TAGGED = re.compile(r'"(.*)"@([A-Za-z]+(?:-[A-Za-z0-9]+)*)', re.DOTALL)
_TYPED = re.compile(r'"(.*)"\^\^<([^<>"\s]+)>', re.DOTALL)
_IRI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s<>\"{}|\\^`]+")


_LEVEL_CLASS = {AGGREGATE: QAB.AggregateDataSet, PER_QUESTION: QAB.PerQuestionDataSet}


def structure_key(measures: Iterable[str]) -> str:
    """Return the short name of the structure that declares exactly ``measures``.

    >>> structure_key(["f1", "precision"]) == structure_key(["precision", "f1", "f1"])
    True
    """
    text = ",".join(sorted(set(measures)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def structure_iri(base: str, kind: str, measures: Iterable[str]) -> NamedNode:
    """Return the IRI of the ``kind`` structure declaring exactly ``measures``."""
    return iris.page_iri(base, "cube", "structure", kind, structure_key(measures))


def structure_quads(base: str, graph: NamedNode, kind: str, measures: Iterable[str]) -> list[Quad]:
    """Return the structure of ``kind`` declaring ``measures``, its components and properties.

    The dimension properties are declared ``qb:DimensionProperty`` with their range and the
    measures ``qb:MeasureProperty``, so the data validates on its own.
    """
    ids = sorted(set(measures))
    dsd = structure_iri(base, kind, ids)
    dims = DIMENSIONS if kind == AGGREGATE else (*DIMENSIONS, QUESTION_DIMENSION)
    labels = ", ".join(MEASURES[m].label for m in ids)
    out = [
        Quad(dsd, RDF.type, QB.DataStructureDefinition, graph),
        Quad(dsd, RDFS.label, Literal(f"qabench {kind} results: {labels}", language="en"), graph),
    ]
    for order, (prop, range_) in enumerate(dims, start=1):
        spec = iris.sub_iri(dsd, "dimension", str(order))
        out += [
            Quad(dsd, QB.component, spec, graph),
            Quad(spec, RDF.type, QB.ComponentSpecification, graph),
            Quad(spec, QB.dimension, prop, graph),
            Quad(spec, QB.componentProperty, prop, graph),
            Quad(spec, QB.order, Literal(order), graph),
            Quad(prop, RDF.type, QB.DimensionProperty, graph),
            Quad(prop, RDFS.range, range_, graph),
        ]
    for measure in ids:
        info = MEASURES[measure]
        spec = iris.sub_iri(dsd, "measure", info.id)
        out += [
            Quad(dsd, QB.component, spec, graph),
            Quad(spec, RDF.type, QB.ComponentSpecification, graph),
            Quad(spec, QB.measure, info.term, graph),
            Quad(spec, QB.componentProperty, info.term, graph),
            Quad(info.term, RDF.type, QB.MeasureProperty, graph),
            Quad(info.term, RDFS.label, Literal(info.label, language="en"), graph),
        ]
    return out


def experiment_type_term(base: str, experiment_type: str) -> NamedNode:
    """Return GERBIL's individual for an experiment type (``gerbil:QA``), or one of ours."""
    if experiment_type in GERBIL:
        return GERBIL[experiment_type]
    return iris.page_iri(base, "experiment-type", experiment_type)


def profile_term(base: str, profile: str) -> NamedNode:
    """Return the vocabulary individual of a scoring profile."""
    return PROFILE_TERMS.get(profile) or iris.page_iri(base, "profile", profile)


def value_term(text: str) -> NamedNode | Literal:
    """Return a diagnostic value as RDF: an IRI, a tagged or typed literal, or a plain string.

    >>> value_term('"Paris"@en'), value_term("8")
    (<Literal value=Paris language=en>, <Literal value=8 datatype=<NamedNode \
value=http://www.w3.org/2001/XMLSchema#string>>)
    """
    try:
        if m := _TAGGED.fullmatch(text):
            return Literal(m.group(1), language=m.group(2))
        if m := _TYPED.fullmatch(text):
            return Literal(m.group(1), datatype=NamedNode(m.group(2)))
        if _IRI.fullmatch(text):
            return NamedNode(text)
    except ValueError:
        pass
    return Literal(text)


def _number(measure: str, value: float) -> Literal:
    return Literal(int(value)) if MEASURES[measure].is_count else Literal(float(value))


class _Writer:
    """Collects the quads of one task in one graph."""

    def __init__(
        self, result: EvaluationResult, base: str, task: NamedNode, graph: NamedNode
    ) -> None:
        self.base, self.task, self.graph = base, task, graph
        self.quads: list[Quad] = []
        self.language = Literal(result.language)
        self.profile = profile_term(base, result.profile)
        self._data_sets: dict[tuple[str, str], NamedNode] = {}

    def add(self, s: NamedNode, p: NamedNode, o: NamedNode | Literal) -> None:
        self.quads.append(Quad(s, p, o, self.graph))

    def data_set(self, kind: str, measures: Iterable[str]) -> NamedNode:
        """Return the task's data set of ``kind`` for one set of measures (made on first use)."""
        ids = sorted(set(measures))
        key = structure_key(ids)
        found = self._data_sets.get((kind, key))
        if found is not None:
            return found
        ds = iris.sub_iri(self.task, "cube", kind, key)
        self.add(ds, RDF.type, QB.DataSet)
        self.add(ds, RDF.type, _LEVEL_CLASS[kind])
        self.add(ds, QB.structure, structure_iri(self.base, kind, ids))
        self.add(ds, PROV.wasGeneratedBy, self.task)
        self.quads += structure_quads(self.base, self.graph, kind, ids)
        self._data_sets[(kind, key)] = ds
        return ds

    def observation(
        self, obs: NamedNode, ds: NamedNode, dims: list[Dim], measure: str, value: float
    ) -> None:
        self.add(obs, RDF.type, QB.Observation)
        self.add(obs, QB.dataSet, ds)
        self.add(obs, QAB.ofTask, self.task)
        self.add(obs, QAB.inLanguage, self.language)
        self.add(obs, QAB.profile, self.profile)
        for p, o in dims:
            self.add(obs, p, o)
        self.add(obs, QB.measureType, MEASURES[measure].term)
        self.add(obs, MEASURES[measure].term, _number(measure, value))

    def undefined(
        self, owner: NamedNode, node: NamedNode, measure: str, etype: NamedNode, reason: str | None
    ) -> None:
        self.add(owner, QAB.undefinedValue, node)
        self.add(node, RDF.type, QAB.UndefinedValue)
        self.add(node, QAB.measure, MEASURES[measure].term)
        self.add(node, QAB.experimentType, etype)
        self.add(node, QAB.reason, Literal(reason or "undefined"))

    def diagnostics(self, qr: NamedNode, score: QuestionScore) -> None:
        for value in score.gold:
            self.add(qr, QAB.goldValue, value_term(value))
        for value in score.system:
            self.add(qr, QAB.systemValue, value_term(value))
        for n, match in enumerate(score.matches):
            pair = iris.sub_iri(qr, "match", str(n))
            self.add(qr, QAB.matchedPair, pair)
            self.add(pair, RDF.type, QAB.MatchedPair)
            self.add(pair, QAB.goldValue, value_term(match.gold))
            self.add(pair, QAB.systemValue, value_term(match.system))
            self.add(pair, QAB.matchRule, Literal(match.rule))
        if score.error is not None:
            self.add(qr, QAB.message, Literal(score.error))
        for note in score.notes:
            # TEXT2SPARQL: the reference query gives another result here than the gold
            self.add(qr, QAB.referenceDifference, Literal(note))
        if score.reading is not None:
            self.add(qr, QAB.answerReading, Literal(score.reading))


def _questions(typed: ExperimentTypeResult) -> Iterator[QuestionScore]:
    seen: set[str] = set()
    for score in typed.per_question:
        if score.question_id not in seen:  # a duplicated gold id is reported once
            seen.add(score.question_id)
            yield score


def observation_quads(
    result: EvaluationResult,
    *,
    base: str,
    task: NamedNode,
    graph: NamedNode,
    system: NamedNode,
    dataset_version: NamedNode,
    question_iris: Mapping[str, NamedNode] | None = None,
) -> list[Quad]:
    """Return the Data Cube quads of one evaluation (aggregate and per question) in ``graph``.

    Args:
        result: what ``scoring.evaluate`` (or another scorer) returned.
        base: the base IRI (for the structure definitions).
        task: the task the result belongs to; observations and diagnostics are minted below it.
        graph: the named graph every quad goes into.
        system: the system dimension value.
        dataset_version: the dataset-version dimension value.
        question_iris: question id -> question IRI; ids not in it get
            ``<dataset_version>/question/<id>`` (the layout of ``iris.question_iri``).

    Returns:
        The quads, with the structure definitions their data sets use.
    """
    w = _Writer(result, base, task, graph)
    common: list[Dim] = [
        (QAB.system, system),
        (QAB.datasetVersion, dataset_version),
    ]
    for typed in result.results:
        etype = experiment_type_term(base, typed.experiment_type)
        dims = [*common, (QAB.experimentType, etype)]
        defined = [m.measure for m in typed.measures if m.value is not None]
        for m in typed.measures:
            if m.value is None:
                undefined = iris.sub_iri(task, "undefined", typed.experiment_type, m.measure)
                w.undefined(task, undefined, m.measure, etype, m.undefined_reason)
                continue
            obs = iris.sub_iri(task, "obs", typed.experiment_type, m.measure)
            w.observation(obs, w.data_set(AGGREGATE, defined), dims, m.measure, m.value)
        for score in _questions(typed):
            question = (question_iris or {}).get(score.question_id) or iris.sub_iri(
                dataset_version, "question", score.question_id
            )
            qr = iris.sub_iri(task, "question", score.question_id, typed.experiment_type)
            w.add(task, QAB.questionResult, qr)
            w.add(qr, RDF.type, QAB.QuestionResult)
            w.add(qr, GERBIL.datasetElement, question)
            w.add(qr, QAB.experimentType, etype)
            w.diagnostics(qr, score)
            answered = [m.measure for m in score.measures if m.value is not None]
            for m in score.measures:
                if m.value is None:
                    undefined = iris.sub_iri(qr, "undefined", m.measure)
                    w.undefined(qr, undefined, m.measure, etype, m.undefined_reason)
                    w.add(undefined, GERBIL.datasetElement, question)
                    continue
                obs = iris.sub_iri(qr, "obs", m.measure)
                qdims = [*dims, (GERBIL.datasetElement, question)]
                ds = w.data_set(PER_QUESTION, answered)
                w.observation(obs, ds, qdims, m.measure, m.value)
    return list(dict.fromkeys(w.quads))

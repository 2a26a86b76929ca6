"""Results as Data Cube quads, checked with the W3C integrity constraints on a real store."""

from __future__ import annotations

from importlib import resources

import pytest
from pyoxigraph import Literal, NamedNode, Quad, RdfFormat

from evaluators.cube import (
    AGGREGATE,
    PER_QUESTION,
    experiment_type_term,
    observation_quads,
    structure_iri,
    value_term,
)
from evaluators.qa.scoring import evaluate
from evaluators.results import MEASURES, EvaluationResult
from store import graphs
from store.triplestore import TripleStore
from tests.evaluators.integrity import constraint_queries
from tests.evaluators.integrity import violations as constraint_violations
from tests.plugins.scoring import DBO, DBR, answered, dataset, question
from vocab import iris
from vocab.project import QAB
from vocab.qb import QB

BASE = "http://qabench.test"
TASK = iris.task_iri(BASE, "202601010001", 1)
GRAPH = graphs.experiment_graph(BASE, "202601010001")
SYSTEM = iris.system_iri(BASE, "demo")
VERSION = iris.dataset_version_iri(BASE, "demo", 1)


def sample(profile: str) -> EvaluationResult:
    query = f"SELECT ?x WHERE {{ ?x a <{DBO}City> ; <{DBO}country> <{DBR}Germany> }}"
    gold = dataset(
        question("1", [NamedNode(DBR + "Berlin"), NamedNode(DBR + "Hamburg")], sparql=query),
        question("2", [Literal("8")]),
        question("3", []),
    )
    answers = {
        "1": answered(gold.questions[0], [NamedNode(DBR + "Berlin")]),
        "2": answered(gold.questions[1], [Literal("8.0")]),
        "3": answered(gold.questions[2], [Literal("surprise", language="en")]),
    }
    return evaluate(gold, answers, profile=profile, bootstrap_samples=50, millis={"1": 5.0})


def write(store: TripleStore, result: EvaluationResult) -> list[Quad]:
    quads = observation_quads(
        result, base=BASE, task=TASK, graph=GRAPH, system=SYSTEM, dataset_version=VERSION,
        question_iris={"1": iris.question_iri(BASE, "demo", 1, "1")},
    )  # fmt: skip
    store.load(
        resources.files("vocab").joinpath("project.ttl").read_bytes(),
        RdfFormat.TURTLE,
        graph=graphs.vocab_graph(BASE),
    )
    store.add(quads)
    return quads


def violations(store: TripleStore, *, grouped: bool = False) -> list[str]:
    def instances(query: str) -> list[str]:
        return [r["p"].value for r in store.select(query)]

    return constraint_violations(store.ask, instances, grouped=grouped)


@pytest.mark.parametrize("profile", ["strict", "gerbil", "qald-classic"])
def test_written_cube_passes_every_integrity_constraint(store: TripleStore, profile: str) -> None:
    write(store, sample(profile))
    assert violations(store) == []


def test_integrity_constraints_catch_broken_cubes(store: TripleStore) -> None:
    quads = write(store, sample("gerbil"))
    obs = next(q.subject for q in quads if q.predicate == QB.dataSet)
    dim = next(q for q in quads if q.subject == obs and q.predicate == QAB.system)
    store.apply(remove=[dim])
    assert violations(store) == ["ic-11-all-dimensions-required.rq"]
    store.add([dim, Quad(obs, QB.dataSet, iris.sub_iri(TASK, "elsewhere"), GRAPH)])
    assert "ic-01-unique-dataset.rq" in violations(store)


def test_duplicate_and_double_measure_observations_are_caught(store: TripleStore) -> None:
    quads = write(store, sample("strict"))
    obs = next(q.subject for q in quads if q.predicate == QB.dataSet)
    copy = iris.sub_iri(TASK, "copy")
    store.add([Quad(copy, q.predicate, q.object, GRAPH) for q in quads if q.subject == obs])
    assert [n.replace(".grouped", "") for n in violations(store, grouped=True)] == [
        "ic-12-no-duplicate-observations.rq",
        "ic-17-all-measures-present-in-measure-dimension-cube.rq",
    ]
    # A second observation of the same measure at the same point: a duplicate, and one more
    # observation at that point than its structure has measures.
    assert violations(store) == [
        "ic-12-no-duplicate-observations.rq",
        "ic-17-all-measures-present-in-measure-dimension-cube.rq",
    ]
    store.apply(
        remove=[Quad(copy, q.predicate, q.object, GRAPH) for q in quads if q.subject == obs]
    )
    # A value of another measure its structure declares (one its neighbour reports).
    data_set = next(q.object for q in quads if q.subject == obs and q.predicate == QB.dataSet)
    own = next(q.object for q in quads if q.subject == obs and q.predicate == QB.measureType)
    other = next(
        q.object
        for q in quads
        if q.predicate == QB.measureType
        and q.object != own
        and Quad(q.subject, QB.dataSet, data_set, GRAPH) in quads
    )
    store.add([Quad(obs, other, Literal(0.5), GRAPH)])
    assert "ic-16-single-measure.rq" in violations(store)


def test_observations_carry_the_result_values(store: TripleStore) -> None:
    result = sample("gerbil")
    quads = write(store, result)
    qa = result.get("QA")
    assert qa is not None
    defined = [m for m in qa.measures if m.value is not None]
    rows = store.select(
        "SELECT * WHERE { ?o a ?obs ; ?type ?qa ; ?mt ?m ; ?ds ?set . ?o ?m ?v . ?set a ?level }",
        obs=QB.Observation, type=QAB.experimentType, qa=experiment_type_term(BASE, "QA"),
        mt=QB.measureType, ds=QB.dataSet, level=QAB.AggregateDataSet,
    )  # fmt: skip
    got = {row["m"].value: float(row["v"].value) for row in rows}
    assert got == {MEASURES[m.measure].term.value: pytest.approx(m.value) for m in defined}
    assert not [q for q in quads if q.predicate == QAB.reason]  # every value is defined here


def test_undefined_values_are_resources_not_observations(store: TripleStore) -> None:
    gold = dataset(question("1", []))
    result = evaluate(gold, {"1": answered(gold.questions[0], [Literal("x")])}, profile="gerbil")
    quads = write(store, result)
    assert violations(store) == []
    reasons = {q.subject: q.object.value for q in quads if q.predicate == QAB.reason}
    undefined = [m for r in result.results for m in r.measures if m.value is None]
    assert {"macro_f1_qald", "avg_millis"} <= {m.measure for m in undefined}
    assert len(reasons) == len(undefined)
    assert store.ask(
        "ASK { ?task ?link ?u . ?u a ?cls ; ?measure ?m }", task=TASK, link=QAB.undefinedValue,
        cls=QAB.UndefinedValue, measure=QAB.measure, m=MEASURES["macro_f1_qald"].term,
    )  # fmt: skip
    # no observation reports the undefined measure
    assert not store.ask("ASK { ?o ?mt ?m }", mt=QB.measureType, m=MEASURES["macro_f1_qald"].term)


def test_per_question_diagnostics(store: TripleStore) -> None:
    write(store, sample("strict"))
    rule = store.select(
        "SELECT * WHERE { ?qr ?element ?q ; ?pair ?p . ?p ?ruleProp ?rule }",
        element=NamedNode("http://w3id.org/gerbil/vocab#datasetElement"),
        q=iris.sub_iri(VERSION, "question", "2"),
        pair=QAB.matchedPair,
        ruleProp=QAB.matchRule,
    )
    assert [r["rule"].value for r in rule] == ["numeric-value"]
    assert store.ask(
        "ASK { ?qr ?gold ?v }", qr=iris.sub_iri(TASK, "question", "1", "QA"), gold=QAB.goldValue,
        v=NamedNode(DBR + "Hamburg"),
    )  # fmt: skip


def test_quads_are_deterministic_and_in_one_graph() -> None:
    result = sample("gerbil")
    a = observation_quads(
        result, base=BASE, task=TASK, graph=GRAPH, system=SYSTEM, dataset_version=VERSION
    )
    b = observation_quads(
        result, base=BASE, task=TASK, graph=GRAPH, system=SYSTEM, dataset_version=VERSION
    )
    assert a == b
    assert {q.graph_name for q in a} == {GRAPH}
    qa = result.get("QA")
    assert qa is not None
    defined = [m.measure for m in qa.measures if m.value is not None]
    assert structure_iri(BASE, AGGREGATE, defined) in {q.object for q in a}


def test_each_point_has_exactly_the_measures_of_its_structure(store: TripleStore) -> None:
    quads = write(store, sample("gerbil"))
    # Points with different sets of measures get different structures and data sets.
    data_sets = {q.subject for q in quads if q.predicate == QB.structure}
    structures = {q.object for q in quads if q.predicate == QB.structure}
    assert len(data_sets) == len(structures) >= 2
    kinds = {
        q.object for q in quads if q.predicate.value.endswith("#type") and q.subject in data_sets
    }
    assert {QAB.AggregateDataSet, QAB.PerQuestionDataSet, QB.DataSet} <= kinds
    per_question = [s for s in structures if f"/{PER_QUESTION}/" in s.value]
    assert per_question
    # Take one observation away: its point lacks a measure its structure declares (IC-17).
    obs = next(q.subject for q in quads if q.predicate == QB.dataSet)
    store.apply(remove=[q for q in quads if q.subject == obs])
    assert violations(store) == ["ic-17-all-measures-present-in-measure-dimension-cube.rq"]


CUBE = """
@prefix qb: <http://purl.org/linked-data/cube#> . @prefix ex: <http://ex.test/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
ex:dsd a qb:DataStructureDefinition ; qb:component [ qb:componentProperty ex:dim ] , [ qb:componentProperty ex:m ] .
ex:dim a qb:DimensionProperty ; rdfs:range xsd:string .
ex:m a qb:MeasureProperty . ex:m2 a qb:MeasureProperty .
ex:ds a qb:DataSet ; qb:structure ex:dsd .
ex:o1 a qb:Observation ; qb:dataSet ex:ds ; ex:dim "a" ; ex:m 1 .
ex:o2 a qb:Observation ; qb:dataSet ex:ds ; ex:dim "b" ; ex:m 2 .
ex:mdsd a qb:DataStructureDefinition ; qb:component [ qb:componentProperty qb:measureType ] ,
  [ qb:componentProperty ex:dim ] , [ qb:componentProperty ex:m ] , [ qb:componentProperty ex:m2 ] .
qb:measureType a qb:DimensionProperty ; rdfs:range qb:MeasureProperty .
ex:mds a qb:DataSet ; qb:structure ex:mdsd .
ex:p1 a qb:Observation ; qb:dataSet ex:mds ; ex:dim "a" ; qb:measureType ex:m ; ex:m 1 .
ex:p2 a qb:Observation ; qb:dataSet ex:mds ; ex:dim "a" ; qb:measureType ex:m2 ; ex:m2 2 .
ex:key a qb:SliceKey ; qb:componentProperty ex:dim . ex:dsd qb:sliceKey ex:key .
ex:slice a qb:Slice ; qb:sliceStructure ex:key ; ex:dim "a" ; qb:observation ex:o1 . ex:ds qb:slice ex:slice .
ex:cdsd a qb:DataStructureDefinition ; qb:component [ qb:componentProperty ex:cdim ] , [ qb:componentProperty ex:m ] .
ex:cdim a qb:DimensionProperty ; rdfs:range skos:Concept ; qb:codeList ex:codes .
ex:cds a qb:DataSet ; qb:structure ex:cdsd .
ex:code a skos:Concept ; skos:inScheme ex:scheme . ex:code2 a skos:Concept .
"""
# One addition per constraint that breaks it (IC-19 both ways; IC-20 and IC-21 through their
# template instances); "" is the valid cube itself.
BROKEN = [
    ("", None),
    ("ex:o3 a qb:Observation .", "ic-01"),
    ("ex:ds2 a qb:DataSet .", "ic-02"),
    (
        "ex:dsd2 a qb:DataStructureDefinition ; qb:component [ qb:componentProperty ex:dim ] .",
        "ic-03",
    ),
    ("ex:dim2 a qb:DimensionProperty .", "ic-04"),
    ("ex:dim3 a qb:DimensionProperty ; rdfs:range skos:Concept .", "ic-05"),
    (
        "ex:dsd qb:component [ qb:componentProperty ex:extra ; qb:componentRequired false ] .",
        "ic-06",
    ),
    ("ex:key2 a qb:SliceKey .", "ic-07"),
    ("ex:key qb:componentProperty ex:elsewhere .", "ic-08"),
    ("ex:slice qb:sliceStructure ex:key3 .", "ic-09"),
    (
        "ex:key4 a qb:SliceKey ; qb:componentProperty ex:m . ex:dsd qb:sliceKey ex:key4 . "
        "ex:slice2 a qb:Slice ; qb:sliceStructure ex:key4 .",
        "ic-10",
    ),
    ("ex:o3 a qb:Observation ; qb:dataSet ex:ds ; ex:m 3 .", "ic-11"),
    ('ex:o3 a qb:Observation ; qb:dataSet ex:ds ; ex:dim "a" ; ex:m 3 .', "ic-12"),
    (
        "ex:dsd qb:component [ qb:componentProperty ex:attr ; qb:componentRequired true ] . "
        "ex:attr a qb:AttributeProperty .",
        "ic-13",
    ),
    ('ex:o3 a qb:Observation ; qb:dataSet ex:ds ; ex:dim "c" .', "ic-14"),
    (
        'ex:p3 a qb:Observation ; qb:dataSet ex:mds ; ex:dim "b" ; qb:measureType ex:m ; ex:m2 3 .',
        "ic-15",
    ),
    ("ex:p1 ex:m2 3 .", "ic-16"),
    (
        'ex:p3 a qb:Observation ; qb:dataSet ex:mds ; ex:dim "b" ; qb:measureType ex:m ; ex:m 3 .',
        "ic-17",
    ),
    ("ex:slice qb:observation ex:p1 .", "ic-18"),
    (
        "ex:codes a skos:ConceptScheme . "
        "ex:c1 a qb:Observation ; qb:dataSet ex:cds ; ex:cdim ex:code2 ; ex:m 1 .",
        "ic-19a",
    ),
    (
        "ex:codes a skos:Collection ; skos:member ex:code . "
        "ex:c1 a qb:Observation ; qb:dataSet ex:cds ; ex:cdim ex:code2 ; ex:m 1 .",
        "ic-19b",
    ),
    (
        "ex:codes a qb:HierarchicalCodeList ; qb:hierarchyRoot ex:code ; qb:parentChildProperty ex:narrower . "
        "ex:code ex:narrower ex:child . ex:c1 a qb:Observation ; qb:dataSet ex:cds ; ex:cdim ex:code2 ; ex:m 1 .",
        "ic-20",
    ),
    (
        "ex:codes a qb:HierarchicalCodeList ; qb:hierarchyRoot ex:code ; qb:parentChildProperty _:inv . "
        "_:inv owl:inverseOf ex:broader . ex:child ex:broader ex:code . "
        "ex:c1 a qb:Observation ; qb:dataSet ex:cds ; ex:cdim ex:code2 ; ex:m 1 .",
        "ic-21",
    ),
    # The hierarchies again with values they reach: no violation.
    (
        "ex:codes a qb:HierarchicalCodeList ; qb:hierarchyRoot ex:code ; qb:parentChildProperty ex:narrower . "
        "ex:code ex:narrower ex:child . ex:c1 a qb:Observation ; qb:dataSet ex:cds ; ex:cdim ex:child ; ex:m 1 .",
        None,
    ),
    (
        "ex:codes a qb:HierarchicalCodeList ; qb:hierarchyRoot ex:code ; qb:parentChildProperty _:inv . "
        "_:inv owl:inverseOf ex:broader . ex:child ex:broader ex:code . "
        "ex:c1 a qb:Observation ; qb:dataSet ex:cds ; ex:cdim ex:child ; ex:m 1 .",
        None,
    ),
]


@pytest.mark.parametrize(("addition", "broken"), BROKEN)
def test_each_integrity_constraint_catches_what_it_forbids(
    store: TripleStore, addition: str, broken: str | None
) -> None:
    store.load((CUBE + addition).encode(), RdfFormat.TURTLE, graph=GRAPH)
    found = violations(store)
    # The linear forms of IC-12 and IC-17 find exactly what the pairwise ones find.
    grouped = [name.replace(".grouped", "") for name in violations(store, grouped=True)]
    assert grouped == found
    if broken is None:
        assert found == []
    else:
        assert any(name.startswith(broken + "-") for name in found), found


def test_every_constraint_is_exercised() -> None:
    assert len(BROKEN) == 25
    assert {b for _, b in BROKEN if b} == {f"ic-{n:02d}" for n in range(1, 22) if n != 19} | {
        "ic-19a",
        "ic-19b",
    }
    # Without hierarchical code lists the templates have no instance.
    assert len(constraint_queries(lambda query: [])) == 20


def test_value_terms() -> None:
    assert value_term("http://dbpedia.org/resource/Berlin") == NamedNode(DBR + "Berlin")
    assert value_term('"8"^^<http://www.w3.org/2001/XMLSchema#integer>').value == "8"
    assert value_term("? http://x/p ?") == Literal("? http://x/p ?")
    assert experiment_type_term(BASE, "documents").value == BASE + "/experiment-type/documents"

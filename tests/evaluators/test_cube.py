"""Results as Data Cube quads, checked with the W3C integrity constraints on a real store."""

from __future__ import annotations

from importlib import resources

import pytest
from pyoxigraph import Literal, NamedNode, Quad, RdfFormat

from evaluators.cube import (
    AGGREGATE,
    experiment_type_term,
    observation_quads,
    structure_iri,
    structure_quads,
    value_term,
)
from evaluators.qa.scoring import evaluate
from evaluators.results import MEASURES, EvaluationResult
from store import graphs
from store.triplestore import TripleStore
from tests import TEST_DATA
from tests.plugins.scoring import DBO, DBR, answered, dataset, question
from vocab import iris
from vocab.project import QAB
from vocab.qb import QB

BASE = "http://qabench.test"
IC_DIR = TEST_DATA / "qb-ic"
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
    store.add(structure_quads(BASE, graphs.vocab_graph(BASE)))
    store.load(
        resources.files("vocab").joinpath("project.ttl").read_bytes(),
        RdfFormat.TURTLE,
        graph=graphs.vocab_graph(BASE),
    )
    store.add(quads)
    return quads


def violations(store: TripleStore) -> list[str]:
    files = sorted(IC_DIR.glob("*.rq"))
    assert len(files) == 14
    return [f.name for f in files if store.ask(f.read_text())]


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
    assert violations(store) == ["ic-12-no-duplicate-observations.rq"]
    store.apply(
        remove=[Quad(copy, q.predicate, q.object, GRAPH) for q in quads if q.subject == obs]
    )
    store.add([Quad(obs, MEASURES["recall"].term, Literal(0.5), GRAPH)])
    assert "ic-16-single-measure.rq" in violations(store)


def test_observations_carry_the_result_values(store: TripleStore) -> None:
    result = sample("gerbil")
    quads = write(store, result)
    qa = result.get("QA")
    assert qa is not None
    defined = [m for m in qa.measures if m.value is not None]
    rows = store.select(
        "SELECT * WHERE { ?o a ?obs ; ?type ?qa ; ?mt ?m ; ?ds ?set . ?o ?m ?v }",
        obs=QB.Observation, type=QAB.experimentType, qa=experiment_type_term(BASE, "QA"),
        mt=QB.measureType, ds=QB.dataSet, set=iris.sub_iri(TASK, "cube", AGGREGATE),
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
    assert structure_iri(BASE, AGGREGATE) in {q.object for q in a}


def test_value_terms() -> None:
    assert value_term("http://dbpedia.org/resource/Berlin") == NamedNode(DBR + "Berlin")
    assert value_term('"8"^^<http://www.w3.org/2001/XMLSchema#integer>').value == "8"
    assert value_term("? http://x/p ?") == Literal("? http://x/p ?")
    assert experiment_type_term(BASE, "documents").value == BASE + "/experiment-type/documents"

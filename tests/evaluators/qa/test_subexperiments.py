"""Experiment types: GERBIL's AT2KB, P2KB and RE2KB vectors, C2KB classification, the avoider."""

from __future__ import annotations

from fractions import Fraction as F
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from evaluators.errors import UnknownSubExperimentError
from evaluators.formats import parse_file
from evaluators.metrics import Counts, prf
from evaluators.model import AnswerType, Dataset, Question
from evaluators.qa.answer_matching import Lookups
from evaluators.qa.marking_matching import count_equal
from evaluators.qa.profiles import PROFILES
from evaluators.qa.scoring import evaluate
from evaluators.qa.subexperiments import (
    SUBEXPERIMENTS,
    QuestionCase,
    ScoringContext,
    aggregate,
    answer_type,
    gerbil_answer_type,
    subexperiment,
)
from evaluators.results import ExperimentTypeResult, MeasureValue, QuestionScore
from tests.plugins.scoring import DBO, DBR, answered, dataset, question

GERBIL_DATA = "systems/dice-group_gerbil/src/test/resources/datasets"
ORDER = (
    "macro_precision",
    "macro_recall",
    "macro_f1",
    "micro_precision",
    "micro_recall",
    "micro_f1",
)
TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"


def values(result: ExperimentTypeResult | None) -> tuple[float | None, ...]:
    assert result is not None
    return tuple(result.value(m) for m in ORDER)


def approx(*expected: F | float) -> tuple:
    return tuple(pytest.approx(float(v), rel=1e-12) for v in expected)


@pytest.fixture(scope="module")
def qald_test(shared_data: Path) -> Dataset:
    return parse_file(shared_data / GERBIL_DATA / "QALD_test.json")


@pytest.fixture(scope="module")
def qald_test3(shared_data: Path) -> Dataset:
    return parse_file(shared_data / GERBIL_DATA / "QALD_test3.json")


def run(
    gold: Dataset, system: Question | None, kind: str, profile: str = "gerbil"
) -> ExperimentTypeResult | None:
    answers = {} if system is None else {gold.questions[0].id: system}
    return evaluate(gold, answers, profile=profile).get(kind)


def test_at2kb_vectors(qald_test: Dataset) -> None:
    gold = qald_test.questions[0]
    assert values(run(qald_test, None, "AType")) == approx(0, 0, 0, 0, 0, 0)
    resource = answered(gold, answer_type=AnswerType.RESOURCE, answer_type_label="resource")
    assert values(run(qald_test, resource, "AType")) == approx(1, 1, 1, 1, 1, 1)
    boolean = answered(gold, answer_type=AnswerType.BOOLEAN, answer_type_label="boolean")
    assert values(run(qald_test, boolean, "AType")) == approx(0, 0, 0, 0, 0, 0)
    # {RESOURCE, BOOLEAN}: our answers carry one type, so the counting step is checked directly
    both = count_equal(("RESOURCE",), ("RESOURCE", "BOOLEAN"))
    assert both.counts == Counts(1, 1, 0)
    score = QuestionScore("101", ())
    measures = {m.measure: m.value for m in aggregate([_with(score, both.counts)])}
    assert tuple(measures[m] for m in ORDER) == approx(0.5, 1, F(2, 3), 0.5, 1, F(2, 3))


def _with(score: QuestionScore, c: Counts) -> QuestionScore:
    s = prf(c)
    ms = (
        ("tp", c.tp),
        ("fp", c.fp),
        ("fn", c.fn),
        ("precision", s.precision),
        ("recall", s.recall),
        ("f1", s.f1),
    )
    return QuestionScore(score.question_id, tuple(MeasureValue(k, v) for k, v in ms))


def test_gerbil_answer_type_reading() -> None:
    assert gerbil_answer_type(Question("1", answer_type_label="RESOUCE")) == ("RESOURCE",)
    assert gerbil_answer_type(Question("1", answer_type_label="uri")) == ()
    assert gerbil_answer_type(None) == ()


def test_p2kb_vectors(qald_test: Dataset) -> None:
    gold = qald_test.questions[0]
    assert values(run(qald_test, None, "P2KB")) == approx(0, 0, 0, 0, 0, 0)
    query = f"SELECT ?x WHERE {{ ?x <{DBO}country> ?c . ?x <{DBO}populationTotal> ?p }}"
    assert values(run(qald_test, answered(gold, sparql=query), "P2KB")) == approx(1, 1, 1, 1, 1, 1)


RE2KB_QUERIES = {
    "all": None,  # the gold query itself
    "no town": f"SELECT DISTINCT ?uri WHERE {{ ?uri {TYPE} <{DBO}City> . ?uri <{DBO}country> <{DBR}Germany> . "
    f"?uri <{DBO}populationTotal> ?population }}",
    "wrong type": f"SELECT DISTINCT ?uri WHERE {{ {{ ?uri {TYPE} <{DBO}City> }} UNION {{ ?uri {TYPE} "
    f"<http://example.org/WrongType> }} ?uri <{DBO}country> <{DBR}Germany> . ?uri <{DBO}populationTotal> ?p }}",
}


def test_re2kb_vectors(qald_test3: Dataset) -> None:
    gold = qald_test3.questions[0]
    all_four = run(qald_test3, answered(gold), "RE2KB")
    assert values(all_four) == approx(1, 1, 1, 1, 1, 1)
    no_town = run(qald_test3, answered(gold, sparql=RE2KB_QUERIES["no town"]), "RE2KB")
    assert values(no_town) == approx(1, 0.75, F(6, 7), 1, 0.75, F(6, 7))
    wrong = run(qald_test3, answered(gold, sparql=RE2KB_QUERIES["wrong type"]), "RE2KB")
    assert values(wrong) == approx(0.75, 0.75, 0.75, 0.75, 0.75, 0.75)


def test_strict_re2kb_has_the_same_triples_but_types_feed_ait2kb(qald_test3: Dataset) -> None:
    gold = qald_test3.questions[0]
    no_town = answered(gold, sparql=RE2KB_QUERIES["no town"])
    assert values(run(qald_test3, no_town, "RE2KB", "strict")) == approx(
        1, 0.75, F(6, 7), 1, 0.75, F(6, 7)
    )
    ait = run(qald_test3, no_town, "AIT2KB", "strict")
    assert values(ait) == approx(1, 0.5, F(2, 3), 1, 0.5, F(2, 3))
    # GERBIL counts rdf:type as a property, twice in the gold query (duplicates are kept)
    gerbil_p2kb = run(qald_test3, no_town, "P2KB", "gerbil")
    assert values(gerbil_p2kb) == approx(1, 0.75, F(6, 7), 1, 0.75, F(6, 7))
    strict_p2kb = run(qald_test3, no_town, "P2KB", "strict")
    assert strict_p2kb is not None and strict_p2kb.per_question[0].gold == (
        DBO + "country",
        DBO + "populationTotal",
    )


def test_c2kb_counts_properties_in_gerbil_only() -> None:
    gold = dataset(question("1", sparql=f"SELECT ?x WHERE {{ ?x <{DBO}author> <{DBR}Tolkien> }}"))
    system = answered(
        gold.questions[0], sparql=f"SELECT ?x WHERE {{ ?x <{DBO}writer> <{DBR}Tolkien> }}"
    )
    gerbil = run(gold, system, "C2KB")
    strict = run(gold, system, "C2KB", "strict")
    assert gerbil is not None and strict is not None
    assert gerbil.per_question[0].gold == (DBR + "Tolkien", DBO + "author")
    assert values(gerbil) == approx(0.5, 0.5, 0.5, 0.5, 0.5, 0.5)
    assert values(strict) == approx(1, 1, 1, 1, 1, 1)


def test_gerbil_c2kb_matches_any_two_emerging_entities() -> None:
    # dbp: properties are outside the well-known KBs, so any two of them match (GERBIL #455)
    gold = dataset(
        question("1", sparql="SELECT ?x WHERE { ?x <http://dbpedia.org/property/a> ?y }")
    )
    system = answered(
        gold.questions[0], sparql="SELECT ?x WHERE { ?x <http://dbpedia.org/property/b> ?y }"
    )
    gerbil = run(gold, system, "P2KB")
    assert gerbil is not None
    assert gerbil.value("micro_f1") == 1.0
    assert gerbil.value("ee_micro_f1") == 1.0 and gerbil.value("inkb_micro_f1") == 1.0
    assert gerbil.per_question[0].matches[0].rule == "emerging-entity"
    assert run(gold, system, "P2KB", "strict").value("micro_f1") == 0.0  # type: ignore[union-attr]


def test_empty_evaluation_avoider_keeps_c2kb() -> None:
    gold = dataset(question("1", [NamedNode(DBR + "A")]))
    result = evaluate(gold, {}, profile="gerbil")
    assert [r.experiment_type for r in result.results] == ["QA", "C2KB"]
    c2kb = result.get("C2KB")
    assert c2kb is not None and c2kb.value("macro_f1") == 1.0  # nothing to find, nothing found


def test_registry_and_unknown_types() -> None:
    assert set(SUBEXPERIMENTS) == {"QA", "C2KB", "P2KB", "RE2KB", "AType", "AIT2KB"}
    assert subexperiment("AType") is answer_type
    with pytest.raises(UnknownSubExperimentError, match="expected one of"):
        subexperiment("AT")


def test_a_sub_experiment_runs_on_cases_directly() -> None:
    gold = question("1", answer_type=AnswerType.DATE)
    cases = [QuestionCase("1", gold, answered(gold))]
    ctx = ScoringContext(PROFILES["strict"], Lookups(None, "en"))
    result = answer_type(cases, ctx)
    assert result is not None and result.value("micro_f1") == 1.0
    assert result.per_question[0].matches[0].gold == "date"

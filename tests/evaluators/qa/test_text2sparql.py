"""The TEXT2SPARQL profiles: the official 2025 evaluation to the last digit, and the corrected one.

The published evaluations of the three shared systems are reproduced exactly (every qname and
every average) from their result sets, and for CK25 from their queries run on the CK25 graph
wherever that graph gives their published result sets.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from pyoxigraph import Literal, NamedNode

from evaluators.formats import parse_file
from evaluators.knowledge.execution import StoreExecutor
from evaluators.knowledge.reference import reference_differences
from evaluators.model import (
    ORDER_MATTERS,
    AnswerSet,
    Dataset,
    Question,
    QuestionText,
    SourceFormat,
    Text2SparqlQuestion,
)
from evaluators.qa import text2sparql, text2sparql_file
from evaluators.qa.scoring import evaluate
from evaluators.qa.trec import ndcg, set_measures, trec_ranking
from tests.plugins.formats import T2sFiles

# (system, dataset, language of the tasks): the published result sets
RESULT_SETS = [("WSE", "ck25"), ("LACODAM", "ck25"), ("IIS-Q", "db25")]
# CK25 questions whose queries give, on the CK25 graph in Oxigraph, other rows than the
# organisers' engine did: LIMIT without an ORDER BY that decides (ties, or no ORDER BY at all)
LIMIT_TIES = {
    "WSE": {"ck25:46-en", "ck25:50-en"},  # ORDER BY an average / a count with ties, LIMIT 5 / 1
    "LACODAM": {
        "ck25:12-en",
        "ck25:34-en",
        "ck25:39-en",
        "ck25:40-en",
        "ck25:44-en",
    },  # LIMIT 200/10
    "IIS-Q": {"ck25:46-en", "ck25:50-en"},  # as WSE's
}


def _official(result: object, gold: Dataset) -> dict[str, object]:
    doc = text2sparql.evaluation_json(result, gold)  # type: ignore[arg-type]
    assert doc is not None
    return doc


@pytest.mark.parametrize(("system", "dataset"), RESULT_SETS)
def test_published_evaluations_from_the_result_sets(
    system: str, dataset: str, t2s_files: T2sFiles, ck25_gold: Dataset, db25_gold: Dataset
) -> None:
    gold = ck25_gold if dataset == "ck25" else db25_gold
    answers = parse_file(t2s_files.result(system, dataset, "system_result_set")).by_id()
    result = evaluate(gold, answers, profile="text2sparql", language="mul")
    published = json.loads(t2s_files.result(system, dataset, "eval").read_text())
    assert _official(result, gold) == published  # every qname, every average, every digit
    assert len(published) == len(gold.questions) + 1
    headline = result.results[0].value("set_f_ndcg")
    assert headline == published["average"]["set_F_ndcg"]


@pytest.mark.parametrize("system", ["WSE", "LACODAM", "IIS-Q"])
def test_published_ck25_evaluations_from_the_queries_on_the_ck25_graph(
    system: str, t2s_files: T2sFiles, ck25_gold: Dataset, ck25_executor: StoreExecutor
) -> None:
    answers = parse_file(t2s_files.result(system, "ck25", "answers")).by_id()
    executed = {}
    for qname, answer in answers.items():
        outcome = ck25_executor.run(answer.sparql or "")
        # a query that cannot run is an empty result, for the client as here
        found = outcome.answers if outcome.answers is not None else AnswerSet(has_bindings=True)
        executed[qname] = replace(answer, answers=(found,))
    result = evaluate(ck25_gold, executed, profile="text2sparql", language="mul")
    mine = _official(result, ck25_gold)
    published = json.loads(t2s_files.result(system, "ck25", "eval").read_text())
    differing = {q for q in published if q != "average" and mine[q] != published[q]}
    assert differing == LIMIT_TIES[system]
    assert len(published) - 1 - len(differing) >= 45


def test_reference_queries_on_the_ck25_graph_differ_on_seven_questions(
    ck25_gold: Dataset, ck25_executor: StoreExecutor
) -> None:
    found = reference_differences(ck25_gold, ck25_executor)
    assert sorted(found) == [
        "ck25:25-en", "ck25:29-en", "ck25:37-en", "ck25:41-en", "ck25:42-en", "ck25:46-en",
        "ck25:50-en",
    ]  # fmt: skip
    assert "xsd#int> is not supported" in found["ck25:37-en"].replace("Schema#", "xsd#")
    assert found["ck25:25-en"].startswith("the reference query gives another result here: 1 ")


@pytest.mark.parametrize(
    ("qrels", "run", "expected"),
    [
        ({"a": 1, "b": 1, "c": 1}, {"a": 1, "x": 1}, (0.5, 1 / 3, 0.4)),
        ({"a": 1}, {}, (0.0, 0.0, 0.0)),  # nothing retrieved
        ({}, {}, (0.0, 0.0, 0.0)),  # an empty reference counts, with zeros
        ({"true": 1}, {"true": 0}, (1.0, 1.0, 1.0)),  # a false answer to a true ASK
        ({"true": 0}, {"true": 0}, (0.0, 0.0, 0.0)),  # a false reference: nothing relevant
    ],
)
def test_trec_eval_set_measures(
    qrels: dict[str, int], run: dict[str, int], expected: tuple[float, float, float]
) -> None:
    got = set_measures(qrels, run)
    assert (got.precision, got.recall, got.f1) == pytest.approx(expected)


def test_ndcg_ranks_ties_by_item_descending_not_by_row_order() -> None:
    reference = {"a": 1, "b": 1, "c": 1}
    assert trec_ranking({"a": 1, "x": 1}) == ["x", "a"]
    assert ndcg(reference, trec_ranking({"a": 1, "x": 1})) == pytest.approx(0.29608, abs=5e-6)
    assert ndcg(reference, trec_ranking({"0": 1, "a": 1})) == pytest.approx(0.46928, abs=5e-6)


def _question(qid: str, answers: AnswerSet, ordered: bool = False) -> Question:
    parts = Text2SparqlQuestion("https://e.org/", "e", features=(ORDER_MATTERS,) if ordered else ())
    return Question(qid, (QuestionText("en", "q?"),), answers=(answers,), text2sparql=parts)


def test_the_corrected_profile_changes_exactly_its_rules() -> None:
    iri, same_text = NamedNode("http://e.org/a"), Literal("http://e.org/a")
    gold = Dataset(
        SourceFormat.TEXT2SPARQL,
        (
            _question("e:1-en", AnswerSet(boolean=True)),
            _question("e:2-en", AnswerSet((iri,), has_bindings=True)),
            _question("e:3-en", AnswerSet(has_bindings=True)),
            _question("e:4-en", AnswerSet((Literal("a"), Literal("b")), has_bindings=True), True),
        ),
    )
    answers = {
        "e:1-en": Question("e:1-en", answers=(AnswerSet(boolean=False),)),
        "e:2-en": Question("e:2-en", answers=(AnswerSet((same_text,), has_bindings=True),)),
        "e:3-en": Question("e:3-en", answers=(AnswerSet(has_bindings=True),)),
        "e:4-en": Question(
            "e:4-en", answers=(AnswerSet((Literal("a"), Literal("x")), has_bindings=True),)
        ),
    }
    official = evaluate(gold, answers, profile="text2sparql", language="en").results[0]
    corrected = evaluate(gold, answers, profile="text2sparql-corrected", language="en").results[0]
    heads = {s.question_id: s.value("set_f_ndcg") for s in official.per_question}
    fixed = {s.question_id: s.value("set_f_ndcg") for s in corrected.per_question}
    # a false answer to a true ASK: 1.0 officially; an IRI matched by a string; an empty answer
    # to an empty reference scores 0; the system's "x" is ranked before its "a" (string rule)
    late, early = 0.6309297535714575 / 1.6309297535714575, 1 / 1.6309297535714575
    assert heads == pytest.approx({"e:1-en": 1.0, "e:2-en": 1.0, "e:3-en": 0.0, "e:4-en": late})
    assert fixed == pytest.approx({"e:1-en": 0.0, "e:2-en": 0.0, "e:3-en": 1.0, "e:4-en": early})
    # the official headline averages n + 1 values (the mean nDCG once more), the corrected n
    assert official.value("set_f_ndcg") == pytest.approx((1 + 1 + 0 + late + late) / 5)
    assert corrected.value("set_f_ndcg") == pytest.approx((0 + 0 + 1 + early) / 4)


def test_gold_against_itself(ck25_gold: Dataset, db25_gold: Dataset) -> None:
    # officially, empty references (CK25 25 and 41; DB25 5, 42, 45, 95) and false ASK
    # references (CK25 33; DB25 93, 94) score 0 even for the reference itself; corrected: all 1
    for gold, zeros in ((ck25_gold, 3), (db25_gold, 12)):
        answers = {q.id: q for q in gold.questions}
        official = evaluate(gold, answers, profile="text2sparql", language="mul").results[0]
        corrected = evaluate(gold, answers, profile="text2sparql-corrected", language="mul")
        below = [s.question_id for s in official.per_question if s.value("set_f_ndcg") != 1.0]
        assert len(below) == zeros
        assert all(s.value("set_f_ndcg") == 1.0 for s in corrected.results[0].per_question)
        assert corrected.results[0].value("set_f_ndcg") == 1.0


def _changed(gold: Dataset, answers: dict[str, Question]) -> dict[str, int]:
    """How many questions each corrected rule alone changes (the per-question headline)."""
    out = {}
    for rule in ("booleans_by_value", "rdf_terms", "row_order", "empty_reference_right"):
        alone = text2sparql_file.Rules(**{rule: True})
        out[rule] = sum(
            1
            for q in gold.questions
            if q.answers is not None
            and text2sparql_file.headline_value(
                text2sparql.question_values(q, answers.get(q.id), text2sparql_file.Rules())[0]
            )
            != text2sparql_file.headline_value(
                text2sparql.question_values(q, answers.get(q.id), alone)[0]
            )
        )
    return out


def test_the_differences_table_of_docs_scoring(
    t2s_files: T2sFiles, ck25_gold: Dataset, db25_gold: Dataset, ck25_executor: StoreExecutor
) -> None:
    from evaluators.knowledge.reference import gold_from_kb

    def result_sets(system: str, dataset: str) -> dict[str, Question]:
        return parse_file(t2s_files.result(system, dataset, "system_result_set")).by_id()

    none = {"booleans_by_value": 0, "rdf_terms": 0, "row_order": 0, "empty_reference_right": 0}
    assert _changed(ck25_gold, result_sets("WSE", "ck25")) == {**none, "empty_reference_right": 1}
    assert _changed(ck25_gold, result_sets("LACODAM", "ck25")) == none
    assert _changed(db25_gold, result_sets("IIS-Q", "db25")) == {
        **none, "row_order": 1, "empty_reference_right": 4
    }  # fmt: skip
    on_graph, failures = gold_from_kb(replace(ck25_gold, questions=tuple(
        replace(q, answers=None) for q in ck25_gold.questions)), ck25_executor)  # fmt: skip
    assert sorted(f.question_id for f in failures) == ["ck25:37-en", "ck25:42-en"]
    for system in ("WSE", "LACODAM", "IIS-Q"):
        answers = parse_file(t2s_files.result(system, "ck25", "answers")).by_id()
        executed = {}
        for qname, answer in answers.items():
            outcome = ck25_executor.run(answer.sparql or "")
            found = outcome.answers if outcome.answers is not None else AnswerSet(has_bindings=True)
            executed[qname] = replace(answer, answers=(found,))
        assert _changed(on_graph, executed) == none, system

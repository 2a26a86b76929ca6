"""Helpers and fixtures for the evaluation-engine tests: hand-built gold datasets."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest
from pyoxigraph import Literal, NamedNode

from evaluators.model import (
    AnswerSet,
    AnswerType,
    AnswerValue,
    Dataset,
    Question,
    QuestionText,
    SourceFormat,
)
from evaluators.results import EvaluationResult
from vocab.standard import XSD

DBR = "http://dbpedia.org/resource/"
DBO = "http://dbpedia.org/ontology/"
# measures that are not scores in [0, 1]
NOT_SCORES = frozenset({"errors", "avg_millis", "questions", "processed", "tp", "fp", "fn"})


def question(
    qid: str,
    values: Sequence[AnswerValue] = (),
    *,
    boolean: bool | None = None,
    sparql: str | None = None,
    answer_type: AnswerType | None = None,
    languages: Sequence[str] = ("en",),
    **fields: object,
) -> Question:
    """Return a question with one answer set and texts in ``languages``."""
    texts = tuple(QuestionText(lang, f"question {qid} ({lang})") for lang in languages)
    answers = (AnswerSet(tuple(values), boolean),)
    label = answer_type.value if answer_type else None
    return Question(
        qid,
        texts,
        answer_type,
        label,
        sparql=sparql,
        answers=answers,
        **fields,  # type: ignore[arg-type]
    )


def answered(gold: Question, values: Sequence[AnswerValue] = (), **changes: object) -> Question:
    """Return a system answer to ``gold`` with other values (and other fields changed)."""
    boolean = changes.pop("boolean", None)
    return dataclasses.replace(gold, answers=(AnswerSet(tuple(values), boolean),), **changes)  # type: ignore[arg-type]


def dataset(*questions: Question) -> Dataset:
    """Return a QALD-JSON dataset of ``questions``."""
    return Dataset(SourceFormat.QALD_JSON, tuple(questions), source_id="hand-built")


def scores(result: EvaluationResult) -> list[tuple[str, str, float | None]]:
    """Return every (experiment type, measure, value) that is a score."""
    return [
        (r.experiment_type, m.measure, m.value)
        for r in result.results
        for m in r.measures
        if m.measure not in NOT_SCORES
    ]


def varied_gold() -> Dataset:
    """Return a gold dataset with every kind of answer, query and metadata."""
    prefixes = f"PREFIX dbo: <{DBO}> PREFIX dbr: <{DBR}> "
    return dataset(
        question(
            "1",
            [NamedNode(DBR + "Berlin"), NamedNode(DBR + "Hamburg")],
            sparql=prefixes + "SELECT ?c WHERE { ?c a dbo:City ; dbo:country dbr:Germany }",
            answer_type=AnswerType.RESOURCE,
            languages=("en", "de"),
            aggregation=False,
            hybrid=False,
        ),
        question(
            "2",
            [Literal("3520031", datatype=XSD.integer)],
            sparql=prefixes + "SELECT ?n WHERE { dbr:Berlin dbo:populationTotal ?n }",
            answer_type=AnswerType.NUMBER,
            aggregation=True,
        ),
        question(
            "3",
            [Literal("1961-08-04", datatype=XSD.date)],
            sparql=prefixes + "SELECT ?d WHERE { dbr:Barack_Obama dbo:birthDate ?d }",
            answer_type=AnswerType.DATE,
        ),
        question(
            "4",
            boolean=True,
            sparql=prefixes + "ASK { dbr:Berlin dbo:country/dbo:capital dbr:Berlin }",
            answer_type=AnswerType.BOOLEAN,
            languages=("en", "fr"),
        ),
        question(
            "5",
            [Literal("Bruce Wayne", language="en")],
            sparql=prefixes + "SELECT ?s WHERE { dbr:Batman ?p ?s }",
            answer_type=AnswerType.STRING,
            hybrid=True,
        ),
        question("6", [], sparql=prefixes + "SELECT ?x WHERE { ?x dbo:a dbr:Nothing }"),
        question("7", [NamedNode(DBR + "A")], answer_item_types=(DBO + "Place",)),
        question("8", [NamedNode(DBR + "B")], languages=("de",)),
    )


@pytest.fixture
def gold_dataset() -> Dataset:
    """A gold dataset with every kind of answer, query and metadata."""
    return varied_gold()

"""Datasets survive the trip to RDF and back; the catalog metadata says what was loaded."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pyoxigraph import Literal, NamedNode

from evaluators.datasets.rdf import VersionMeta, version_quads
from evaluators.datasets.rdf_read import questions_from_quads
from evaluators.model import (
    Annotation,
    AnswerSet,
    AnswerType,
    BioasqGold,
    Choices,
    Dataset,
    Execution,
    Question,
    QuestionText,
    Snippet,
    SourceFormat,
)
from store import graphs
from store.triplestore import TripleStore
from vocab.standard import XSD

BASE = "http://qabench.test"


def _meta(name: str = "demo", version: int = 1) -> VersionMeta:
    return VersionMeta(
        name=name,
        version=version,
        title="Demo",
        sha256="ab" * 32,
        byte_size=10,
        source="/tmp/demo.json",
        loaded_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        knowledge_base="dbpedia-2016-10",
    )


QUESTIONS = (
    Question(
        id="1",
        texts=(
            QuestionText("en", "Which rivers?", ("rivers", "Vienna")),
            QuestionText("hi_IN", "कौन सी नदियाँ?"),
        ),
        answer_type=AnswerType.RESOURCE,
        answer_type_label="resource",
        aggregation=False,
        only_dbo=True,
        hybrid=False,
        sparql="SELECT ?x WHERE { ?x a <http://e/River> }",
        answers=(
            AnswerSet((NamedNode("http://e/Danube"), NamedNode("http://e/Wien")), None, ("x",)),
        ),
        annotations=(Annotation("en", 0, 5, "Which", "http://e/W", "entity"),),
        answer_item_types=("http://e/River",),
        confidence=0.75,
    ),
    Question(
        id="2",
        texts=(QuestionText("en", "Is it?"),),
        answer_type=AnswerType.BOOLEAN,
        answers=(AnswerSet(boolean=False),),
    ),
    Question(
        id="3",
        texts=(QuestionText("en", "How many?"),),
        answer_type=AnswerType.NUMBER,
        answers=(
            AnswerSet(
                (
                    Literal("8", datatype=XSD.integer),
                    Literal("Wien", language="de"),
                    Literal("a b", datatype=XSD.anyURI),
                )
            ),
        ),
    ),
    Question(
        id="4",
        texts=(QuestionText("en", "No answers here"),),
        answers=None,
        pseudo_query='SELECT ?x WHERE { ?x text:"y" }',
        out_of_scope=True,
    ),
    Question(
        id="5",
        texts=(QuestionText("en", "What does BRCA1 do?"),),
        bioasq=BioasqGold(
            question_type="factoid",
            documents=("http://www.ncbi.nlm.nih.gov/pubmed/1",),
            snippets=(
                Snippet(
                    "http://www.ncbi.nlm.nih.gov/pubmed/1", "text", "abstract", "abstract", 3, 6
                ),
            ),
            concepts=("http://c/1",),
            entities=(("BRCA1", "breast cancer 1"), ("TP53",)),
            ideal_answers=("It repairs DNA.",),
        ),
    ),
)


def test_questions_survive_a_round_trip() -> None:
    dataset = Dataset(SourceFormat.QALD_JSON, QUESTIONS, source_id="demo")
    quads = version_quads(BASE, dataset, _meta())
    graph = graphs.dataset_graph(BASE, "demo", 1)
    back = questions_from_quads(q for q in quads if q.graph_name == graph)
    assert len(back) == len(QUESTIONS)
    for original, restored in zip(QUESTIONS, back, strict=True):
        assert restored.id == original.id
        assert restored.answer_type == original.answer_type
        assert restored.sparql == original.sparql
        assert restored.has_answers == original.has_answers
        assert restored.out_of_scope == original.out_of_scope
        assert restored.annotations == original.annotations
        assert restored.bioasq == original.bioasq
        for a, b in zip(original.answers or (), restored.answers or (), strict=True):
            assert set(a.values) == set(b.values)
            assert a.boolean == b.boolean
    assert back[0].text("hi_IN") == "कौन सी नदियाँ?"
    assert back[0].texts[0].keywords == ("rivers", "Vienna")
    assert back[0].confidence == 0.75


def test_catalog_metadata_is_queryable(store: TripleStore) -> None:
    dataset = Dataset(SourceFormat.QALD_JSON, QUESTIONS)
    store.add(version_quads(BASE, dataset, _meta()))
    rows = store.select(
        """PREFIX qab: <https://w3id.org/qabench/vocab#>
        SELECT ?count ?label WHERE { ?v qab:questionCount ?count ;
          qab:answerTypeCount [ qab:count ?n ; <http://www.w3.org/2000/01/rdf-schema#label> ?label ] .
          FILTER(?label = "resource") }"""
    )
    assert [(r["count"].value, r["label"].value) for r in rows] == [("5", "resource")]
    # The tags as the file writes them; DCAT-AP's languages as EU authority IRIs
    tags = store.select(
        "SELECT ?l WHERE { ?v a <https://w3id.org/qabench/vocab#DatasetVersion> ;"
        " <https://w3id.org/qabench/vocab#inLanguage> ?l }"
    )
    assert sorted(r["l"].value for r in tags) == ["en", "hi_IN"]
    langs = store.select("SELECT ?l WHERE { ?v <http://purl.org/dc/terms/language> ?l }")
    eu = "http://publications.europa.eu/resource/authority/language/"
    assert sorted(r["l"].value for r in langs) == [eu + "ENG", eu + "HIN"]


def test_every_quad_goes_to_the_catalog_or_the_version_graph() -> None:
    quads = version_quads(BASE, Dataset(SourceFormat.QALD_JSON, QUESTIONS), _meta())
    allowed = {graphs.catalog_graph(BASE), graphs.dataset_graph(BASE, "demo", 1)}
    assert {q.graph_name for q in quads} == allowed


@pytest.mark.parametrize("tag", ["x y", "", "  "])
def test_invalid_language_tags_do_not_break_a_load(tag: str) -> None:
    q = Question(id="1", texts=(QuestionText(tag, "text"),), answers=())
    quads = version_quads(BASE, Dataset(SourceFormat.QALD_JSON, (q,)), _meta())
    back = questions_from_quads(quads)
    assert back[0].texts[0].text == "text"


def test_a_boolean_next_to_bindings_survives_rdf_and_qald_json() -> None:
    from evaluators.formats import parse_bytes
    from evaluators.formats.qald_json_writer import dataset_json

    both = AnswerSet((Literal("x"),), True, ("v",), has_bindings=True)
    empty = AnswerSet((), True, ("v",), has_bindings=True)
    plain = AnswerSet(boolean=False)
    q = Question("1", (QuestionText("en", "Q?"),), answers=(both, empty, plain))
    dataset = Dataset(SourceFormat.QALD_JSON, (q,))
    store = TripleStore.in_memory()
    store.add(version_quads(BASE, dataset, _meta()))
    (back,) = questions_from_quads(store.quads(graph=graphs.dataset_graph(BASE, "demo", 1)))
    assert set(back.answers or ()) == {both, empty, plain}
    (again,) = parse_bytes(dataset_json(dataset), source="x.json").questions
    assert again.answers == (both, empty, plain)


def test_options_and_recorded_executions_survive_a_round_trip() -> None:
    # issue 39: MIRAGE's options (with PubMed ids) and a recorded execution (SciQA)
    choices = Choices("pubmedqa", (("A", "yes"), ("B", "no"), ("C", "maybe")), ("9", "12377809"))
    questions = (
        Question("pubmedqa:1", (QuestionText("en", "Does it?"),), choices=choices),
        Question("AQ1", execution=Execution("SUCCESS", '?x\n"1"^^<http://x/int>')),
        Question("AQ2", execution=Execution("NULL")),
    )
    dataset = Dataset(SourceFormat.MIRAGE, questions)
    quads = version_quads(BASE, dataset, _meta())
    graph = graphs.dataset_graph(BASE, "demo", 1)
    back = questions_from_quads(q for q in quads if q.graph_name == graph)
    assert [(q.choices, q.execution) for q in back] == [(q.choices, q.execution) for q in questions]

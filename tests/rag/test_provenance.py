"""A run's provenance: quads in the rag graph of a real store, checked with SPARQL, and read back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

from pyoxigraph import Literal

from rag.answering.citations import AnswerSentence, CitedAnswer
from rag.answering.exact import ExactAnswer
from rag.answering.snippets import Snippet
from rag.models.generators import ExtractiveGenerator, GeneratorInfo
from rag.pipeline import RagSystem
from rag.provenance import run_from_quads, run_quads
from rag.run import RagRun, RetrievedDocument, StageTiming
from store import graphs
from store.triplestore import TripleStore
from vocab import iris

BASE = "http://qabench.test"


def sample_run() -> RagRun:
    text = "Aspirin lowered the rate of recurrent myocardial infarction."
    snippet = Snippet(
        "http://www.ncbi.nlm.nih.gov/pubmed/1000001",
        text,
        "abstract",
        "abstract",
        0,
        len(text) - 1,
        "1000001",
        1,
        0.75,
        0.75,
    )
    return RagRun(
        run_id="20240101120000-abcdef",
        question="Does aspirin help after a heart attack?",
        language="en",
        question_type="list",
        expanded_query='aspirin AND "heart attack"',
        query_edited=True,
        query_run="aspirin heart attack",
        fallback="broadened",
        documents=(
            RetrievedDocument(1, "1000001", 12.5, "Aspirin after infarction."),
            RetrievedDocument(2, "http://dbpedia.org/resource/Aspirin", 3.25, "Aspirin"),
        ),
        snippets=(snippet,),
        short_answer="Yes, it helps.",
        cited_answer=CitedAnswer(
            (
                AnswerSentence("It helps.", ("1000001",), ("99999999",)),
                AnswerSentence("Uncited claim."),
            )
        ),
        exact_answer=ExactAnswer("list", entities=(("aspirin", "acetylsalicylic acid"), ("ASA",))),
        generator=GeneratorInfo("openai-http", "stub", (("endpoint", "http://x/v1"),)),
        settings=(("snippets", "10"), ("top_k", "50")),
        timings=(
            StageTiming("expand", 0.0, "skipped"),
            StageTiming("retrieve", 12.5, "2 documents"),
        ),
        warnings=("b warning", "a warning"),
        started=datetime(2024, 1, 1, 12, 0, tzinfo=UTC),
        finished=datetime(2024, 1, 1, 12, 0, 1, tzinfo=UTC),
    )


def test_run_round_trips_through_its_quads() -> None:
    run = sample_run()
    back = run_from_quads(iris.rag_run_iri(BASE, run.run_id), run_quads(BASE, run))
    assert back == replace(run, warnings=("a warning", "b warning"))


def test_every_quad_is_in_the_rag_graph() -> None:
    quads = run_quads(BASE, sample_run())
    assert {q.graph_name for q in quads} == {graphs.rag_graph(BASE)}
    assert len(quads) == len(set(quads))


def test_stored_run_answers_sparql_about_documents_citations_and_timings(
    store: TripleStore,
) -> None:
    run = sample_run()
    store.add(run_quads(BASE, run))
    node = iris.rag_run_iri(BASE, run.run_id)
    prefix = (
        "PREFIX qab: <https://w3id.org/qabench/vocab#> PREFIX dct: <http://purl.org/dc/terms/> "
    )
    rows = store.select(
        prefix
        + "SELECT ?run ?pmid ?score WHERE { ?run qab:retrievedDocument ?d . ?d qab:pmid ?pmid ; "
        "qab:score ?score ; qab:rank ?rank } ORDER BY ?rank",
        run=node,
    )
    assert [(r["pmid"].value, float(r["score"].value)) for r in rows] == [
        ("1000001", 12.5),
        ("http://dbpedia.org/resource/Aspirin", 3.25),
    ]
    assert store.ask(
        prefix + "ASK { ?run qab:queryEdited true ; qab:expandedQuery ?q ; qab:sentence ?s . "
        "?s qab:flagged true ; qab:citation ?c . ?c qab:pmid '99999999' ; qab:flagged true }",
        run=node,
        q=Literal('aspirin AND "heart attack"'),
    )
    assert not store.ask(
        prefix + "ASK { ?run qab:sentence ?s . ?s qab:cites '99999999' }", run=node
    )
    millis = store.select(
        prefix + "SELECT ?run ?ms WHERE { ?run dct:hasPart ?st . ?st qab:stageMillis ?ms ; "
        "<http://www.w3.org/2000/01/rdf-schema#label> 'retrieve' }",
        run=node,
    )
    assert [float(r["ms"].value) for r in millis] == [12.5]


def test_a_real_run_is_stored_and_read_back(
    make_rag_system: Callable[..., RagSystem], store: TripleStore
) -> None:
    run = make_rag_system(ExtractiveGenerator()).ask("Does famotidine cause delirium?")
    store.add(run_quads(BASE, run))
    node = iris.rag_run_iri(BASE, run.run_id)
    back = run_from_quads(node, store.quads(graph=graphs.rag_graph(BASE)))
    assert back is not None
    assert back.snippets == run.snippets and back.cited_answer == run.cited_answer
    assert back.documents == run.documents and back.timings == run.timings
    assert run_from_quads(iris.rag_run_iri(BASE, "nope"), store.quads()) is None

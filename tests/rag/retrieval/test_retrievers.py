"""Retrieval through the ``Retriever`` protocol: ranking, fallback chain and reporting."""

from __future__ import annotations

import pytest

from rag.errors import QuerySyntaxError
from rag.retrieval.index import LiteratureIndex
from rag.retrieval.retrievers import Fallback, Retriever, WhooshRetriever, question_query


@pytest.fixture
def retriever(rag_index: LiteratureIndex) -> WhooshRetriever:
    return WhooshRetriever(rag_index)


def test_whoosh_retriever_satisfies_the_protocol(retriever: WhooshRetriever) -> None:
    engine: Retriever = retriever
    assert engine.tokenize("Trials of Aspirin") == ["trial", "aspirin"]


def test_query_that_matches_runs_as_given(retriever: WhooshRetriever) -> None:
    result = retriever.search('"heart attack" AND clopidogrel', 10)
    assert result.fallback is Fallback.NONE
    assert result.query_run == '"heart attack" AND clopidogrel'
    assert result.attempts == ('"heart attack" AND clopidogrel',)
    assert [d.pmid for d in result.documents] == ["1000002"]
    assert result.documents[0].rank == 1


def test_zero_hits_fall_back_to_the_broadened_query(retriever: WhooshRetriever) -> None:
    result = retriever.search('"aspirin famotidine" AND +zebrafish', 10)
    assert result.fallback is Fallback.BROADENED
    assert result.query_run == "aspirin famotidine zebrafish"
    assert result.attempts == (
        '"aspirin famotidine" AND +zebrafish',
        "aspirin famotidine zebrafish",
    )
    assert {"1000001", "1000002", "1000005"} <= {d.pmid for d in result.documents}


def test_then_to_the_content_words_of_the_question(retriever: WhooshRetriever) -> None:
    result = retriever.search(
        "title:zebrafish AND abstract:axolotl",
        10,
        question="Which drugs cause delirium in older adults?",
    )
    assert result.fallback is Fallback.CONTENT_WORDS
    assert result.query_run == "drugs cause delirium older adults"
    assert len(result.attempts) == 3
    assert result.documents[0].pmid == "1000005"


def test_nothing_found_reports_every_attempt(retriever: WhooshRetriever) -> None:
    result = retriever.search('"zebrafish axolotl"', 10, question="zebrafish axolotl?")
    assert result.is_empty
    # the content-words step equals the broadened query, so it is not run twice
    assert result.attempts == ('"zebrafish axolotl"', "zebrafish axolotl")
    assert result.fallback is Fallback.BROADENED
    assert result.query_run == "zebrafish axolotl"


def test_malformed_query_raises_and_never_falls_back(retriever: WhooshRetriever) -> None:
    with pytest.raises(QuerySyntaxError) as caught:
        retriever.search('"heart attack AND aspirin', 10, question="heart attack")
    assert caught.value.position == 0


def test_k_limits_and_ranks_are_consecutive(retriever: WhooshRetriever) -> None:
    result = retriever.search(question_query("Do retinal cells change during pregnancy?"), 7)
    assert [d.rank for d in result.documents] == [1, 2, 3, 4, 5, 6, 7]
    scores = [d.score for d in result.documents]
    assert scores == sorted(scores, reverse=True)
    with pytest.raises(ValueError, match="at least 1"):
        retriever.search("heart", 0)


def test_question_query_is_an_or_of_content_words() -> None:
    assert (
        question_query("Is aspirin (ASA) safe after a heart-attack?")
        == "aspirin asa safe after heart attack"
    )


def test_natural_questions_find_their_article(retriever: WhooshRetriever) -> None:
    cases = {
        "Does aspirin prevent a second myocardial infarction?": "1000001",
        "Can famotidine cause delirium?": "1000005",
        "What protects newborns against hepatitis B?": "1000007",
        "Which drug reduces anthracycline cardiotoxicity?": "1000006",
    }
    for question, pmid in cases.items():
        result = retriever.search(question_query(question), 5, question=question)
        assert result.documents[0].pmid == pmid, question
    assert len(cases) == 4

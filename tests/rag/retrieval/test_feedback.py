"""Query expansion without a model: pseudo-relevance feedback (RM3), shown and editable."""

from __future__ import annotations

from collections.abc import Callable

from rag.models.generators import ExtractiveGenerator
from rag.pipeline import RagSystem
from rag.retrieval.feedback import Feedback, feedback_expansion
from rag.retrieval.index import QUERY_FIELDS, LiteratureIndex
from rag.retrieval.query import check_query
from rag.retrieval.retrievers import WhooshRetriever, question_query
from rag.run import RagSettings

QUESTION = "Does aspirin reduce recurrent myocardial infarction?"


def test_feedback_adds_boosted_words_of_the_best_hits(rag_index: LiteratureIndex) -> None:
    retriever = WhooshRetriever(rag_index)
    expansion = feedback_expansion(QUESTION, retriever, Feedback(documents=3, terms=4))
    base = question_query(QUESTION)
    assert expansion.source == "feedback" and expansion.query.startswith(base + " ")
    added = expansion.query[len(base) :].split()
    assert 1 <= len(added) <= 4
    words = [a.split("^")[0] for a in added]
    boosts = [float(a.split("^")[1]) for a in added]
    assert boosts[0] == 0.3 and all(0 < b <= 0.3 for b in boosts)  # the heaviest word: 0.3
    assert not {w.lower() for w in words} & set(base.split())  # only new words
    best = retriever.search(base, 3, question=QUESTION).documents
    text = " ".join(f"{d.article.title} {d.article.abstract}".lower() for d in best)
    assert all(w.lower() in text for w in words)  # taken from the best hits
    check_query(expansion.query, QUERY_FIELDS)  # a query the user can edit and run again
    assert rag_index.search(expansion.query, 5)  # scored (over the compiled postings)


def test_a_question_that_finds_nothing_keeps_its_words(rag_index: LiteratureIndex) -> None:
    expansion = feedback_expansion("Does zorblaxine cure quuxitis?", WhooshRetriever(rag_index))
    assert expansion.source == "identity" and expansion.query == "zorblaxine cure quuxitis"


def test_the_pipeline_shows_the_feedback_query_and_searches_it_again(
    make_rag_system: Callable[..., RagSystem],
) -> None:
    system = make_rag_system(ExtractiveGenerator(), RagSettings(query_feedback=True))
    run = system.ask(QUESTION)
    assert "^" in run.expanded_query and run.query_run == run.expanded_query
    assert "pseudo-relevance feedback" in run.timings[0].note
    again = system.ask(QUESTION, query=run.expanded_query, edited=False)
    assert [d.pmid for d in again.documents] == [d.pmid for d in run.documents]
    plain = make_rag_system(ExtractiveGenerator()).ask(QUESTION)  # off by default
    assert plain.expanded_query == question_query(QUESTION)

"""Sentence splitting, lexical snippet scoring and BioASQ offsets (inclusive end)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag.answering.snippets import (
    Snippet,
    bioasq_snippet,
    bm25_scores,
    document_url,
    extract_snippets,
)
from rag.corpus.article import Article
from rag.corpus.reader import read_corpus
from rag.retrieval.index import LiteratureIndex, open_index
from rag.retrieval.retrievers import RankedDocument, WhooshRetriever, question_query
from rag.text.sentences import sentence_spans

SPLITS = [
    (
        "We used e.g. aspirin (Fig. 2). It worked in 3.5% of cases. Next?",
        ["We used e.g. aspirin (Fig. 2).", "It worked in 3.5% of cases.", "Next?"],
    ),
    (
        "Smith et al. (2005) saw X. The lace plant (A. madagascariensis) grew.",
        ["Smith et al. (2005) saw X.", "The lace plant (A. madagascariensis) grew."],
    ),
    (
        "Mothers had hepatitis B. The vaccine worked. By J. R. Smith. End",
        ["Mothers had hepatitis B.", "The vaccine worked.", "By J. R. Smith.", "End"],
    ),
    ("p < .05 vs. baseline. No. 5 was best.", ["p < .05 vs. baseline.", "No. 5 was best."]),
    ('He said "stop." Then (it ended.) Fine!', ['He said "stop."', "Then (it ended.)", "Fine!"]),
    (
        "Café macules… were rare. Ünusual cells stained.",
        ["Café macules… were rare.", "Ünusual cells stained."],
    ),
    ("Levels rose. the lowercase start continues", ["Levels rose. the lowercase start continues"]),
    (
        "First paragraph without stop\n\n  Second paragraph",
        ["First paragraph without stop", "Second paragraph"],
    ),
    ("  \n ", []),
]


@pytest.mark.parametrize(("text", "sentences"), SPLITS)
def test_sentence_splitter_cases(text: str, sentences: list[str]) -> None:
    assert [text[b:e] for b, e in sentence_spans(text)] == sentences


def test_split_table_size() -> None:
    assert len(SPLITS) == 9


@given(st.text(alphabet=st.sampled_from(list('ab .?!\n"()Éé1')), max_size=60))
def test_spans_are_trimmed_ordered_and_cover_all_text(text: str) -> None:
    spans = sentence_spans(text)
    previous = 0
    for begin, end in spans:
        assert previous <= begin < end <= len(text)
        assert not text[begin].isspace() and not text[end - 1].isspace()
        assert not text[previous:begin].strip()
        previous = end
    assert not text[previous:].strip()


def test_bm25_scores_match_a_hand_computation() -> None:
    sentences = [["aspirin", "heart"], ["heart"], ["lung", "lung", "lung", "lung"]]
    scores = bm25_scores(["aspirin", "heart", "aspirin"], sentences)
    average = 7 / 3
    idf_aspirin = math.log(1 + (3 - 1 + 0.5) / 1.5)
    idf_heart = math.log(1 + (3 - 2 + 0.5) / 2.5)

    def part(idf: float, length: int) -> float:
        return idf * 2.2 / (1 + 1.2 * (0.25 + 0.75 * length / average))

    assert scores[0] == pytest.approx(part(idf_aspirin, 2) + part(idf_heart, 2))
    assert scores[1] == pytest.approx(part(idf_heart, 1))
    assert scores[2] == 0.0
    assert bm25_scores(["x"], []) == []


def test_document_urls() -> None:
    assert document_url("123") == "http://www.ncbi.nlm.nih.gov/pubmed/123"
    assert document_url("http://dbpedia.org/resource/X") == "http://dbpedia.org/resource/X"


def _snippets(index: LiteratureIndex, question: str, limit: int = 10) -> tuple[Snippet, ...]:
    retriever = WhooshRetriever(index)
    result = retriever.search(question_query(question), 50, question=question)
    return extract_snippets(question, result.documents, tokenize=retriever.tokenize, limit=limit)


def _assert_offsets(index: LiteratureIndex, snippets: tuple[Snippet, ...]) -> None:
    for snippet in snippets:
        article = index.document(snippet.pmid)
        assert article is not None
        section = article.title if snippet.begin_section == "title" else article.abstract
        assert snippet.begin_section == snippet.end_section
        assert section[snippet.offset_begin : snippet.offset_end + 1] == snippet.text
        assert snippet.document == document_url(snippet.pmid)


def test_best_snippet_answers_the_question(rag_index: LiteratureIndex) -> None:
    snippets = _snippets(rag_index, "Which drug reduced the risk of cardiotoxicity?")
    assert snippets[0].pmid == "1000006"
    assert snippets[0].text == "Dexrazoxane reduced the risk."
    assert snippets[0].score == 1.0
    assert [s.score for s in snippets] == sorted((s.score for s in snippets), reverse=True)
    _assert_offsets(rag_index, snippets)


def test_offsets_hold_for_non_ascii_text(rag_index: LiteratureIndex) -> None:
    snippets = _snippets(rag_index, "Did Müller cells stain for β-catenin in café-au-lait macules?")
    assert {s.pmid for s in snippets} >= {"1000004"}
    texts = {s.text for s in snippets}
    assert "The Müller cells stained for β-catenin in all biopsies." in texts
    assert "Café-au-lait macules in neurofibromatosis type 1." in texts
    _assert_offsets(rag_index, snippets)
    title = next(s for s in snippets if s.begin_section == "title" and s.pmid == "1000004")
    assert (title.offset_begin, title.offset_end) == (0, 48)  # 49 code points


def test_bioasq_json_uses_inclusive_end(rag_index: LiteratureIndex) -> None:
    snippet = _snippets(rag_index, "Which drug reduced the risk of cardiotoxicity?")[0]
    assert bioasq_snippet(snippet) == {
        "document": "http://www.ncbi.nlm.nih.gov/pubmed/1000006",
        "text": "Dexrazoxane reduced the risk.",
        "beginSection": "abstract",
        "endSection": "abstract",
        "offsetInBeginSection": snippet.offset_begin,
        "offsetInEndSection": snippet.offset_begin + len(snippet.text) - 1,
    }


def test_extraction_is_deterministic_and_limited(rag_index: LiteratureIndex) -> None:
    first = _snippets(rag_index, "Did retinal cells improve during pregnancy?", limit=7)
    assert len(first) == 7
    assert _snippets(rag_index, "Did retinal cells improve during pregnancy?", limit=7) == first
    assert all(s.dense_score is None for s in first)


def test_document_prior_puts_sentences_of_better_documents_first() -> None:
    # the second document's sentence matches the question better, the first document ranks higher
    docs = [
        RankedDocument(1, 10.0, Article("1", "", "Aspirin was given. Nothing else happened.")),
        RankedDocument(2, 2.0, Article("2", "", "Aspirin reduced stroke risk in trials.")),
    ]
    question = "Does aspirin reduce stroke risk?"

    def order(weight: float) -> list[str]:
        found = extract_snippets(
            question, docs, tokenize=lambda t: t.lower().split(), document_weight=weight
        )
        return [s.text for s in found]

    assert order(0.0) == ["Aspirin reduced stroke risk in trials.", "Aspirin was given."]
    assert order(0.8) == ["Aspirin was given.", "Aspirin reduced stroke risk in trials."]
    # a sentence without a question word stays out, whatever its document's rank
    assert "Nothing else happened." not in order(1.0)


def test_offsets_hold_on_real_abstracts(shared_data: Path, tmp_path: Path) -> None:
    corpus = shared_data / "pubmed/cryptoradon_biomedRelExt/CDR_Data/CDR.Corpus.v010516"
    with open_index(tmp_path / "ix", create=True) as index:
        index.add(read_corpus(corpus / "CDR_TestSet.PubTator.titles_abstracts.tsv"))
        questions = [
            "Does famotidine cause delirium in elderly patients?",
            "Which drugs induce hypotension in rats?",
            "Is lithium associated with tricuspid regurgitation?",
        ]
        checked = 0
        for question in questions:
            snippets = _snippets(index, question, limit=50)
            _assert_offsets(index, snippets)
            checked += len(snippets)
        assert checked >= 100

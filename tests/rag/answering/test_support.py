"""Citation support: a cited sentence is scored against the text of the document it cites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.answering.citations import AnswerSentence, CitedAnswer, check_citations
from rag.answering.support import lexical_support, support_rate, support_scores
from rag.corpus.article import Article
from rag.retrieval.index import make_tokenizer

TOKENIZE = make_tokenizer()
BREAST = Article(
    "111",
    "Anastrozole versus tamoxifen in postmenopausal breast cancer.",
    "Anastrozole improved disease-free survival in women with early breast cancer. "
    "Joint pain was more frequent with anastrozole.",
)
DIABETES = Article(
    "222",
    "Metformin in type 2 diabetes.",
    "Metformin lowered HbA1c in adults with type 2 diabetes. Weight did not change.",
)
DOCS = {a.pmid: a for a in (BREAST, DIABETES)}

CASES = [
    # (sentence, cited PMID, supported?)
    ("Anastrozole improved disease-free survival in early breast cancer.", "111", True),
    ("Metformin lowered HbA1c in type 2 diabetes.", "222", True),
    ("Anastrozole cures type 2 diabetes.", "111", False),  # the PMID was shown: whitelist passes
    ("Metformin improved survival in breast cancer.", "222", False),
    ("Joint pain was more frequent with anastrozole.", "111", True),
    # words overlap, but what is said differs: negation, direction, number, name
    ("Anastrozole did not improve disease-free survival in early breast cancer.", "111", False),
    ("Anastrozole reduced disease-free survival in women with early breast cancer.", "111", False),
    ("Metformin lowered HbA1c in 2 adults with type 2 diabetes.", "222", True),
    ("Metformin lowered HbA1c in 12 adults with type 2 diabetes.", "222", False),
    ("Tamoxifen improved disease-free survival in women with early breast cancer.", "111", False),
    ("Their weight did not change.", "222", True),
    ("Their weight changed.", "222", False),
    # the stated answer is checked against the evidence of the cited text
    ("Yes, metformin does lower HbA1c in type 2 diabetes.", "222", True),
    ("No, metformin does not lower HbA1c in type 2 diabetes.", "222", False),
]


@pytest.mark.parametrize(("sentence", "pmid", "supported"), CASES)
def test_a_sentence_is_supported_only_by_a_document_that_says_it(
    sentence: str, pmid: str, supported: bool
) -> None:
    answer = check_citations(f"{sentence} [{pmid}]", set(DOCS))
    assert answer.sentences[0].citations == (pmid,)  # the whitelist alone would accept it
    (checked,) = support_scores(answer, DOCS, TOKENIZE).sentences
    assert checked.supported is supported
    assert checked.support is not None and 0.0 <= checked.support <= 1.0


def test_cases_ran() -> None:
    assert len(CASES) == 14


def test_copied_sentence_scores_one_and_support_is_the_best_cited_document() -> None:
    copied = "Metformin lowered HbA1c in adults with type 2 diabetes."
    assert lexical_support(copied, DIABETES, TOKENIZE) == 1.0
    both = CitedAnswer((AnswerSentence(copied, ("111", "222")),))
    (checked,) = support_scores(both, DOCS, TOKENIZE).sentences
    assert checked.support == 1.0 and checked.supported


def test_uncited_sentences_are_not_scored_and_the_rate_counts_scored_ones() -> None:
    answer = CitedAnswer(
        (
            AnswerSentence("An uncited claim."),
            AnswerSentence("Anastrozole cures type 2 diabetes.", ("111",)),
            AnswerSentence("Weight did not change with metformin.", ("222",)),
        )
    )
    checked = support_scores(answer, DOCS, TOKENIZE)
    assert [s.supported for s in checked.sentences] == [None, False, True]
    assert support_rate([checked]) == 0.5
    assert support_rate([CitedAnswer()]) is None
    assert "(not supported by the cited abstract)" in checked.text


def test_false_claims_made_from_pubmed_sentences_are_caught(shared_data: Path) -> None:
    """Sentences of PubMedQA abstracts cite their article (true); made false they are caught."""
    from rag.answering import perturb
    from rag.text.sentences import sentence_spans

    records = json.loads((shared_data / "pubmed/pubmedqa_pubmedqa/data/ori_pqal.json").read_bytes())
    pmids = sorted(records)[:80]
    docs = {p: Article(p, "", " ".join(records[p]["CONTEXTS"])) for p in pmids}
    counts: dict[str, list[int]] = {}
    for index, pmid in enumerate(pmids):
        text = docs[pmid].abstract
        other = docs[pmids[(index + 1) % len(pmids)]]
        names = [n for n in perturb.names_in(other.abstract) if n.lower() not in text.lower()]
        for begin, end in sentence_spans(text)[:2]:
            claim = text[begin:end]
            variants = {
                "true": (claim, pmid),
                "number": (perturb.change_number(claim), pmid),
                "negation": (perturb.flip_negation(claim), pmid),
                "entity": (perturb.swap_entity(claim, names), pmid),
                "unrelated": (claim, other.pmid),
            }
            for kind, (sentence, cited) in variants.items():
                if sentence is None:
                    continue
                answer = CitedAnswer((AnswerSentence(sentence, (cited,)),))
                (checked,) = support_scores(answer, docs, TOKENIZE).sentences
                fragment = kind == "true" and len(sentence.split()) < 3
                slot = counts.setdefault("fragment" if fragment else kind, [0, 0])
                slot[0] += checked.supported is False
                slot[1] += 1
    # a copied sentence is never flagged, unless it is a fragment of fewer than three words
    # ("Methods.", "Retrospective study."), which states no claim and is never supported
    fragments = counts.get("fragment", [0, 0])
    assert fragments[0] == fragments[1]
    assert counts["true"] == [0, 160 - fragments[1]]
    assert counts["true"][1] >= 150
    for kind in ("number", "negation", "entity", "unrelated"):
        caught, made = counts[kind]
        assert made >= 25 and caught / made >= 0.8, (kind, caught, made)

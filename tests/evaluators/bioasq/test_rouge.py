"""ROUGE-2 and ROUGE-SU4: hand-computed cases and properties."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluators.bioasq.rouge import (
    bigrams,
    ideal_scores,
    rouge_2,
    rouge_su4,
    skip_bigrams_and_unigrams,
    tokens,
)

F = Fraction


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("IL-6/TNF-\u03b1 levels", ("il", "6", "tnf", "level")),  # non a-z0-9 characters separate
        ("The genes", ("the", "gene")),
        ("was  is", ("was", "is")),  # three letters or fewer are not stemmed
        ("", ()),
    ],
)
def test_tokens_table(text: str, expected: tuple[str, ...]) -> None:
    assert tokens(text) == expected


def test_tokens_without_stemming_only_lowercase_and_split() -> None:
    assert tokens("Mutations, GENES!", stemming=False) == ("mutations", "genes")


# (candidate, reference, recall, precision) without stemming
ROUGE_2_ROWS = [
    ("the cat sat on the mat", "the cat lay on the mat", F(3, 5), F(3, 5)),
    ("a a a", "a a", F(1, 1), F(1, 2)),  # clipped: the reference has ("a", "a") once
    ("a b c d", "a b", F(1, 1), F(1, 3)),
    ("x y", "a b", F(0), F(0)),
    ("", "a b", F(0), F(0)),
    ("a b", "a", F(0), F(0)),  # a one-token reference has no bigram
]


@pytest.mark.parametrize(("candidate", "reference", "recall", "precision"), ROUGE_2_ROWS)
def test_rouge_2_table(
    candidate: str, reference: str, recall: Fraction, precision: Fraction
) -> None:
    score = rouge_2(candidate, reference, stemming=False)
    assert score.recall == pytest.approx(float(recall))
    assert score.precision == pytest.approx(float(precision))
    total = recall + precision
    f1 = 2 * recall * precision / total if total else 0
    assert score.f1 == pytest.approx(float(f1))


def test_skip_bigrams_reach_four_tokens_apart() -> None:
    grams = skip_bigrams_and_unigrams(list("abcdefg"))
    assert sum(grams.values()) == 7 + (5 + 5 + 4 + 3 + 2 + 1)
    assert grams[("a", "f")] == 1  # four tokens in between
    assert ("a", "g") not in grams  # five in between
    assert grams[("d",)] == 1


# (candidate, reference, recall, precision) without stemming
ROUGE_SU4_ROWS = [
    ("w1 w2 w3", "w1 w3", F(3, 3), F(3, 6)),  # shared: w1, w3, (w1, w3)
    ("a b", "b a", F(2, 3), F(2, 3)),  # unigrams only: order matters for pairs
    ("a b c d e f", "a f", F(3, 3), F(3, 6 + 15)),  # six unigrams, 15 pairs
]


@pytest.mark.parametrize(("candidate", "reference", "recall", "precision"), ROUGE_SU4_ROWS)
def test_rouge_su4_table(
    candidate: str, reference: str, recall: Fraction, precision: Fraction
) -> None:
    score = rouge_su4(candidate, reference, stemming=False)
    assert score.recall == pytest.approx(float(recall))
    assert score.precision == pytest.approx(float(precision))


def test_stemming_lets_word_forms_match() -> None:
    assert rouge_2("the genes", "the gene").recall == 1.0
    assert rouge_2("the genes", "the gene", stemming=False).recall == 0.0


def test_multiple_references_take_each_maximum_separately() -> None:
    # "a b": R 1, P 1/2, F1 2/3; "a b c d": R 2/3, P 1, F1 4/5
    scores = ideal_scores("a b c", ["a b", "a b c d"], stemming=False)
    assert scores.rouge2_recall == pytest.approx(1.0)
    assert scores.rouge2_f1 == pytest.approx(4 / 5)
    assert ideal_scores("a b c", []).rouge2_recall == 0.0


_text = st.lists(
    st.sampled_from(["gene", "genes", "protein", "p53", "binds", "the", "a"]), max_size=12
).map(" ".join)


@given(_text, _text)
def test_rouge_properties(candidate: str, reference: str) -> None:
    for measure in (rouge_2, rouge_su4):
        score = measure(candidate, reference)
        flipped = measure(reference, candidate)
        for value in (score.recall, score.precision, score.f1):
            assert 0.0 <= value <= 1.0
        assert score.recall == pytest.approx(flipped.precision)
        assert score.f1 == pytest.approx(flipped.f1)
    if len(tokens(reference)) >= 2:
        same = rouge_2(reference, reference)
        assert (same.recall, same.precision, same.f1) == (1.0, 1.0, 1.0)
        assert rouge_su4(reference, reference).f1 == pytest.approx(1.0)


def test_bigrams_count_repeats() -> None:
    assert bigrams(["a", "b", "a", "b"]) == {("a", "b"): 2, ("b", "a"): 1}

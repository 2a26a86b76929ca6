"""Reading text without a model: phrases, abbreviations and what a clause asserts."""

from __future__ import annotations

import pytest

from rag.text.claims import read
from rag.text.phrases import abbreviations, chunks, phrases, words

# (sentence, the noun-phrase chunks)
CHUNKS = [
    (
        "Pyridostigmine and neostigmine are used in myasthenia gravis.",
        ["Pyridostigmine", "neostigmine", "myasthenia gravis"],
    ),
    (
        "Mutations in the MECP2 gene cause Rett syndrome (RTT).",
        ["Mutations", "MECP2 gene", "Rett syndrome", "RTT"],
    ),
    ("Graves' disease was seen in 12 patients.", ["Graves' disease", "12 patients"]),
    ("It is the methyl donor S-adenosyl-L-methionine.", ["methyl donor S-adenosyl-L-methionine"]),
]


@pytest.mark.parametrize(("sentence", "expected"), CHUNKS)
def test_chunks_are_runs_of_words_between_function_words_and_punctuation(
    sentence: str, expected: list[str]
) -> None:
    found = [sentence[c[0].begin : c[-1].end] for c in chunks(sentence)]
    assert found == expected


def test_phrases_skip_grading_starts_and_generic_ends() -> None:
    (chunk,) = chunks("several novel BRCA1 mutations")
    names = [" ".join(w.text for w in chunk[a:b]) for a, b in phrases(chunk)]
    assert "several novel BRCA1" not in names and "BRCA1 mutations" in names
    (chunk,) = chunks("higher serum levels")
    assert [" ".join(w.text for w in chunk[a:b]) for a, b in phrases(chunk)] == ["serum"]


def test_words_keep_names_numbers_and_their_spans() -> None:
    text = "HLA-B*15:02, miR-133a and 1,204 (35%) cases."
    found = words(text)
    assert [w.text for w in found] == ["HLA-B*15:02", "miR-133a", "and", "1,204", "35%", "cases"]
    assert all(text[w.begin : w.end] == w.text for w in found)


def test_abbreviations_map_short_forms_to_their_long_forms() -> None:
    text = (
        "Tick-borne encephalitis virus (TBEV) and louping ill virus (LIV) differ; "
        "multiple myeloma (MM) is treated (2004)."
    )
    assert abbreviations(text) == {
        "tbev": "Tick-borne encephalitis virus",
        "liv": "louping ill virus",
        "mm": "multiple myeloma",
    }


# (sentence, per clause: (negated, direction, numbers))
READINGS = [
    ("Aspirin lowered infarction in 1,204 patients.", [(False, -1, ("1204",))]),
    (
        "Dronedarone did not alter T4, whereas amiodarone increased it.",
        [(True, 0, ()), (False, 1, ())],
    ),
    ("Survivin is undetectable in normal adult tissue.", [(True, 0, ())]),
    ("Origins lie in nucleosome-free regions.", [(True, 0, ())]),
    ("Not only aspirin but also clopidogrel helps.", [(False, 0, ()), (False, 0, ())]),
    ("We asked whether or not seven isoforms exist.", [(False, 0, ("7",))]),
    ("It caused a 3.50-fold rise in 35% of cases.", [(False, 1, ("3.5", "35%"))]),
]


@pytest.mark.parametrize(("sentence", "expected"), READINGS)
def test_clauses_are_read_for_negation_direction_and_numbers(
    sentence: str, expected: list[tuple[bool, int, tuple[str, ...]]]
) -> None:
    assert [(c.negated, c.direction, c.numbers) for c in read(sentence)] == expected


def test_tables_ran() -> None:
    assert (len(CHUNKS), len(READINGS)) == (4, 7)

"""The Porter stemmer against the examples of Porter (1980) and its reference implementation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluators.bioasq.stemmer import stem

# Examples from the paper's rule tables, plus biomedical words; expected stems are the output
# of Martin Porter's reference C implementation (with its two departures: bli -> ble, logi -> log).
EXAMPLES = [
    ("caresses", "caress"),
    ("ponies", "poni"),
    ("ties", "ti"),
    ("caress", "caress"),
    ("cats", "cat"),
    ("feed", "feed"),
    ("agreed", "agre"),
    ("disabled", "disabl"),
    ("matting", "mat"),
    ("mating", "mate"),
    ("meeting", "meet"),
    ("milling", "mill"),
    ("messing", "mess"),
    ("meetings", "meet"),
    ("plastered", "plaster"),
    ("bled", "bled"),
    ("motoring", "motor"),
    ("sing", "sing"),
    ("conflated", "conflat"),
    ("troubled", "troubl"),
    ("sized", "size"),
    ("hopping", "hop"),
    ("tanned", "tan"),
    ("falling", "fall"),
    ("hissing", "hiss"),
    ("fizzed", "fizz"),
    ("failing", "fail"),
    ("filing", "file"),
    ("happy", "happi"),
    ("sky", "sky"),
    ("relational", "relat"),
    ("conditional", "condit"),
    ("rational", "ration"),
    ("valenci", "valenc"),
    ("hesitanci", "hesit"),
    ("digitizer", "digit"),
    ("conformabli", "conform"),
    ("radicalli", "radic"),
    ("differentli", "differ"),
    ("vileli", "vile"),
    ("analogousli", "analog"),
    ("vietnamization", "vietnam"),
    ("predication", "predic"),
    ("operator", "oper"),
    ("feudalism", "feudal"),
    ("decisiveness", "decis"),
    ("hopefulness", "hope"),
    ("callousness", "callous"),
    ("formaliti", "formal"),
    ("sensitiviti", "sensit"),
    ("sensibiliti", "sensibl"),
    ("triplicate", "triplic"),
    ("formative", "form"),
    ("formalize", "formal"),
    ("electriciti", "electr"),
    ("electrical", "electr"),
    ("hopeful", "hope"),
    ("goodness", "good"),
    ("revival", "reviv"),
    ("allowance", "allow"),
    ("inference", "infer"),
    ("airliner", "airlin"),
    ("gyroscopic", "gyroscop"),
    ("adjustable", "adjust"),
    ("defensible", "defens"),
    ("irritant", "irrit"),
    ("replacement", "replac"),
    ("adjustment", "adjust"),
    ("dependent", "depend"),
    ("adoption", "adopt"),
    ("homologou", "homolog"),
    ("communism", "commun"),
    ("activate", "activ"),
    ("angulariti", "angular"),
    ("homologous", "homolog"),
    ("effective", "effect"),
    ("bowdlerize", "bowdler"),
    ("probate", "probat"),
    ("rate", "rate"),
    ("cease", "ceas"),
    ("controll", "control"),
    ("roll", "roll"),
    ("generalizations", "gener"),
    ("oscillators", "oscil"),
    ("archaeology", "archaeolog"),
    ("mutations", "mutat"),
    ("phosphorylation", "phosphoryl"),
    ("cytochrome", "cytochrom"),
    ("budding", "bud"),
    ("is", "is"),
]


def test_example_count() -> None:
    assert len(EXAMPLES) == 90


@pytest.mark.parametrize(("word", "expected"), EXAMPLES)
def test_porter_examples(word: str, expected: str) -> None:
    assert stem(word) == expected


@given(st.text(alphabet="abcdefghilmnoprstuvwyz", max_size=14))
def test_stems_never_grow_and_short_words_stay(word: str) -> None:
    result = stem(word)
    assert len(result) <= len(word)
    if len(word) <= 2:
        assert result == word

"""MIRAGE's answer-locating rule, rule by rule, and answers given otherwise."""

from __future__ import annotations

import json

import pytest
from pyoxigraph import Literal

from evaluators.mirage.choice import located_letter, prediction_letter, system_choice
from evaluators.model import AnswerSet, Choices, Question

YES_NO_MAYBE = Choices("pubmedqa", (("A", "yes"), ("B", "no"), ("C", "maybe")))


@pytest.mark.parametrize(
    ("text", "letter"),
    [
        ("C", "C"),  # 1: the letter alone
        ("  D\n", "D"),  # 1: white space before, $ before a final newline
        ("B or C", "B"),  # 2
        ("C and D", "C"),  # 3
        ("A/B", "A"),  # 4
        ("D, because", "D"),  # 5
        ("the answer is option C", "C"),  # 6, anywhere
        ("Option B is right", "B"),  # 6
        ("so: D", "D"),  # 7, anywhere
        ('B. the second"}', "B"),  # 8
        ('C"}', "C"),  # 9
        ("D: maybe", "D"),  # 10 (7 does not match: after ":" comes no capital letter)
        ("E", "A"),  # no rule: A
        ("b", "A"),  # letters are capitals only
        ("", "A"),
        ("B. see option D", "D"),  # 6 before 8
        ("B: A", "A"),  # 7 (": A") before 10 ("B:")
    ],
)
def test_the_rules_apply_in_their_order(text: str, letter: str) -> None:
    assert located_letter(text) == letter


def test_the_text_after_the_last_marker_is_read() -> None:
    output = '{"answer_choice": "A", "answer_choice": "C"}'
    assert prediction_letter([output, '{"answer_choice": "B"}']) == "C"  # the first output only
    assert prediction_letter(["no marker at all, option B"]) == "B"
    assert prediction_letter([]) is None


def test_stored_predictions_are_read_with_the_rule() -> None:
    def reply(*outputs: str) -> Question:
        return Question("q", reply=json.dumps(list(outputs)))

    assert system_choice(YES_NO_MAYBE, reply('{"answer_choice": "C"}')).letter == "C"
    empty = system_choice(YES_NO_MAYBE, reply())
    assert (empty.letter, empty.how) == (None, "no output stored")


@pytest.mark.parametrize(
    ("answer", "letter", "how"),
    [
        (AnswerSet(boolean=True), "A", "yes/no answer"),
        (AnswerSet(boolean=False), "B", "yes/no answer"),
        (AnswerSet(values=(Literal("Maybe"),)), "C", "option text"),
        (AnswerSet(values=(Literal("B"),)), "B", "MIRAGE's rule"),
        (AnswerSet(values=(Literal("probably not"),)), "A", "MIRAGE's rule"),
        (AnswerSet(), None, "empty answer"),
    ],
)
def test_answers_given_otherwise_choose_an_option(
    answer: AnswerSet, letter: str | None, how: str
) -> None:
    found = system_choice(YES_NO_MAYBE, Question("q", answers=(answer,)))
    assert (found.letter, found.how) == (letter, how)


def test_no_answer_or_a_boolean_without_such_option_chooses_nothing() -> None:
    assert system_choice(YES_NO_MAYBE, None).letter is None
    four = Choices("mmlu", (("A", "a"), ("B", "b"), ("C", "c"), ("D", "d")))
    assert system_choice(four, Question("q", answers=(AnswerSet(boolean=True),))).letter is None

"""Which option a system chose: MIRAGE's answer-locating rule, and answers given otherwise.

MIRAGE scores the first of a model's stored outputs: it takes the text after the last
``"answer_choice": "`` (the whole output when there is none), strips it, and reads the letter
with the first of these rules that matches (``^`` is the start of the text, ``\\s`` any
white space, ``$`` its end or a final newline):

1. ``^\\s*X$`` (the text is the letter), 2. ``^\\s*X or``, 3. ``^\\s*X and``, 4. ``^\\s*X/``,
5. ``^\\s*X,``, 6. ``Option X`` or ``option X`` anywhere, 7. ``:`` then white space and ``X``
anywhere, 8. ``^\\s*X\\.``, 9. ``^\\s*X"``, 10. ``^\\s*X:``; where none matches, the choice is
**A**. ``X`` is one of A, B, C, D. An empty list of outputs is no choice (wrong).

Systems that answer otherwise are read so that they can be scored alike (``system_choice``):
a yes/no answer (a boolean) chooses the option whose text is "yes" or "no"; an answer value
chooses the option whose text it is, or else the letter MIRAGE's rule reads in it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from evaluators.model import Choices, Question

_MARK = '"answer_choice": "'
_LEAD = r"^\s*([ABCD])"
# MIRAGE's rules in its order (src/utils.py, locate_answer)
RULES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        _LEAD + "$",
        _LEAD + " or",
        _LEAD + " and",
        _LEAD + "/",
        _LEAD + ",",
        r"[Oo]ption ([ABCD])",
        r":\s*([ABCD])",
        _LEAD + r"\.",
        _LEAD + '"',
        _LEAD + ":",
    )
)
FALLBACK = "A"


def located_letter(text: str) -> str:
    """Return the letter MIRAGE's rules read in ``text`` (A when none matches).

    >>> located_letter("B"), located_letter('C"}'), located_letter("I pick option D.")
    ('B', 'C', 'D')
    >>> located_letter("none of them")
    'A'
    """
    for rule in RULES:
        found = rule.search(text)
        if found is not None:
            return found.group(1)
    return FALLBACK


def outputs(reply: str) -> list[str] | None:
    """Return a stored prediction's model outputs (``None`` if the reply is not such a list)."""
    try:
        value = json.loads(reply)
    except json.JSONDecodeError:
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


def prediction_letter(found: list[str]) -> str | None:
    """Return the letter MIRAGE reads in a prediction's outputs (``None``: no output).

    >>> prediction_letter(['{"step_by_step_thinking": "...", "answer_choice": "B"}'])
    'B'
    >>> prediction_letter([]) is None
    True
    """
    if not found:
        return None
    return located_letter(found[0].rpartition(_MARK)[2].strip())


@dataclass(frozen=True, slots=True)
class Choice:
    """The option a system chose (``None``: none) and how it was read."""

    letter: str | None
    how: str


def system_choice(choices: Choices, answer: Question | None) -> Choice:
    """Return the option ``answer`` chose among ``choices``.

    >>> from evaluators.model import AnswerSet
    >>> yes_no = Choices("bioasq", (("A", "yes"), ("B", "no")))
    >>> system_choice(yes_no, Question("q", answers=(AnswerSet(boolean=False),)))
    Choice(letter='B', how='yes/no answer')
    >>> system_choice(yes_no, Question("q", reply='["The answer_choice: B"]')).letter
    'B'
    """
    if answer is None:
        return Choice(None, "no answer")
    found = outputs(answer.reply) if answer.reply is not None else None
    if found is not None:
        letter = prediction_letter(found)
        return Choice(letter, "MIRAGE's rule" if letter else "no output stored")
    first = answer.answers[0] if answer.answers else None
    if first is None:
        return Choice(None, "no answer")
    if first.boolean is not None and not first.values:
        letter = choices.letter_of("yes" if first.boolean else "no")
        return Choice(letter, "yes/no answer" if letter else "yes/no answer, no such option")
    if not first.values:
        return Choice(None, "empty answer")
    text = first.values[0].value
    by_text = choices.letter_of(text)
    if by_text is not None:
        return Choice(by_text, "option text")
    return Choice(located_letter(text.strip()), "MIRAGE's rule")

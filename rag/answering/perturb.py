"""False claims made from true ones, to measure what the citation check catches.

Each function takes a sentence that its cited text does state and returns a variant that it
does not, or ``None`` when the sentence offers nothing to change:

* ``change_number``: the first number becomes another one ("1,204 patients" -> "2,409");
* ``flip_negation``: a negation is removed ("did not reduce" -> "did reduce", "no effect" ->
  "an effect") or one is added after the first auxiliary ("is safe" -> "is not safe");
* ``reverse_direction``: the first word of increase or decrease becomes its opposite;
* ``swap_entity``: the first name (a symbol or a capitalised name inside the sentence) becomes
  another name, taken from ``names`` (another article's, or another of the cited text's).

The unrelated-citation case needs no rewriting: the true sentence cites another article.
``bench/rag.py`` builds the set from the shared PubMedQA and BioASQ data. Pure and
deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag.text.claims import number_value
from rag.text.phrases import FUNCTION_WORDS, words

AUXILIARIES = (
    *("is", "are", "was", "were", "can", "could", "may", "might", "will", "would", "should"),
    *("has", "have", "had", "does", "do", "did", "must"),
)
_REMOVABLE = {"not": "", "no": "an", "never": "", "cannot": "can"}
_OPPOSITES = {
    **dict.fromkeys(("increased", "elevated", "raised", "enhanced", "improved"), "decreased"),
    **dict.fromkeys(("decreased", "reduced", "lowered", "diminished", "impaired"), "increased"),
    "increase": "decrease",
    "decrease": "increase",
    "increases": "decreases",
    "decreases": "increases",
    "reduces": "increases",
    "reduce": "increase",
    "higher": "lower",
    "lower": "higher",
    "more": "less",
    "less": "more",
    "inhibits": "activates",
    "activates": "inhibits",
    "inhibited": "activated",
    "activated": "inhibited",
    "upregulated": "downregulated",
    "downregulated": "upregulated",
}


def change_number(claim: str) -> str | None:
    """Replace the first number with a different one.

    >>> change_number("Of 1,204 patients, 35% improved.")
    'Of 2,409 patients, 35% improved.'
    >>> change_number("Seven isoforms exist.") is None
    True
    """
    for word in words(claim):
        value = number_value(word.text)
        if value is None or not word.text[:1].isdigit():
            continue
        digits = value.rstrip("%")
        if "." in digits:
            whole, fraction = digits.split(".")
            new = f"{int(whole) + 1}.{fraction}"
        else:
            number = int(digits) * 2 + 1
            new = f"{number:,}" if "," in word.text else str(number)
        suffix = word.text[len(word.text.rstrip("%")) :]
        return claim[: word.begin] + new + suffix + claim[word.end :]
    return None


def flip_negation(claim: str) -> str | None:
    """Remove the first negation, or add "not" after the first auxiliary.

    >>> flip_negation("Dronedarone did not alter T4 levels.")
    'Dronedarone did alter T4 levels.'
    >>> flip_negation("Isotretinoin is safe in pregnancy.")
    'Isotretinoin is not safe in pregnancy.'
    >>> flip_negation("Aspirin lowered infarction.") is None
    True
    """
    tokens = words(claim)
    for word in tokens:
        if word.lower in _REMOVABLE:
            replacement = _REMOVABLE[word.lower]
            if word.text[:1].isupper():
                replacement = replacement.capitalize()
            before, after = claim[: word.begin], claim[word.end :]
            return " ".join((before + replacement + after).split())
    for word in tokens:
        if word.lower in AUXILIARIES:
            return claim[: word.end] + " not" + claim[word.end :]
    return None


def reverse_direction(claim: str) -> str | None:
    """Replace the first word of increase or decrease by its opposite.

    >>> reverse_direction("Aspirin lowered the rate of infarction.")
    'Aspirin increased the rate of infarction.'
    """
    for word in words(claim):
        opposite = _OPPOSITES.get(word.lower)
        if opposite is not None:
            if word.text[:1].isupper():
                opposite = opposite.capitalize()
            return claim[: word.begin] + opposite + claim[word.end :]
    return None


def names_in(text: str) -> list[str]:
    """Return the names of a text: symbols and capitalised words not starting a sentence, outside
    brackets (a bracketed name is an alias: swapping it changes no claim).

    >>> names_in("Mutations in LDLR and APOB cause FH in Norway.")
    ['LDLR', 'APOB', 'FH', 'Norway']
    """
    found: list[str] = []
    depth = 0
    position = 0
    for index, word in enumerate(words(text)):
        for char in text[position : word.begin]:
            depth += 1 if char in "([" else -1 if char in ")]" and depth else 0
        position = word.begin
        token = word.text
        if depth or len(token) < 2 or token.lower() in FUNCTION_WORDS or not token[0].isalnum():
            continue
        inner = any(c.isupper() for c in token[1:]) or (
            any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
        )
        if inner or (index > 0 and token[0].isupper()):
            found.append(token)
    return list(dict.fromkeys(found))


def swap_entity(claim: str, names: Sequence[str]) -> str | None:
    """Replace the first name of ``claim`` with the first of ``names`` it does not contain.

    >>> swap_entity("Mutations in LDLR cause FH.", ["FH", "PCSK9"])
    'Mutations in PCSK9 cause FH.'
    """
    mine = names_in(claim)
    lower = claim.lower()
    replacement = next((n for n in names if n.lower() not in lower), None)
    if not mine or replacement is None:
        return None
    target = mine[0]
    for word in words(claim):
        if word.text == target:
            return claim[: word.begin] + replacement + claim[word.end :]
    return None

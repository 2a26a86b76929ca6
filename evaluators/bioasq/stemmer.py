"""The Porter stemmer, used by ROUGE to compare word forms (``evaluators.bioasq.rouge``).

This follows Martin Porter's 1980 algorithm in the form of his reference implementation, which
ROUGE-1.5.5 ships as its stemmer: it includes the two published departures from the paper
(step 2 maps ``bli`` to ``ble`` instead of ``abli`` to ``able``, and adds ``logi`` to ``log``)
and leaves words of one or two letters alone. Input is expected in lowercase ASCII. Pure: no
state, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

_VOWELS = frozenset("aeiou")

# Steps 2 and 3: (suffix, replacement), applied when the stem before the suffix has measure > 0.
# Only the first suffix that matches is tried (the order is the reference implementation's).
_STEP2: Sequence[tuple[str, str]] = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"),
    ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
    ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
    ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"), ("logi", "log"),
)  # fmt: skip
_STEP3: Sequence[tuple[str, str]] = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"),
    ("ful", ""), ("ness", ""),
)  # fmt: skip
# Step 4: suffixes removed when the stem has measure > 1 ("ion" only after s or t).
_STEP4: Sequence[str] = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion",
    "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip


def _consonants(word: str) -> list[bool]:
    # A letter is a consonant unless it is a vowel, or a "y" that follows a consonant.
    flags: list[bool] = []
    for i, letter in enumerate(word):
        if letter in _VOWELS:
            flags.append(False)
        elif letter == "y":
            flags.append(i == 0 or not flags[i - 1])
        else:
            flags.append(True)
    return flags


def _measure(stem: str) -> int:
    # m in [C](VC)^m[V]: the number of vowel-to-consonant transitions.
    flags = _consonants(stem)
    return sum(1 for i in range(1, len(flags)) if flags[i] and not flags[i - 1])


def _has_vowel(stem: str) -> bool:
    return not all(_consonants(stem))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonants(word)[-1]


def _cvc(word: str) -> bool:
    # consonant-vowel-consonant at the end, the last consonant not w, x or y
    if len(word) < 3 or word[-1] in "wxy":
        return False
    flags = _consonants(word)
    return flags[-1] and not flags[-2] and flags[-3]


def _step1(word: str) -> str:
    if word.endswith("sses") or word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    else:
        for suffix in ("ed", "ing"):
            if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
                word = _step1b_tidy(word[: -len(suffix)])
                break
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    return word


def _step1b_tidy(stem: str) -> str:
    if stem.endswith(("at", "bl", "iz")):
        return stem + "e"
    if _double_consonant(stem) and stem[-1] not in "lsz":
        return stem[:-1]
    if _measure(stem) == 1 and _cvc(stem):
        return stem + "e"
    return stem


def _replace(word: str, rules: Sequence[tuple[str, str]]) -> str:
    for suffix, replacement in rules:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + replacement if _measure(stem) > 0 else word
    return word


def _step4(word: str) -> str:
    for suffix in _STEP4:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            if suffix == "ion" and not stem.endswith(("s", "t")):
                return word
            return stem if _measure(stem) > 1 else word
    return word


def _step5(word: str) -> str:
    if word.endswith("e"):
        m = _measure(word[:-1])
        if m > 1 or (m == 1 and not _cvc(word[:-1])):
            word = word[:-1]
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


def stem(word: str) -> str:
    """Return the Porter stem of a lowercase word.

    Args:
        word: one lowercase token.

    Returns:
        Its stem; words of one or two letters are returned unchanged.

    >>> [stem(w) for w in ("caresses", "ponies", "hopping", "relational", "generalizations")]
    ['caress', 'poni', 'hop', 'relat', 'gener']
    """
    if len(word) <= 2:
        return word
    word = _step1(word)
    word = _replace(word, _STEP2)
    word = _replace(word, _STEP3)
    word = _step4(word)
    return _step5(word)

"""What a sentence asserts, read from its words: terms, negation, direction and numbers.

Both the yes/no answer and the citation check ask the same thing of a sentence: does it say
that something is so, or that it is not, or the opposite? ``read`` splits a sentence into
clauses (at ``,`` ``;`` ``:`` and at "but", "whereas", "however", ...) and reads each:

* its content **stems** (the index's Porter stems; hyphenated words also by their parts);
* **negation**: a cue in the clause ("not", "no", "never", "without", "lack", "failed to",
  "absent", "undetectable", "unlikely", ...; "not only" is no negation) or a term negated by
  its suffix ("nucleosome-free", "HER2-negative", "p53-deficient");
* **direction**: which way a change goes, up ("increase", "higher", "stimulate",
  "overexpression" ...) or down ("decrease", "lower", "inhibit", "loss" ...), as the sum of
  the clause's direction words (negation not applied: the caller combines both);
* **numbers**, normalised ("seven" and "7" are both "7"; "1,204" is "1204"; a trailing
  ``%`` is kept), and **entities**: the symbol-like and capitalised-name tokens.

Pure and deterministic; the word lists are ours.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.text.phrases import CLASS_NOUNS, FUNCTION_WORDS, GENERIC, LEADING, VERBS, Word, stem, words

NEGATIONS = frozenset(
    """
    not no never neither nor without none cannot can't don't doesn't didn't isn't aren't
    wasn't weren't won't hasn't haven't lack lacks lacked lacking absence absent fail fails
    failed unable unlikely undetectable undetected devoid nothing nobody nowhere neither
    insignificant
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
# a hyphenated suffix that negates the word before it ("nucleosome-free", "HER2-negative")
NEGATING_SUFFIXES = ("free", "negative", "deficient", "null", "less", "independent", "lacking")
# words saying that nothing changed: they deny a claim of an effect or a difference
NO_CHANGE = frozenset(
    """
    similar comparable unchanged unaltered unaffected equivalent identical indistinguishable
    same stable
    """.split()  # noqa: SIM905
)
# claim words of an effect or a difference (what NO_CHANGE denies)
EFFECT = frozenset(
    stem(w)
    for w in """
    affect affects affected alter alters altered change changes changed influence influences
    influenced differ differs differed difference impact impacts modify modifies modified
    effect effects increase increases decrease decreases
    """.split()  # noqa: SIM905
)
UP = frozenset(
    """
    increase increases increased increasing elevate elevated elevation raise raised higher
    high more greater enhance enhanced enhances stimulate stimulates stimulated activate
    activates activated activation induce induces induced upregulate upregulated
    upregulation up-regulated up-regulation overexpression over-expression overexpressed
    over-expressed improve improves improved improvement gain gains promote promotes
    promoted accelerate accelerated augment augmented exacerbate exacerbated worsen worsened
    rise rises rose amplify amplified potentiate potentiated
    """.split()  # noqa: SIM905
)
DOWN = frozenset(
    """
    decrease decreases decreased decreasing reduce reduces reduced reduction lower lowered
    low less fewer diminish diminished diminishes inhibit inhibits inhibited inhibition
    suppress suppressed suppresses suppression block blocks blocked downregulate
    downregulated downregulation down-regulated down-regulation underexpression
    under-expression underexpressed under-expressed impair impaired impairs attenuate
    attenuated attenuates loss lose loses lost decline declined declines prevent prevents
    prevented abolish abolished deplete depleted depletion drop dropped fall fell slow slowed
    """.split()  # noqa: SIM905
)
_CLAUSE_WORDS = frozenset(
    "but whereas while however although though yet unlike except instead nevertheless".split()  # noqa: SIM905
)
_CLAUSE_PUNCT = frozenset(",;:")
_COMMON = (FUNCTION_WORDS, GENERIC, LEADING, VERBS, CLASS_NOUNS)
# words of a clause that asks or states an aim rather than a finding
_ASKING = frozenset(
    "whether aim aimed aims purpose objective hypothesis hypothesized".split()  # noqa: SIM905
)
_NUMBER_WORDS = {
    w: str(n)
    for n, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()  # noqa: SIM905
    )
}


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause's reading."""

    text: str
    stems: frozenset[str]
    negated: bool
    direction: int  # > 0 up, < 0 down, 0 neither (negation not applied)
    numbers: tuple[str, ...]
    entities: frozenset[str]
    unchanged: bool = False  # says that something did not change or differ ("similar")
    effect: bool = False  # claims an effect or a difference ("affect", "alter", "differ")
    asks: bool = False  # states an aim or a question ("to determine whether ..."), no finding
    negations: frozenset[str] = frozenset()  # "not" for negation words, "x-free" words as such

    @property
    def polarity(self) -> int:
        """Return +1 when the clause affirms, -1 when it denies (a negation cue or suffix)."""
        return -1 if self.negated else 1


def read(sentence: str) -> tuple[Clause, ...]:
    """Read a sentence clause by clause.

    >>> [(c.negated, c.direction) for c in read("Dronedarone did not alter T4 levels, "
    ...     "whereas amiodarone increased T4.")]
    [(True, 0), (False, 1)]
    >>> read("A nucleosome-free region flanks the origin.")[0].negated
    True
    >>> read("Seven isoforms in 1,204 cells (35%).")[0].numbers
    ('7', '1204', '35%')
    """
    tokens = words(sentence)
    clauses: list[list[Word]] = []
    current: list[Word] = []
    previous_end = 0
    for word in tokens:
        gap = sentence[previous_end : word.begin]
        if current and (any(c in _CLAUSE_PUNCT for c in gap) or word.lower in _CLAUSE_WORDS):
            clauses.append(current)
            current = []
        current.append(word)
        previous_end = word.end
    if current:
        clauses.append(current)
    first = tokens[0].begin if tokens else -1
    depth = bracket_depth(sentence)
    return tuple(_clause(sentence, clause, first, depth) for clause in clauses)


def bracket_depth(text: str) -> list[int]:
    """Return, per character, how many parentheses or brackets enclose it (a name in brackets
    is an alias or a citation, not what the sentence is about).

    >>> bracket_depth("a (b) c")
    [0, 0, 1, 1, 1, 0, 0]
    """
    depths: list[int] = []
    depth = 0
    for char in text:
        if char in "([":
            depth += 1
        depths.append(depth)
        if char in ")]" and depth:
            depth -= 1
    return depths


_COMMON_ENDINGS = (
    *("ly", "ous", "al", "ive", "ed", "ing", "tion", "sion", "ment", "ness", "ity", "ance"),
    *("ence", "ic", "ary", "ory", "ble", "ful", "less", "ies", "ers", "ists"),
)


def _plain_capital(token: str) -> bool:
    """A common word capitalised only because it starts the sentence ("Human", "Mutations"),
    not a name ("BRCA1", "Clopidogrel"): a listed word, or one with a common word's ending."""
    if not (token[:1].isupper() and token[1:].islower() and token.isalpha()):
        return False
    lower = token.lower()
    singular = lower[:-1] if lower.endswith("s") and not lower.endswith("ss") else lower
    listed = any(w in vocabulary for w in (lower, singular) for vocabulary in _COMMON)
    return listed or singular.endswith(_COMMON_ENDINGS)


def _clause(sentence: str, clause: list[Word], first: int, depth: list[int]) -> Clause:
    lowers = [w.lower for w in clause]
    stems: set[str] = set()
    for lower in lowers:
        if lower in FUNCTION_WORDS:
            continue
        stems.add(stem(lower))
        stems.update(stem(p) for p in re.split(r"[-/]", lower) if len(p) > 1)
    return Clause(
        sentence[clause[0].begin : clause[-1].end],
        frozenset(stems),
        bool(negations := _negations(lowers)),
        sum(_direction(lower) for lower in lowers),
        tuple(n for n in (number_value(w.text) for w in clause) if n is not None),
        frozenset(
            w.lower
            for w in clause
            if is_entity_token(w.text)
            and depth[w.begin] == 0
            and not (w.begin == first and _plain_capital(w.text))
        ),
        any(lower in NO_CHANGE for lower in lowers),
        any(stem(lower) in EFFECT for lower in lowers),
        any(lower in _ASKING for lower in lowers),
        negations,
    )


def _negations(lowers: list[str]) -> frozenset[str]:
    """The clause's negations: "not" for any negation word, the word itself for a negating
    suffix ("disease-free"), so that "did not improve disease-free survival" differs from
    "improved disease-free survival"."""
    found: set[str] = set()
    for index, lower in enumerate(lowers):
        following = lowers[index + 1] if index + 1 < len(lowers) else ""
        previous = lowers[index - 1] if index else ""
        if lower in NEGATIONS and not (lower == "not" and following == "only"):
            if lower == "not" and previous == "or":
                continue  # "whether or not"
            if lower == "no" and following in ("doubt", "longer"):
                continue
            found.add("not")
        elif "-" in lower and lower.rsplit("-", 1)[1] in NEGATING_SUFFIXES:
            found.add(lower)
    return frozenset(found)


def _direction(lower: str) -> int:
    """+1 for a word of increase, -1 for one of decrease (listed forms only: "activity" is
    no "activate")."""
    if lower in UP or lower.startswith(("over-", "up-")):
        return 1
    if lower in DOWN or lower.startswith(("under-", "down-")):
        return -1
    return 0


def number_value(token: str) -> str | None:
    """Return a token's number in a canonical form, or ``None`` when it is no number.

    >>> [number_value(t) for t in ("seven", "1,204", "3.50", "35%", "p53", "10-fold")]
    ['7', '1204', '3.5', '35%', None, '10']
    """
    lower = token.lower()
    if lower in _NUMBER_WORDS:
        return _NUMBER_WORDS[lower]
    match = re.fullmatch(r"(\d[\d,]*(?:\.\d+)?)(%|-fold)?", lower)
    if match is None:
        return None
    value = match.group(1).replace(",", "")
    if "." in value:
        value = value.rstrip("0").rstrip(".")
    return value + ("%" if match.group(2) == "%" else "")


def is_entity_token(token: str) -> bool:
    """Return whether a token names a specific thing (a symbol or a mid-sentence capitalised name).

    >>> [is_entity_token(t) for t in ("BRCA1", "Aspirin", "aspirin", "The", "IL-6")]
    [True, True, False, False, True]
    """
    if len(token) < 2 or token.lower() in FUNCTION_WORDS:
        return False
    has_alpha = any(c.isalpha() for c in token)
    inner_upper = any(c.isupper() for c in token[1:])
    mixed_digit = has_alpha and any(c.isdigit() for c in token)
    return inner_upper or mixed_digit or token[0].isupper()

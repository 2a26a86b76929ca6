"""Which name a sentence gives as the cause of something, or as its remedy, read from its words.

A question asking what treats, reverses or prevents a condition ("What is the treatment for
neuroleptic malignant syndrome?") must not be answered with a drug the abstracts name as its
cause ("neuroleptic malignant syndrome induced by ziprasidone"): the drug-safety abstracts
that make up much of PubMed name many of those next to every condition. ``cause_roles`` reads,
for each mention of a name, whether the sentence puts it in the place of a cause:

* a hyphenated cause: "risperidone-induced", "drug-associated", "lithium-related";
* after "induced by", "caused by", "triggered by", "due to", "associated with", with at
  most a few words of use or dose between ("associated with the use of ziprasidone");
* before a causing verb: "risperidone caused ...", "X induces ..." (not "X induced by ...");
* after "after", "following" or "during" the same way, in a sentence that reports no relief
  ("developed NMS after administration of risperidone", "delirium during clozapine
  treatment"; not "the rigidity resolved after dantrolene").

``names_as_remedy`` reads the other side: whether a sentence names a name as what treats,
reverses or prevents a condition. A template sentence ("X is used to treat Y.") states that
relation, so it needs a sentence that does: a remedy word within ``_REMEDY_REACH`` words of
the name and of every word of the condition, the name nowhere in the place of a cause. Mentioned
together is not enough ("Delirium was found in 10 % of clozapine-treated inpatients" names
clozapine as no remedy for delirium; "inpatients treated with clozapine …, reviewed … delirium"
neither).

Pure and deterministic; the word lists are ours.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

from rag.text.phrases import stem, words

CAUSING_SUFFIXES = frozenset(
    "induced associated related caused triggered provoked mediated".split()  # noqa: SIM905
)
_CAUSED_BY = frozenset("induced caused triggered provoked precipitated".split())  # noqa: SIM905
_CAUSING_VERBS = frozenset(
    """
    induce induces induced inducing cause causes caused causing trigger triggers triggered
    provoke provokes provoked precipitate precipitates precipitated
    """.split()  # noqa: SIM905
)
# words of relief: after them, "after X" tells what helped, not what harmed
_RELIEF = frozenset(
    """
    reversed resolved improved recovered subsided disappeared responded remitted abated
    normalized normalised relieved successfully improvement recovery resolution remission
    """.split()  # noqa: SIM905
)
# words that may stand between "associated with" or "after" and the name ("after a high dose
# of X", "associated with the use of X")
_BETWEEN = frozenset(
    """
    the a an its their of with use administration treatment therapy monotherapy intake
    exposure ingestion overdose dose doses high low high-dose low-dose chronic long-term
    short-term combined oral intravenous
    """.split()  # noqa: SIM905
)
# how many words may stand between the trigger and the name
_REACH = 5


def cause_roles(sentence: str, name: str) -> tuple[bool, ...]:
    """Return, for each mention of ``name`` in ``sentence``, whether it is named as a cause.

    >>> s = "Neuroleptic malignant syndrome induced by ziprasidone on the second day."
    >>> cause_roles(s, "ziprasidone"), cause_roles(s, "Neuroleptic malignant syndrome")
    ((True,), (False,))
    >>> cause_roles("Risperidone-induced NMS in a child; risperidone was stopped.", "risperidone")
    (True, False)
    >>> cause_roles("She developed NMS after monotherapy with risperidone.", "risperidone")
    (True,)
    >>> cause_roles("The rigidity of NMS resolved after dantrolene.", "dantrolene")
    (False,)
    >>> cause_roles("A case of NMS associated with the use of ziprasidone.", "ziprasidone")
    (True,)
    >>> cause_roles("NMS treated with the agonist bromocriptine.", "bromocriptine")
    (False,)
    """
    tokens = [w.lower for w in words(sentence)]
    wanted = [w.lower for w in words(name)]
    if not wanted:
        return ()
    relief = any(t in _RELIEF for t in tokens)
    size = len(wanted)
    roles: list[bool] = []
    for start in range(len(tokens) - size + 1):
        span = tokens[start : start + size]
        head, _, suffix = span[-1].rpartition("-")
        if span[:-1] == wanted[:-1] and head == wanted[-1] and suffix in CAUSING_SUFFIXES:
            roles.append(True)
            continue
        if span != wanted:
            continue
        after = tokens[start + size : start + size + 2]
        causing = bool(after) and after[0] in _CAUSING_VERBS and after[1:2] != ["by"]
        roles.append(causing or _caused_by(tokens[max(0, start - _REACH) : start], relief))
    return tuple(roles)


def _caused_by(before: list[str], relief: bool) -> bool:
    """Whether the words before a name put it as the cause: "induced by", "caused by", "due
    to", "associated with" and (without relief in the sentence) "after", "following", "during", with
    only ``_BETWEEN`` words up to the name."""
    for index in range(len(before) - 1, -1, -1):
        word = before[index]
        pair = before[index - 1 : index + 1] if index else []
        if (
            (word == "by" and pair[:1] and pair[0] in _CAUSED_BY)
            or pair in (["due", "to"], ["associated", "with"])
            or (word in ("after", "following", "during") and not relief)
        ):
            return True
        if word not in _BETWEEN:
            return False
    return False


# words that ask for a remedy or name one ("What is the treatment for Y?", "X is the antidote
# for Y", "X prevents Y")
REMEDY_WORDS = frozenset(
    """
    treat treats treated treatment treatments therapy therapies antidote antidotes cure cures
    remedy remedies manage management prevent prevents prevention reverse reverses reversal
    """.split()  # noqa: SIM905
)
# what a sentence naming a remedy may say besides: more forms, and the relief words of
# ``_RELIEF`` ("Y resolved after X")
_REMEDY_SAID = (
    REMEDY_WORDS
    | frozenset(
        """
        treating therapeutic cured managed prevented reversed relieve relieves relieved
        """.split()  # noqa: SIM905
    )
    | _RELIEF
)


# how many words may stand between a remedy word and the name, and the condition's words
# ("Lithium is the mainstay of maintenance treatment in bipolar disorder": five)
_REMEDY_REACH = 6


def names_as_remedy(
    sentence: str, name: str, condition: Iterable[str], form: Callable[[str], str] = stem
) -> bool:
    """Return whether ``sentence`` names ``name`` as a remedy of the condition whose words'
    comparable forms (by ``form``, a stemmer) are ``condition``: a remedy word stands within
    ``_REMEDY_REACH`` words of a mention of the name and of every condition word, and no
    mention of the name is in the place of a cause. In a hyphenated "X-treated" the treated
    thing is what follows it ("clozapine-treated inpatients"), so the condition must follow
    within two words.

    >>> names_as_remedy("Naloxone is the antidote of choice in opioid overdose.", "naloxone",
    ...     {"opioid", "overdos"})
    True
    >>> names_as_remedy("Delirium was found in 10 % of clozapine-treated inpatients.",
    ...     "clozapine", {"delirium"})
    False
    >>> names_as_remedy("Inpatients treated with clozapine were reviewed for the incidence "
    ...     "and severity of delirium.", "clozapine", {"delirium"})
    False
    >>> names_as_remedy("The rigidity of NMS resolved after dantrolene.", "dantrolene", {"nm"})
    True
    >>> names_as_remedy("NMS developed after risperidone; it was treated.", "risperidone", {"nm"})
    False
    """
    wanted = [form(w.lower) for w in words(name)]
    needed = set(condition)
    if not wanted or any(cause_roles(sentence, name)):
        return False
    tokens = [w.lower for w in words(sentence)]
    stems = [_parts(t, form) for t in tokens]
    remedies = _forms(form)
    mentions = [
        i
        for i in range(len(tokens) - len(wanted) + 1)
        if all(wanted[k] in stems[i + k] for k in range(len(wanted)))
    ]
    for r, found in enumerate(stems):
        if not found & remedies:
            continue
        compound = "-" in tokens[r] and bool(stems[r] & set(wanted))
        if compound:  # "X-treated Y": Y is what is treated
            near = set().union(*stems[r + 1 : r + 3]) if r + 1 < len(stems) else set()
            if needed <= near:
                return True
            continue
        around = set().union(*stems[max(0, r - _REMEDY_REACH) : r + _REMEDY_REACH + 1])
        if needed <= around and any(abs(m - r) <= _REMEDY_REACH for m in mentions):
            return True
    return False


@functools.cache
def _forms(form: Callable[[str], str]) -> frozenset[str]:
    """The remedy words' comparable forms."""
    return frozenset(form(w) for w in _REMEDY_SAID)


def _parts(token: str, form: Callable[[str], str]) -> frozenset[str]:
    """The forms of a token and of its hyphenated parts ("clozapine-treated")."""
    parts = [token, *token.split("-")] if "-" in token else [token]
    return frozenset(form(p) for p in parts if p)

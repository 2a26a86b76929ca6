"""Which name a sentence gives as the cause of something, read from its words.

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

Pure and deterministic; the word lists are ours.
"""

from __future__ import annotations

from rag.text.phrases import words

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

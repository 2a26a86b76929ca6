"""Yes or no, from the evidence for and against the question's claim.

A yes/no question states a claim ("Does dronedarone affect T3 and T4 levels?": dronedarone
affects T3 and T4 levels). Every clause of the snippets (``rag.text.claims``) that speaks
about the claim, that is covers enough of the question's content words (``MIN_COVERAGE``, and
``RELATIVE`` of the best clause's coverage, as abbreviations and paraphrases leave question
words unmatched everywhere), is evidence: **for** the claim when it affirms what the question
asks in the same direction, **against** it when it denies it (a negation, "-free",
"undetectable", "similar" for a claimed effect ...) or states the opposite direction
("decreased" where the question asks "increase"; a negation and an opposite direction
cancel). Each clause counts with its coverage, so a clause that restates the whole claim
weighs more than one sharing a word.

The answer is "no" when the share of the evidence against the claim exceeds ``NO_SHARE``
(chosen on BioASQ 2013 batches 0-2, checked on batch 3 and on PubMedQA: docs/rag-answering.md);
without any evidence it is "yes", BioASQ's and PubMed's more common answer. ``decide`` adds a
yes/no reader model when one is given (``rag.models.reader``): it also answers "no" when the
reader reads "no" with a probability above ``READER_NO``, since the word rules find only the
denials they have words for. Pure (the reader is passed in).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from rag.answering.entities import asked
from rag.text.claims import Clause, read
from rag.text.sentences import sentence_spans

# the share of the evidence against the claim above which the answer is "no"
NO_SHARE = 0.35
# a clause is evidence when it covers at least this share of the question's content words,
# and at least RELATIVE of the best clause's share
MIN_COVERAGE = 0.15
RELATIVE = 0.5
# a yes/no reader's probability of "no" above which the answer is "no" (the plain majority;
# 0.3-0.55 gave the same accuracy on BioASQ 7b-8b: docs/rag-answering.md)
READER_NO = 0.5
_AUXILIARIES = frozenset(
    "is are was were does do did can could should has have had will would may might must".split()  # noqa: SIM905
)


@dataclass(frozen=True, slots=True)
class Evidence:
    """The weighed evidence about a yes/no question's claim, and the answer it gives."""

    support: float
    against: float
    clauses: int  # how many clauses spoke about the claim

    @property
    def against_share(self) -> float:
        """Return the share of the evidence against the claim (0 without evidence)."""
        total = self.support + self.against
        return self.against / total if total else 0.0

    def answer(self, threshold: float = NO_SHARE) -> str:
        """Return "no" when the evidence against exceeds ``threshold`` of it, else "yes"."""
        return "no" if self.against_share > threshold else "yes"


class NoReader(Protocol):
    """A model that reads the probability of a "no" from a question and its snippets."""

    def no_probability(self, question: str, texts: Sequence[str]) -> float:
        """Return the probability (0..1) that ``texts`` answer ``question`` "no"."""
        ...


def decide(question: str, texts: Sequence[str], reader: NoReader | None = None) -> str:
    """Return "yes" or "no" for ``question`` from the snippets ``texts``: "no" when the word
    rules weigh the evidence against the claim (``weigh``) or, with a ``reader``, when it reads
    "no" with a probability above ``READER_NO``.

    >>> decide("Does dronedarone affect T4 levels?", ["Dronedarone did not alter T4 levels."])
    'no'
    """
    if weigh(question, texts).answer() == "no":
        return "no"
    if reader is not None and texts and reader.no_probability(question, texts) > READER_NO:
        return "no"
    return "yes"


def weigh(
    question: str,
    texts: Sequence[str],
    *,
    min_coverage: float = MIN_COVERAGE,
    relative: float = RELATIVE,
) -> Evidence:
    """Weigh the evidence of ``texts`` (snippets) for and against ``question``'s claim.

    A clause is evidence when it covers at least ``min_coverage`` of the question's content
    words and at least ``relative`` of what the best clause covers (abbreviations and
    paraphrases leave some question words unmatched everywhere).

    >>> weigh("Does dronedarone affect T4 levels?", ["Dronedarone did not alter T4 levels.",
    ...     "Amiodarone increased T4 levels."]).answer()
    'no'
    >>> weigh("Is survivin expressed in tumours?", ["Survivin is strongly expressed in many "
    ...     "tumours.", "Survivin expression marks tumour cells."]).answer()
    'yes'
    """
    claim = _claim(question)
    terms = set(asked(question).stems)
    if not terms:
        return Evidence(0.0, 0.0, 0)
    read_clauses = [
        (clause, _coverage(terms, clause.stems))
        for text in texts
        for begin, end in sentence_spans(text)
        for clause in read(text[begin:end])
    ]
    best = max((c for _, c in read_clauses), default=0.0)
    support = against = 0.0
    counted = 0
    for clause, coverage in read_clauses:
        if coverage < min_coverage or coverage < relative * best:
            continue
        counted += 1
        if _stance(claim, clause) > 0:
            support += coverage
        else:
            against += coverage
    return Evidence(support, against, counted)


def _coverage(terms: set[str], stems: frozenset[str]) -> float:
    """The share of the question's stems the clause has (a stem and its longer form match)."""
    return sum(1 for term in terms if has_form(stems, term)) / len(terms)


def has_form(found: frozenset[str], wanted: str) -> bool:
    """Whether the stems ``found`` hold ``wanted`` or a longer or shorter form of it ("treat"
    and "treatment"; five letters at least).

    >>> has_form(frozenset({"treatment"}), "treat"), has_form(frozenset({"tre"}), "treat")
    (True, False)
    """
    return wanted in found or (
        len(wanted) >= 5
        and any(len(f) >= 5 and (f.startswith(wanted) or wanted.startswith(f)) for f in found)
    )


def _claim(question: str) -> Clause:
    """The question read as one clause (its auxiliary verb dropped)."""
    clauses = read(question)
    merged = " ".join(c.text for c in clauses)
    first = merged.split(" ", 1)
    if len(first) == 2 and first[0].lower() in _AUXILIARIES:
        merged = first[1]
    return read(merged.replace(",", " "))[0]


def _stance(claim: Clause, clause: Clause) -> int:
    """+1 when the clause says what the claim says, -1 when it denies or reverses it."""
    polarity = -1 if clause.negated or (claim.effect and clause.unchanged) else 1
    stance = claim.polarity * polarity
    if claim.direction and clause.direction and (claim.direction > 0) != (clause.direction > 0):
        stance = -stance
    return stance

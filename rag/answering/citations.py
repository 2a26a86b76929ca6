"""Citation checking for cited answers: every sentence keeps only PMIDs of the shown snippets.

A cited answer is split into sentences (``rag.text.sentences``). Bracket groups whose every
item is a PMID (``[12345]``, ``[PMID: 1, 2]``, ``[12345](https://pubmed...)``, a PubMed URL) or one
of the allowed document ids (knowledge-base IRIs) are citations; other brackets (``[poly(A)]``) are
text. A citation group at the start of a sentence belongs to the sentence before it. Per sentence,
citations of documents that were not shown are removed, and so is any beyond the third; such a
sentence is flagged, as is one left without any citation. Rendering never puts brackets on a
sentence without verified citations, so an uncited claim is never shown as cited. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from rag.text.sentences import sentence_spans

MAX_CITATIONS = 3
_GROUP = re.compile(r"\s*\[([^\[\]\n]{1,400})\](?:\((?:[^()\s]{1,400})\))?")
_PMID_PREFIX = re.compile(r"\bPMIDs?\s*:?\s*", re.IGNORECASE)
_SEPARATORS = re.compile(r"[,;\s]+|\band\b")
_DIGITS = re.compile(r"\d{1,9}")
_PUBMED_URL = re.compile(r"https?://[\w.]*(?:pubmed|ncbi)[\w./]*?/(\d{1,9})/?", re.IGNORECASE)
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")


@dataclass(frozen=True, slots=True)
class AnswerSentence:
    """One sentence of a cited answer: its text, verified citations and removed ones."""

    text: str
    citations: tuple[str, ...] = ()
    removed: tuple[str, ...] = field(default=())
    # how well the cited documents back the sentence (rag.answering.support); None: not scored
    support: float | None = None
    supported: bool | None = None
    # what the cited text does not back (rag.answering.support), when unsupported
    problems: tuple[str, ...] = ()

    @property
    def flagged(self) -> bool:
        """Return whether a citation was removed or none is left."""
        return bool(self.removed) or not self.citations

    @property
    def unsupported(self) -> bool:
        """Return whether the sentence was scored and its cited documents do not back it."""
        return self.supported is False

    def rendered(self) -> str:
        """Return the sentence with its verified PMIDs in square brackets before the full stop.

        >>> AnswerSentence("Aspirin helps.", ("1", "2")).rendered()
        'Aspirin helps [1, 2].'
        >>> AnswerSentence("Uncited claim.").rendered()
        'Uncited claim.'
        >>> AnswerSentence("Aspirin cures diabetes.", ("1",), supported=False).rendered()
        'Aspirin cures diabetes [1]. (not supported by the cited abstract)'
        """
        if not self.citations:
            return self.text
        body = self.text.rstrip()
        stop = ""
        while body and body[-1] in ".!?":
            stop = body[-1] + stop
            body = body[:-1].rstrip()
        mark = " (not supported by the cited abstract)" if self.unsupported else ""
        return f"{body} [{', '.join(self.citations)}]{stop}{mark}"


@dataclass(frozen=True, slots=True)
class CitedAnswer:
    """An answer whose sentences carry checked citations."""

    sentences: tuple[AnswerSentence, ...] = ()

    @property
    def text(self) -> str:
        """Return the answer with PMIDs in square brackets (only verified ones)."""
        return " ".join(s.rendered() for s in self.sentences)

    @property
    def cited_pmids(self) -> tuple[str, ...]:
        """Return every verified PMID in order of first citation."""
        return tuple(dict.fromkeys(p for s in self.sentences for p in s.citations))

    @property
    def verified_sentences(self) -> int:
        """Return how many sentences are not flagged."""
        return sum(not s.flagged for s in self.sentences)


def _citation_items(content: str, allowed: Collection[str]) -> list[str] | None:
    """Return the ids of a bracket group, or ``None`` when it is not a citation group."""
    stripped = content.strip()
    if stripped in allowed:
        return [stripped]
    stripped = _PUBMED_URL.sub(lambda m: m.group(1), stripped)
    stripped = _PMID_PREFIX.sub(" ", stripped)
    items = [i for i in _SEPARATORS.split(stripped) if i]
    if not items:
        return None
    if all(_DIGITS.fullmatch(i) or i in allowed for i in items):
        return items
    return None


def _strip_groups(sentence: str, allowed: Collection[str]) -> tuple[list[str], list[str], str]:
    """Split a sentence into (leading citations, other citations, text without them)."""
    leading: list[str] = []
    others: list[str] = []
    kept: list[str] = []
    position = 0
    at_start = True
    for match in _GROUP.finditer(sentence):
        items = _citation_items(match.group(1), allowed)
        if items is None:
            continue
        before = sentence[position : match.start()]
        if before.strip():
            at_start = False
        kept.append(before)
        (leading if at_start else others).extend(items)
        position = match.end()
    kept.append(sentence[position:])
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", " ".join("".join(kept).split()))
    return leading, others, text


def check_citations(
    raw: str, allowed: Collection[str], *, limit: int = MAX_CITATIONS
) -> CitedAnswer:
    """Parse a model's cited answer and keep only citations of ``allowed`` documents.

    Args:
        raw: the answer as the model wrote it.
        allowed: the PMIDs (or document ids) of the snippets the model was shown.
        limit: the most citations a sentence may keep.

    Returns:
        The sentences with verified citations; removed ones are listed per sentence.

    Examples:
        >>> answer = check_citations("A is B [1, 9]. C is D. [2]", {"1", "2"})
        >>> [(s.text, s.citations, s.removed) for s in answer.sentences]
        [('A is B.', ('1',), ('9',)), ('C is D.', ('2',), ())]
        >>> answer.text
        'A is B [1]. C is D [2].'
    """
    pieces: list[tuple[str, list[str]]] = []
    for begin, end in sentence_spans(raw):
        leading, others, text = _strip_groups(raw[begin:end], allowed)
        if pieces and leading:
            # "claim. [1] Next claim": the group closes the sentence before it
            pieces[-1][1].extend(leading)
            leading = []
        if not text.strip(" .;,:"):
            if pieces:
                pieces[-1][1].extend(others)
            continue
        pieces.append((text, leading + others))
    return CitedAnswer(tuple(_checked(text, items, allowed, limit) for text, items in pieces))


def _checked(text: str, items: list[str], allowed: Collection[str], limit: int) -> AnswerSentence:
    unique = list(dict.fromkeys(items))
    valid = [i for i in unique if i in allowed]
    removed = [i for i in unique if i not in allowed] + valid[limit:]
    return AnswerSentence(text, tuple(valid[:limit]), tuple(removed))

"""BioASQ task-b phase A measures for one question: documents, concepts and snippets.

Pure functions that follow the official evaluator (BioASQ/Evaluation-Measures, ``EvaluatorTask1b``)
including its quirks; ``evaluators.bioasq`` aggregates them. Nothing here reads files, logs or
mutates its arguments: the official code changes its input lists while scoring, so every
function works on its own copies.

The ``version`` argument is the evaluator's ``-e`` flag (2, 3, 5, 8 or 9); here it only changes
the divisor of average precision (see ``ap_divisor``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evaluators.model import Snippet

VERSIONS = (2, 3, 5, 8, 9)
EPSILON = 1e-5  # added to each AP before the logarithm of GMAP


@dataclass(frozen=True, slots=True)
class RankedScores:
    """Per-question scores of a ranked list (documents, concepts or snippets).

    ``average_precision`` is ``None`` where the official evaluator computes 0/0 (NaN): snippet
    AP of a question without gold snippets under versions 2, 8 and 9.
    """

    precision: float
    recall: float
    f1: float
    average_precision: float | None


@dataclass(frozen=True, slots=True)
class Span:
    """A snippet reduced to what scoring uses; ``end`` is inclusive, sections are cut names."""

    document: str
    begin_section: str
    end_section: str
    begin: int
    end: int

    @property
    def size(self) -> int:
        """Return the number of characters, counting both ends (``end - begin + 1``)."""
        return self.end - self.begin + 1

    @property
    def pmid(self) -> str:
        """Return the last path segment of the document URL (the PMID for PubMed URLs)."""
        return self.document.split("/")[-1]


def ap_divisor(version: int, gold_size: int) -> int:
    """Return what the sum of precisions is divided by to give average precision.

    Version 2 divides by the number of gold items, versions 3 and 5 by 10, and versions 8 and 9
    by ``min(10, |gold|)`` (the "BioASQ modification").

    Args:
        version: the official evaluator's version flag.
        gold_size: the number of gold items (after de-duplication or merging).

    Returns:
        The divisor; 0 when the gold list is empty under versions 2, 8 and 9.

    >>> ap_divisor(2, 12), ap_divisor(5, 3), ap_divisor(8, 3), ap_divisor(9, 12)
    (12, 10, 3, 10)
    """
    if version == 2:
        return gold_size
    if version in (3, 5):
        return 10
    return min(10, gold_size)


def unique(items: Iterable[str]) -> tuple[str, ...]:
    """Return ``items`` without repetitions, keeping each first occurrence (official parsing)."""
    return tuple(dict.fromkeys(items))


def _f1(precision: float, recall: float) -> float:
    total = precision + recall
    return 2 * precision * recall / total if precision and recall and total else 0.0


def list_scores(gold: Sequence[str], ranked: Sequence[str], version: int) -> RankedScores:
    """Score a ranked list of documents or concepts against the gold list.

    P = |R ∩ G| / |R|, R = |R ∩ G| / |G|, F1 = 2PR / (P + R);
    AP = Σ_r P@r · rel(r) / ``ap_divisor``. Both lists are de-duplicated first. An empty
    submission scores 0 everywhere; so does AP when no submitted item is relevant (which also
    covers an empty gold list).

    Args:
        gold: the gold items (full URLs, compared as exact strings).
        ranked: the submitted items in rank order (not truncated to 10).
        version: the official evaluator's version flag.

    Returns:
        Precision, recall, F1 and average precision of the question.

    >>> s = list_scores(["d1", "d2", "d3"], ["d1", "x", "d2", "y", "d3"], 8)
    >>> round(s.precision, 6), s.recall, round(s.average_precision or 0, 6)
    (0.6, 1.0, 0.755556)
    """
    gold_items = unique(gold)
    submitted = unique(ranked)
    if not submitted:
        return RankedScores(0.0, 0.0, 0.0, 0.0)
    gold_set = set(gold_items)
    hits = 0
    precision_sum = 0.0
    for rank, item in enumerate(submitted, start=1):
        if item in gold_set:
            hits += 1
            precision_sum += hits / rank
    precision = hits / len(submitted)
    recall = hits / len(gold_items) if gold_items else 0.0
    ap = precision_sum / ap_divisor(version, len(gold_items)) if hits else 0.0
    return RankedScores(precision, recall, _f1(precision, recall), ap)


def section_name(section: str) -> str:
    """Return a section name as the official parser keeps it: the part after the first dot.

    >>> section_name("sections.0"), section_name("abstract"), section_name("a.b.c")
    ('0', 'abstract', 'b.c')
    """
    return section[section.find(".") + 1 :]


def span(snippet: Snippet) -> Span:
    """Return the scoring view of a snippet (section names cut, offsets as given)."""
    return Span(
        snippet.document,
        section_name(snippet.begin_section),
        section_name(snippet.end_section),
        snippet.offset_begin,
        snippet.offset_end,
    )


def _same_sections(system: Span, gold: Span) -> bool:
    # Official special case: a system snippet in section "0" also matches a gold snippet whose
    # begin section is "abstract" (end sections are not compared then).
    if system.begin_section == gold.begin_section and system.end_section == gold.end_section:
        return True
    return system.begin_section == "0" and gold.begin_section == "abstract"


def overlap(system: Span, gold: Span) -> int:
    """Return the number of character positions two snippets share (0 in different sections).

    Documents are not compared here; callers pick the gold snippets of the same document.

    >>> overlap(Span("d", "0", "0", 50, 149), Span("d", "abstract", "abstract", 0, 99))
    50
    """
    if not _same_sections(system, gold) or system.begin > gold.end or system.end < gold.begin:
        return 0
    return min(system.end, gold.end) - max(system.begin, gold.begin) + 1


def _merge_pass(spans: Sequence[Span]) -> list[Span]:
    # One run of the official concatenation loop, index arithmetic included: after a merge the
    # inner loop restarts at 1, and removing an item before position i shifts what i points at.
    # The result is usually the union of overlapping ranges, but not always (see docs/bioasq.md).
    items = list(spans)
    i = 0
    while i < len(items):
        j = 0
        while j < len(items) and i < len(items):
            a, b = items[i], items[j]
            if (
                j != i
                and a.document == b.document
                and a.begin_section == b.begin_section
                and a.end_section == b.end_section
                and not (a.begin > b.end or a.end < b.begin)
            ):
                items[i] = Span(
                    a.document, a.begin_section, a.end_section,
                    min(a.begin, b.begin), max(a.end, b.end),
                )  # fmt: skip
                del items[j]
                j = 1
                continue
            j += 1
        i += 1
    return items


def merged(spans: Sequence[Span], passes: int = 1) -> tuple[Span, ...]:
    """Return the snippets with overlapping ones of the same document and sections merged.

    Args:
        spans: snippets in file order.
        passes: how many times the official merge loop runs (it runs twice on most questions
            because the evaluator scores documents and snippets in two loops over the same lists).

    Returns:
        The merged snippets, in the order the official loop leaves them.

    >>> merged([Span("d", "0", "0", 10, 59), Span("d", "0", "0", 40, 89)])
    (Span(document='d', begin_section='0', end_section='0', begin=10, end=89),)
    """
    items = list(spans)
    for _ in range(passes):
        items = _merge_pass(items)
    return tuple(items)


def _pmid_overlap(system: Span, gold: Sequence[Span]) -> int:
    return sum(overlap(system, g) for g in gold if g.pmid == system.pmid)


def _url_overlap(system: Span, gold: Sequence[Span]) -> int:
    return sum(overlap(system, g) for g in gold if g.document == system.document)


def snippet_scores(gold: Sequence[Span], system: Sequence[Span], version: int) -> RankedScores:
    """Score merged system snippets against merged gold snippets by character overlap.

    P = Σ overlap / Σ |s|, R = Σ overlap / Σ |g| (snippets matched by PMID);
    AP = Σ_r P@r · rel(r) / ``ap_divisor(version, len(gold))`` where P@r is the overlap
    precision of the first r snippets (matched by full document URL) and rel(r) is 1 when any
    gold snippet comes from the r-th snippet's document, overlapping or not (official quirk, so
    AP can exceed 1). An empty submission has P = R = F1 = 0.

    Args:
        gold: merged gold snippets.
        system: merged system snippets in rank order.
        version: the official evaluator's version flag.

    Returns:
        The scores; ``average_precision`` is ``None`` where the official code divides 0 by 0.

    >>> g = [Span("d", "0", "0", 0, 99)]
    >>> s = snippet_scores(g, [Span("d", "0", "0", 50, 149), Span("e", "0", "0", 0, 99)], 8)
    >>> s.precision, s.recall, s.average_precision
    (0.25, 0.5, 0.5)
    """
    system_size = sum(s.size for s in system)
    gold_size = sum(g.size for g in gold)
    shared = sum(_pmid_overlap(s, gold) for s in system)
    precision = shared / system_size if system and system_size else 0.0
    recall = shared / gold_size if system and gold_size else 0.0
    return RankedScores(
        precision, recall, _f1(precision, recall), _snippet_ap(gold, system, version)
    )


def _snippet_ap(gold: Sequence[Span], system: Sequence[Span], version: int) -> float | None:
    gold_documents = {g.document for g in gold}
    total = 0.0
    shared = 0
    size = 0
    for s in system:
        shared += _url_overlap(s, gold)
        size += s.size
        if size == 0:
            return None  # official: 0/0 precision poisons the sum
        if s.document in gold_documents:
            total += shared / size
    divisor = ap_divisor(version, len(gold))
    # An empty gold list (the only way to get divisor 0) leaves total at 0: official 0/0.
    return total / divisor if divisor else None


def mean_average_precision(aps: Sequence[float | None]) -> float:
    """Return the arithmetic mean of APs, an undefined AP counting as 0 (official).

    >>> mean_average_precision([0.5, None, 1.0])
    0.5
    """
    return sum(a or 0.0 for a in aps) / len(aps) if aps else 0.0


def gmap(aps: Sequence[float | None], *, snippets: bool = False) -> float:
    """Return exp(mean(ln(AP + ε))), ε = 1e-5, as the official evaluator computes it.

    For documents and concepts an undefined AP counts as 0 (ln ε). For snippets
    (``snippets=True``) an undefined AP adds nothing to the sum of logarithms (as if AP were
    1 - ε) and a sum that is exactly 0 gives 0.

    Args:
        aps: the per-question average precisions.
        snippets: apply the snippet rules.

    Returns:
        The geometric mean; 0 for an empty list.

    >>> round(gmap([1.0, 0.0]), 6)
    0.003162
    """
    if not aps:
        return 0.0
    logs = 0.0
    for a in aps:
        if a is not None:
            logs += math.log(a + EPSILON)
        elif not snippets:
            logs += math.log(EPSILON)
    if snippets and logs == 0.0:
        return 0.0
    return math.exp(logs / len(aps))

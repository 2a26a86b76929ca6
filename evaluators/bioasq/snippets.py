"""BioASQ task-b snippet measures for one question: character overlap P, R, F1 and AP.

Pure functions that follow the official evaluator (BioASQ/Evaluation-Measures), quirks included:
section names cut after the first dot, overlapping snippets merged per document and sections,
inclusive lengths, the "0" against "abstract" special case, PMID identity for P/R but full URLs
for AP, and document-level relevance in AP. ``evaluators.bioasq.scoring`` aggregates the results.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evaluators.bioasq.ranking import RankedScores, ap_divisor, f1
from evaluators.model import Snippet


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


def _key(span: Span) -> tuple[str, str, str]:
    return span.document, span.begin_section, span.end_section


def _touches(a: Span, b: Span) -> bool:
    return not (a.begin > b.end or a.end < b.begin)


def _needs_merging(spans: Sequence[Span]) -> bool:
    # Fast check: do two snippets with the same key overlap? Reversed ranges (end < begin) are
    # left to the loop below, which treats them as the official code does.
    ranges: dict[tuple[str, str, str], list[tuple[int, int]]] = defaultdict(list)
    for x in spans:
        if x.end < x.begin:
            return True
        ranges[_key(x)].append((x.begin, x.end))
    for found in ranges.values():
        found.sort()
        for (_, end), (begin, _) in itertools.pairwise(found):
            if begin <= end:
                return True
    return False


def _merge_pass(spans: Sequence[Span]) -> list[Span]:
    # One run of the official concatenation loop, index arithmetic included: after a merge the
    # inner loop restarts at 1, and removing an item before position i shifts what i points at.
    # For well-formed snippets this yields the union of each group of overlapping ones, placed
    # where the group's first member was.
    items = list(spans)
    i = 0
    while i < len(items):
        j = 0
        while j < len(items) and i < len(items):
            a, b = items[i], items[j]
            if j != i and _key(a) == _key(b) and _touches(a, b):
                items[i] = Span(*_key(a), min(a.begin, b.begin), max(a.end, b.end))
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
        if not _needs_merging(items):
            break
        items = _merge_pass(items)
    return tuple(items)


def _by(gold: Sequence[Span], key: Callable[[Span], str]) -> dict[str, list[Span]]:
    groups: dict[str, list[Span]] = defaultdict(list)
    for g in gold:
        groups[key(g)].append(g)
    return groups


def _shared(system: Span, gold: Sequence[Span]) -> int:
    return sum(overlap(system, g) for g in gold)


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
    by_pmid = _by(gold, lambda g: g.pmid)
    shared = sum(_shared(s, by_pmid.get(s.pmid, ())) for s in system)
    precision = shared / system_size if system and system_size else 0.0
    recall = shared / gold_size if system and gold_size else 0.0
    return RankedScores(
        precision, recall, f1(precision, recall), _snippet_ap(gold, system, version)
    )


def _snippet_ap(gold: Sequence[Span], system: Sequence[Span], version: int) -> float | None:
    by_url = _by(gold, lambda g: g.document)
    total = 0.0
    shared = 0
    size = 0
    for s in system:
        shared += _shared(s, by_url.get(s.document, ()))
        size += s.size
        if size == 0:
            return None  # official: 0/0 precision poisons the sum
        if s.document in by_url:
            total += shared / size
    divisor = ap_divisor(version, len(gold))
    # An empty gold list (the only way to get divisor 0) leaves total at 0: official 0/0.
    return total / divisor if divisor else None

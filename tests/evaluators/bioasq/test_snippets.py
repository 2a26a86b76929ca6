"""Snippet measures: section names, overlap, merging, character P/R/F1 and AP."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluators.bioasq.snippets import Span, merged, overlap, section_name, snippet_scores, span
from tests.plugins.bioasq import snip


@pytest.mark.parametrize(
    ("raw", "cut"),
    [
        ("sections.0", "0"),
        ("sections.12", "12"),
        ("abstract", "abstract"),
        ("title", "title"),
        ("a.b.c", "b.c"),
        ("", ""),
    ],
)
def test_section_names_are_cut_after_the_first_dot(raw: str, cut: str) -> None:
    assert section_name(raw) == cut


def s(begin: int, end: int, section: str = "abstract", document: str = "d") -> Span:
    return Span(document, section, section, begin, end)


@pytest.mark.parametrize(
    ("system", "gold", "shared"),
    [
        (s(0, 9), s(10, 19), 0),  # adjacent: ends are inclusive
        (s(0, 10), s(10, 19), 1),
        (s(5, 14), s(0, 99), 10),
        (s(0, 99), s(5, 14), 10),
        (s(50, 149), s(0, 99), 50),
        (s(0, 9, "title"), s(0, 9), 0),  # different sections
        (s(0, 9, "0"), s(0, 99), 10),  # official special case: system "0" vs gold "abstract"
        (s(0, 9), s(0, 99, "0"), 0),  # ... but not the other way round
    ],
)
def test_overlap_table(system: Span, gold: Span, shared: int) -> None:
    assert overlap(system, gold) == shared


def test_span_cuts_sections_and_keeps_offsets() -> None:
    assert span(snip(7, 3, 40, "sections.0")) == Span(snip(7, 3, 40).document, "0", "0", 3, 40)
    assert span(snip(7, 3, 40)).pmid == "7"
    assert span(snip(7, 3, 40)).size == 38


def test_merging_joins_chains_of_overlapping_snippets() -> None:
    spans = [s(0, 10), s(20, 30), s(5, 25), s(40, 50), s(0, 10, "title"), s(45, 60, document="e")]
    assert merged(spans) == (s(0, 30), s(40, 50), s(0, 10, "title"), s(45, 60, document="e"))


def _union(spans: list[Span]) -> set[tuple[str, str, int]]:
    return {(x.document, x.begin_section, i) for x in spans for i in range(x.begin, x.end + 1)}


@given(
    st.lists(
        st.tuples(
            st.sampled_from("de"),
            st.sampled_from(["abstract", "title"]),
            st.integers(0, 60),
            st.integers(0, 15),
        ),
        max_size=8,
    )
)
def test_merging_gives_the_union_in_first_member_order(
    raw: list[tuple[str, str, int, int]],
) -> None:
    spans = [s(b, b + n, sec, d) for d, sec, b, n in raw]
    result = merged(spans, passes=2)
    assert _union(list(result)) == _union(spans)
    for i, a in enumerate(result):  # no two merged snippets of the same key overlap
        for b in result[i + 1 :]:
            same_key = (a.document, a.begin_section) == (b.document, b.begin_section)
            assert not same_key or a.end < b.begin or b.end < a.begin
    # each merged snippet sits where its first member was
    firsts = [min(i for i, x in enumerate(spans) if _union([x]) <= _union([m])) for m in result]
    assert firsts == sorted(firsts)


def test_snippet_precision_uses_the_pmid_and_ap_the_full_url() -> None:
    gold = [s(0, 99, document="http://www.ncbi.nlm.nih.gov/pubmed/1")]
    system = [s(0, 99, document="https://pubmed.ncbi.nlm.nih.gov/1")]
    scores = snippet_scores(gold, system, 8)
    assert (scores.precision, scores.recall, scores.f1) == (1.0, 1.0, 1.0)
    assert scores.average_precision == 0.0


def test_snippet_ap_counts_gold_documents_as_relevant_without_overlap() -> None:
    gold = [s(0, 99)]
    system = [s(0, 99), s(200, 299)]
    scores = snippet_scores(gold, system, 8)
    assert scores.precision == 0.5
    assert scores.average_precision == 1.5  # (1·1 + 0.5·1) / min(10, 1)


def test_snippet_ap_without_gold_snippets_is_undefined_except_with_divisor_10() -> None:
    system = [s(0, 9)]
    assert snippet_scores([], system, 8).average_precision is None
    assert snippet_scores([], system, 2).average_precision is None
    assert snippet_scores([], system, 5).average_precision == 0.0
    empty = snippet_scores([s(0, 9)], [], 8)
    assert (empty.precision, empty.recall, empty.f1, empty.average_precision) == (0, 0, 0, 0)

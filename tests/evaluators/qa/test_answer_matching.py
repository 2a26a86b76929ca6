"""Answer matching: GERBIL's counter (current and legacy), the classic script, strict rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode

from evaluators.knowledge.bases import InMemoryKnowledgeBase
from evaluators.metrics import Counts
from evaluators.model import AnswerSet, AnswerValue
from evaluators.qa.answer_matching import (
    Lookups,
    Rule,
    _first_pass,
    _keyed,
    classic_count,
    maximum_matching,
    strict_count,
)
from evaluators.qa.gerbil_counter import (
    Era,
    GerbilAnswers,
    Meaning,
    gerbil_count,
    gerbil_gold,
    gerbil_system,
    greedy_meanings,
)
from evaluators.qa.normalisation import value_key
from vocab.standard import XSD

DBR = "http://dbpedia.org/resource/"
NO_KB = Lookups(None, "en")


def strings(*values: str) -> GerbilAnswers:
    return GerbilAnswers(strings=values)


def resources(*uris: str) -> GerbilAnswers:
    return GerbilAnswers(annotations=tuple(Meaning(u, frozenset({u})) for u in uris))


# QAMatchingsCounterTest: (system, gold) -> (tp, fp, fn)
COUNTER_TABLE = [
    (strings(), strings(), (0, 0, 0)),
    (resources("http://kb.com/1"), strings(), (0, 1, 0)),
    (strings(), resources("http://kb.com/1"), (0, 0, 1)),
    (resources("http://kb.com/1"), resources("http://kb.com/1"), (1, 0, 0)),
    (
        resources("http://kb.com/3", "http://kb.com/1", "http://kb.com/2"),
        resources("http://kb.com/1", "http://kb.com/2", "http://kb.com/3"),
        (3, 0, 0),
    ),
    (
        strings("http://kb.org/2", "http://kb.org/3", "http://kb.org/1"),
        resources("http://kb.org/1", "http://kb.org/2", "http://kb.org/3"),
        (3, 0, 0),
    ),
    (
        strings("http://kb.com/1", "http://ukb.com/2"),
        strings("http://kb.com/1", "http://kb.com/2", "http://kb.com/3"),
        (1, 1, 2),
    ),
]


@pytest.mark.parametrize(("system", "gold", "expected"), COUNTER_TABLE)
def test_gerbil_counter_vectors(
    system: GerbilAnswers, gold: GerbilAnswers, expected: tuple
) -> None:
    assert gerbil_count(gold, system, NO_KB).counts == Counts(*expected)


def test_label_lookup_row_with_an_in_memory_kb() -> None:
    # the network-dependent row: "Paris"@en resolved to two resources on DBpedia
    kb = InMemoryKnowledgeBase(
        labels=[(DBR + "Paris", "Paris", "en"), (DBR + "Paris,_Arkansas", "Paris", "en")]
    )
    result = gerbil_count(resources(DBR + "Paris"), strings('"Paris"@en'), Lookups(kb, "de"))
    assert result.counts == Counts(1, 1, 0)
    assert [m.rule for m in result.matches] == [Rule.LABEL]


def test_a_literal_found_by_no_lookup_is_one_false_positive() -> None:
    result = gerbil_count(strings("8"), strings("9"), NO_KB)
    assert result.counts == Counts(0, 1, 1)


def test_legacy_matching_counts_two_emerging_entities_as_a_match() -> None:
    # gerbil-qa.md §3.6: before September 2024 gold "8" and system "9" could be a TP
    assert gerbil_count(strings("8"), strings("9"), NO_KB, era=Era.Y2019).counts == Counts(1, 0, 0)
    # but a wrong DBpedia resource is InKB and matches no EE
    legacy = gerbil_count(resources(DBR + "A"), strings("Bla"), NO_KB, era=Era.Y2019)
    assert legacy.counts == Counts(0, 1, 1)


def test_system_uris_are_sameas_expanded_but_gold_ones_are_not() -> None:
    kb = InMemoryKnowledgeBase(same_as=[(DBR + "Berlin", "http://www.wikidata.org/entity/Q64")])
    lookups = Lookups(kb, "en")
    gold = gerbil_gold([AnswerSet((NamedNode(DBR + "Berlin"),))])
    system = gerbil_system([AnswerSet((NamedNode("http://www.wikidata.org/entity/Q64"),))], lookups)
    assert gerbil_count(gold, system, lookups).counts == Counts(1, 0, 0)
    # GERBIL's static en.dbpedia.org fix works one way: it rewrites system URIs only
    gold = gerbil_gold([AnswerSet((NamedNode("http://en.dbpedia.org/resource/X"),))])
    system = gerbil_system([AnswerSet((NamedNode(DBR + "X"),))], NO_KB)
    assert gerbil_count(gold, system, NO_KB).counts == Counts(0, 1, 1)


def test_mixed_gold_sets_stay_strings_and_url_answers_never_match_them() -> None:
    # gerbil-qa.md §3.2: one non-IRI gold answer makes every gold answer a string
    answers = [AnswerSet((NamedNode(DBR + "A"), Literal("5")))]
    gold = gerbil_gold(answers)
    assert gold.strings == (DBR + "A", "5") and not gold.annotations
    result = gerbil_count(gold, gerbil_system(answers, NO_KB), NO_KB)
    assert result.counts == Counts(1, 1, 1)
    legacy = gerbil_count(gold, gerbil_system(answers, NO_KB), NO_KB, era=Era.Y2019)
    assert legacy.counts == Counts(2, 0, 0)


def test_booleans_are_the_strings_true_and_false() -> None:
    gold = gerbil_gold([AnswerSet(boolean=True)])
    assert gerbil_count(
        gold, gerbil_system([AnswerSet(boolean=True)], NO_KB), NO_KB
    ).counts == Counts(1, 0, 0)
    wrong = gerbil_count(gold, gerbil_system([AnswerSet(boolean=False)], NO_KB), NO_KB)
    assert wrong.counts == Counts(0, 1, 1)
    empty = gerbil_count(gold, gerbil_system(None, NO_KB), NO_KB)
    assert empty.counts == Counts(0, 0, 1)


def test_greedy_meanings_take_the_first_unused_overlapping_element() -> None:
    a = Meaning("a", frozenset({"x", "y"}))
    b = Meaning("b", frozenset({"y"}))
    # the first gold element takes the first overlapping system element, leaving none for the second
    assert [p[:2] for p in greedy_meanings([a, b], [b, a], emerging=False)] == [(0, 0), (1, 1)]
    assert [p[:2] for p in greedy_meanings([b, b], [a], emerging=False)] == [(0, 0)]


def test_classic_normalisation_rules() -> None:
    gold = [AnswerSet((Literal("8"),))]
    assert classic_count(gold, [AnswerSet((Literal("8.0"),))]).counts == Counts(1, 0, 0)
    uri = [AnswerSet((NamedNode(DBR + "Caf%C3%A9"),))]
    assert classic_count(uri, [AnswerSet((Literal(" " + DBR + "Café"),))]).counts == Counts(1, 0, 0)
    assert classic_count(gold, [AnswerSet((Literal("8.5"),))]).counts == Counts(0, 1, 1)
    assert classic_count([AnswerSet(boolean=True)], [AnswerSet(boolean=True)]).counts == Counts(
        1, 0, 0
    )


def one(*values: AnswerValue) -> list[AnswerSet]:
    return [AnswerSet(tuple(values))]


STRICT_TABLE = [
    # gold, system, counts, rule of the match
    (Literal("8", datatype=XSD.integer), Literal("8.0"), (1, 0, 0), Rule.NUMERIC),
    (
        Literal("1961-08-04"),
        Literal("1961-08-04T00:00:00Z", datatype=XSD.dateTime),
        (1, 0, 0),
        Rule.DATE,
    ),
    (Literal("true", datatype=XSD.boolean), Literal("True"), (1, 0, 0), Rule.BOOLEAN),
    (Literal("Paris", language="en"), Literal("Paris"), (1, 0, 0), Rule.STRING),
    (Literal("Paris", language="en"), Literal("Paris", language="fr"), (0, 1, 1), None),
    (
        NamedNode(DBR + "Berlin"),
        NamedNode("https://dbpedia.org/resource/Berlin"),
        (1, 0, 0),
        Rule.URI,
    ),
    (
        NamedNode(DBR + "Berlin"),
        Literal("https://en.wikipedia.org/wiki/Berlin"),
        (1, 0, 0),
        Rule.URL,
    ),
    (
        NamedNode("http://www.wikidata.org/entity/Q42"),
        NamedNode("https://www.wikidata.org/wiki/Q42"),
        (1, 0, 0),
        Rule.URI,
    ),
    (NamedNode(DBR + "Berlin"), NamedNode(DBR + "Berlin"), (1, 0, 0), Rule.EXACT),
    (Literal("8"), Literal("9"), (0, 1, 1), None),
]


@pytest.mark.parametrize(("gold", "system", "counts", "rule"), STRICT_TABLE)
def test_strict_rules(
    gold: AnswerValue, system: AnswerValue, counts: tuple, rule: Rule | None
) -> None:
    result = strict_count(one(gold), one(system), NO_KB)
    assert result.counts == Counts(*counts)
    assert [m.rule for m in result.matches] == ([rule] if rule else [])


def test_gerbil_does_not_apply_the_strict_rules() -> None:
    for gold, system, _counts, rule in STRICT_TABLE:
        if rule in (Rule.NUMERIC, Rule.DATE, Rule.BOOLEAN):
            g = gerbil_gold(one(gold))
            assert gerbil_count(g, gerbil_system(one(system), NO_KB), NO_KB).counts.tp == 0


def test_strict_sameas_works_in_both_directions_and_labels_reach_resources() -> None:
    kb = InMemoryKnowledgeBase(
        same_as=[(DBR + "Berlin", "http://www.wikidata.org/entity/Q64")],
        labels=[(DBR + "Bruce_Wayne", "Bruce Wayne", "en")],
    )
    lookups = Lookups(kb, "en")
    forward = strict_count(
        one(NamedNode(DBR + "Berlin")),
        one(NamedNode("http://www.wikidata.org/entity/Q64")),
        lookups,
    )
    backward = strict_count(
        one(NamedNode("http://www.wikidata.org/entity/Q64")),
        one(NamedNode(DBR + "Berlin")),
        lookups,
    )
    assert forward.counts == backward.counts == Counts(1, 0, 0)
    assert forward.matches[0].rule is Rule.SAME_AS
    label = strict_count(one(Literal("Bruce Wayne")), one(NamedNode(DBR + "Bruce_Wayne")), lookups)
    assert label.counts == Counts(1, 0, 0) and label.matches[0].rule is Rule.LABEL
    assert (
        strict_count(
            one(NamedNode(DBR + "Bruce_Wayne")), one(Literal("Bruce Wayne")), lookups
        ).counts.tp
        == 1
    )


def test_strict_counts_values_equal_under_the_rules_once() -> None:
    result = strict_count(one(Literal("8")), one(Literal("8"), Literal("8.0"), Literal("9")), NO_KB)
    assert result.counts == Counts(1, 1, 0)


def test_maximum_matching_beats_greedy_on_overlaps() -> None:
    assert len(maximum_matching([[0, 1], [0]], 2)) == 2
    assert maximum_matching([[], [0]], 1) == {1: 0}
    assert maximum_matching([[0], [0]], 1) in ({0: 0}, {1: 0})


values = st.lists(
    st.one_of(
        st.integers(0, 30).map(lambda i: NamedNode(f"{DBR}R{i}")),
        st.integers(0, 30).map(lambda i: Literal(str(i))),
    ),
    max_size=12,
    unique=True,
)


@given(values, values)
def test_every_matching_is_order_independent_and_bounded(gold: list, system: list) -> None:
    for count in (
        lambda g, s: strict_count(one(*g), one(*s), NO_KB),
        lambda g, s: classic_count(one(*g), one(*s)),
        lambda g, s: gerbil_count(gerbil_gold(one(*g)), gerbil_system(one(*s), NO_KB), NO_KB),
    ):
        a = count(gold, system).counts
        b = count(list(reversed(gold)), list(reversed(system))).counts
        assert a == b
        assert a.tp + a.fp == len(system) and a.tp + a.fn == len(gold)


@given(values)
def test_a_perfect_answer_has_no_errors_in_any_matching(gold: list) -> None:
    perfect = Counts(len(gold), 0, 0)
    assert strict_count(one(*gold), one(*gold), NO_KB).counts == perfect
    assert classic_count(one(*gold), one(*gold)).counts == perfect
    g = gerbil_gold(one(*gold))
    legacy = gerbil_count(g, gerbil_system(one(*gold), NO_KB), NO_KB, era=Era.Y2019)
    assert legacy.counts == perfect
    if len({isinstance(v, NamedNode) for v in gold}) < 2:  # mixed sets: GERBIL's quirk (above)
        assert gerbil_count(g, gerbil_system(one(*gold), NO_KB), NO_KB).counts == perfect


def _first_compatible_pairs(gold: list[AnswerValue], system: list[AnswerValue]) -> dict[int, int]:
    """The rule the strict first pass keeps, written the direct (quadratic) way."""

    def tag(v: AnswerValue) -> str | None:
        return v.language.lower() if isinstance(v, Literal) and v.language else None

    pairs: dict[int, int] = {}
    for j, s in enumerate(system):
        for i, g in enumerate(gold):
            same_tags = tag(g) is None or tag(s) is None or tag(g) == tag(s)
            if i not in pairs and value_key(g) == value_key(s) and same_tags:
                pairs[i] = j
                break
    return pairs


_tagged = st.builds(
    lambda text, lang: Literal(text, language=lang) if lang else Literal(text),
    st.sampled_from(["Paris", "paris", "Rome"]),
    st.sampled_from([None, "en", "EN", "de", "fr"]),
)


@given(st.lists(_tagged, max_size=8), st.lists(_tagged, max_size=8))
def test_the_linear_first_pass_pairs_as_the_direct_rule_does(
    gold: list[AnswerValue], system: list[AnswerValue]
) -> None:
    gold_values, gold_keys = _keyed(gold)
    system_values, system_keys = _keyed(system)
    found = _first_pass(gold_values, gold_keys, system_values, system_keys)
    assert {i: j for i, (j, _rule) in found.items()} == _first_compatible_pairs(
        gold_values, system_values
    )


def test_many_equal_literals_with_distinct_tags_all_pair() -> None:
    # 4,000 distinct language tags: en-x-a, en-x-b, ... (private-use subtags)
    tags = [f"en-x-{n:04d}" for n in range(4000)]
    gold = [AnswerSet(values=tuple(Literal("same", language=t) for t in tags))]
    system = [AnswerSet(values=tuple(Literal("same", language=t) for t in reversed(tags)))]
    counts = strict_count(gold, system, Lookups(None, "en")).counts
    assert (counts.tp, counts.fp, counts.fn) == (4000, 0, 0)

"""GERBIL QA's counters of 2018, 2019 and 2024 and the sameAs merge, on cases read from GERBIL's
source (dice-group/gerbil, branch QuestionAnswering): ``ExperimentTask`` (the merge, since
cd19d387 of 2018-04-16), ``QAMatchingsCounter`` at 63d5b352 (2018-06-07), at 846b3f12 ("fixed
#322", 2019-06-21) and at f42aa4f9 (2024-09-05), ``QAUtils.transformToAnnotations`` (Apache's
``UrlValidator`` until 6eec9429 of 2019-07-16) and ``QAMatchingsCounterTest`` as of 2018."""

from __future__ import annotations

import pytest
from pyoxigraph import Literal, NamedNode

from evaluators.knowledge.bases import InMemoryKnowledgeBase
from evaluators.metrics import Counts
from evaluators.model import AnswerSet, AnswerValue
from evaluators.qa.answer_matching import Lookups
from evaluators.qa.gerbil_counter import (
    Era,
    GerbilAnswers,
    Meaning,
    gerbil_count,
    gerbil_gold,
    gerbil_system,
)
from evaluators.qa.scoring import evaluate
from tests.plugins.scoring import DBR, answered, dataset, question

NO_KB = Lookups(None, "en")
ERAS = (Era.Y2018, Era.Y2019, Era.Y2024)


def strings(*values: str) -> GerbilAnswers:
    return GerbilAnswers(strings=values)


def resources(*uris: str) -> GerbilAnswers:
    return GerbilAnswers(annotations=tuple(Meaning(u, frozenset({u})) for u in uris))


def one(*values: AnswerValue) -> list[AnswerSet]:
    return [AnswerSet(tuple(values))]


def count(gold: list[AnswerSet], system: list[AnswerSet], era: Era, lookups: Lookups) -> Counts:
    return gerbil_count(
        gerbil_gold(gold, era=era), gerbil_system(system, lookups, era=era), lookups, era=era
    ).counts


# QAMatchingsCounterTest as GERBIL had it from 2018-04-16 on: (system, gold) -> (tp, fp, fn).
# GERBIL's test classifies every URI as InKB; the deployed classifier (ours) gives the same.
COUNTER_TEST_2018 = [
    (strings(), strings(), (0, 0, 0)),
    (strings("http://kb.com/1"), strings(), (0, 1, 0)),
    (strings(), strings("http://kb.com/1"), (0, 0, 1)),
    (strings("http://kb.com/1"), strings("http://kb.com/1"), (1, 0, 0)),
    (
        strings(*(f"http://kb.com/{i}" for i in (1, 2, 3))),
        strings(*(f"http://kb.com/{i}" for i in (1, 2, 3))),
        (3, 0, 0),
    ),
    (
        strings(*(f"http://kb.com/{i}" for i in (2, 3, 1))),
        strings(*(f"http://kb.com/{i}" for i in (1, 2, 3))),
        (3, 0, 0),
    ),
    (
        strings(*(f"http://kb.org/{i}" for i in (2, 3, 1))),
        resources(*(f"http://kb.org/{i}" for i in (1, 2, 3))),
        (3, 0, 0),
    ),
    (
        strings("http://kb.com/1", "http://ukb.com/2"),
        strings(*(f"http://kb.com/{i}" for i in (1, 2, 3))),
        (1, 1, 2),
    ),
]


@pytest.mark.parametrize(("system", "gold", "expected"), COUNTER_TEST_2018)
def test_gerbils_2018_counter_test_vectors(
    system: GerbilAnswers, gold: GerbilAnswers, expected: tuple[int, int, int]
) -> None:
    assert gerbil_count(gold, system, NO_KB, era=Era.Y2018).counts == Counts(*expected)


def test_the_2018_label_row_resolves_one_annotation_per_resource() -> None:
    kb = InMemoryKnowledgeBase(
        labels=[(DBR + "Paris", "Paris", "en"), (DBR + "Paris,_Arkansas", "Paris", "en")]
    )
    result = gerbil_count(
        resources(DBR + "Paris"), strings('"Paris"@en'), Lookups(kb, "en"), era=Era.Y2018
    )
    assert result.counts == Counts(1, 1, 0)


@pytest.mark.parametrize(
    ("gold", "system", "by_era"),
    [
        # a wrong literal: 2018 and 2024 keep the gold string (FN) and force the system's (FP);
        # June 2019 forced the gold string too, and two emerging entities match
        (("8",), ("9",), {Era.Y2018: (0, 1, 1), Era.Y2019: (1, 0, 0), Era.Y2024: (0, 1, 1)}),
        # one string right, one wrong: only the 2019 counter drops the string-phase FN
        (
            ("a", "b"),
            ("a", "c"),
            {Era.Y2018: (1, 1, 1), Era.Y2019: (2, 0, 0), Era.Y2024: (1, 1, 1)},
        ),
        # a missing string answer is an FN in every counter (2019: the forced gold annotation)
        (("a", "b"), ("a",), {Era.Y2018: (1, 0, 1), Era.Y2019: (1, 0, 1), Era.Y2024: (1, 0, 1)}),
    ],
)
def test_unmatched_gold_strings_and_string_phase_false_negatives(
    gold: tuple[str, ...], system: tuple[str, ...], by_era: dict[Era, tuple[int, int, int]]
) -> None:
    for era in ERAS:
        got = count(one(*map(Literal, gold)), one(*map(Literal, system)), era, NO_KB)
        assert got == Counts(*by_era[era]), era


def test_emerging_entities_match_each_other_until_2024() -> None:
    # two resources outside GERBIL's well-known KB namespaces
    gold, system = one(NamedNode("http://example.org/A")), one(NamedNode("http://example.org/B"))
    assert count(gold, system, Era.Y2018, NO_KB) == Counts(1, 0, 0)
    assert count(gold, system, Era.Y2019, NO_KB) == Counts(1, 0, 0)
    assert count(gold, system, Era.Y2024, NO_KB) == Counts(0, 1, 1)
    # a DBpedia resource is InKB and never matches an emerging entity
    wrong = one(NamedNode(DBR + "B"))
    assert count(gold, wrong, Era.Y2018, NO_KB) == Counts(0, 1, 1)


def test_until_july_2019_an_answer_set_is_resources_only_if_urlvalidator_accepts_all() -> None:
    written = NamedNode(DBR + "Hilde_Körber")  # non-ASCII: UrlValidator refuses it
    encoded = NamedNode(DBR + "Hilde_K%C3%B6rber")
    assert gerbil_gold(one(written), era=Era.Y2018).strings == (written.value,)
    assert gerbil_gold(one(written), era=Era.Y2024).annotations
    # the same IRI as written is an exact string in 2018; its percent-encoded form is a
    # resource that can never meet a gold string
    assert count(one(written), one(written), Era.Y2018, NO_KB) == Counts(1, 0, 0)
    assert count(one(written), one(encoded), Era.Y2018, NO_KB) == Counts(0, 1, 1)
    # since then the gold IRI is a resource and the static retriever decodes the system's
    assert count(one(written), one(encoded), Era.Y2024, NO_KB) == Counts(1, 0, 0)


# ---------------------------------------------------------------- the sameAs merge


def test_two_answers_with_one_static_sameas_set_count_once() -> None:
    # GERBIL's UriEncodingHandling makes the two written forms one closure
    plain, encoded = DBR + "Gainesville,_Florida", DBR + "Gainesville%2C_Florida"
    system = gerbil_system(one(NamedNode(plain), NamedNode(encoded)), NO_KB)
    assert [m.text for m in system.annotations] == [plain] and system.merged == (encoded,)
    for era in ERAS:
        assert count(one(NamedNode(plain)), one(NamedNode(plain), NamedNode(encoded)), era, NO_KB) == Counts(1, 0, 0)  # fmt: skip
    # http and https are not one set (the Wikipedia bridge goes one way): no merge, one FP
    https = "https://dbpedia.org/resource/Gainesville,_Florida"
    assert not gerbil_system(one(NamedNode(plain), NamedNode(https)), NO_KB).merged
    assert count(one(NamedNode(plain)), one(NamedNode(plain), NamedNode(https)), Era.Y2024, NO_KB) == Counts(1, 1, 0)  # fmt: skip


def test_two_answers_with_one_knowledge_base_sameas_set_count_once() -> None:
    # QALD-8 test question 16 lists both Frankfurt resources in its gold answers
    frankfurt, am_main, empire = (
        DBR + "Frankfurt",
        DBR + "Frankfurt-am-Main",
        DBR + "Holy_Roman_Empire",
    )
    gold = one(NamedNode(empire), NamedNode(frankfurt), NamedNode(am_main))
    system = one(NamedNode(frankfurt), NamedNode(am_main))
    linked = Lookups(InMemoryKnowledgeBase(same_as=[(am_main, frankfurt)]), "en")
    for era in ERAS:
        # without the link: two answers, two matches; with it: one answer, one match
        assert count(gold, system, era, Lookups(None, "en")) == Counts(2, 0, 1)
        assert count(gold, system, era, Lookups(linked.kb, "en")) == Counts(1, 0, 2)
    # answers whose sets only overlap stay apart: one takes the gold answer, the other is an FP
    partly = Lookups(InMemoryKnowledgeBase(same_as=[(am_main, DBR + "Frankfurt_(Main)")]), "en")
    assert count(one(NamedNode(frankfurt)), one(NamedNode(frankfurt), NamedNode(am_main)), Era.Y2024, partly) == Counts(1, 1, 0)  # fmt: skip


def test_the_merge_is_reported_and_changes_the_scores() -> None:
    frankfurt, am_main = DBR + "Frankfurt", DBR + "Frankfurt-am-Main"
    kb = InMemoryKnowledgeBase(same_as=[(am_main, frankfurt)])
    gold = dataset(question("16", [NamedNode(frankfurt), NamedNode(am_main)]))
    answers = {"16": answered(gold.questions[0], [NamedNode(frankfurt), NamedNode(am_main)])}
    for profile in ("gerbil", "gerbil-legacy", "gerbil-2018"):
        result = evaluate(gold, answers, profile=profile, kb=kb)
        qa = result.get("QA")
        assert qa is not None and (qa.value("micro_precision"), qa.value("micro_recall")) == (
            1.0,
            0.5,
        )
        assert any("1 system answer(s) counted once" in n for n in result.notes), profile
        assert qa.per_question[0].system == (frankfurt, am_main)  # both still shown
    # strict matches value by value: no merge
    strict = evaluate(gold, answers, profile="strict", kb=kb).get("QA")
    assert strict is not None and strict.value("micro_f1") == 1.0


def test_a_renamed_resource_matches_through_a_loaded_link() -> None:
    # GERBIL's DBpedia sameAs index linked the old name to the gold one (QALD-8 test, question 45)
    gold, system = one(NamedNode(DBR + "Inferno_(Brown_novel)")), one(NamedNode(DBR + "Inferno_(Dan_Brown_novel)"))  # fmt: skip
    assert count(gold, system, Era.Y2018, NO_KB) == Counts(0, 1, 1)
    links = InMemoryKnowledgeBase(
        same_as=[(DBR + "Inferno_(Dan_Brown_novel)", DBR + "Inferno_(Brown_novel)")]
    )
    assert count(gold, system, Era.Y2018, Lookups(links, "en")) == Counts(1, 0, 0)

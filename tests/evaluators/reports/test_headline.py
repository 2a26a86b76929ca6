"""Headline measures per profile and type; ranking with ties; sanity systems set apart."""

from __future__ import annotations

import pytest

from evaluators.qa.profiles import PROFILES
from evaluators.reports.headline import headline, is_sanity, rank, ranking_measures
from evaluators.results import BIOASQ_TYPES, MEASURES, QA_TYPES
from evaluators.systems.protocol import SystemKind


def test_every_profile_and_type_names_a_known_headline() -> None:
    cases = [(p, t) for p in PROFILES for t in QA_TYPES] + [("bioasq", t) for t in BIOASQ_TYPES]
    assert len(cases) == len(PROFILES) * len(QA_TYPES) + len(BIOASQ_TYPES)
    for profile, kind in cases:
        first, second = headline(profile, kind)
        assert first in MEASURES and second in MEASURES and first != second


def test_published_headlines() -> None:
    # QALD-8/9/10 (GERBIL) ranked by Macro F1 QALD; the classic tables by processed F1 and
    # F-1 Global; C2KB-style types report no Macro F1 QALD
    assert headline("gerbil-legacy") == headline("gerbil-2018") == ("macro_f1_qald", "macro_f1")
    assert headline("gerbil") == headline("strict") == ("macro_f1_qald", "macro_f1")
    assert headline("qald-classic") == ("processed_f1", "global_f1")
    assert headline("gerbil", "P2KB") == ("macro_f1", "micro_f1")
    # GERBIL's pages show no Macro F1 QALD on sub-experiment rows: AType and RE2KB rank by
    # macro F1 although they compute one (it stays in the data)
    assert (
        headline("gerbil-2018", "AType") == headline("strict", "RE2KB") == ("macro_f1", "micro_f1")
    )
    # TEXT2SPARQL'25 ranked by set_F_ndcg (set_F where no question is ordered)
    assert headline("text2sparql") == headline("text2sparql-corrected") == ("set_f_ndcg", "set_f")
    assert ranking_measures("gerbil", chosen="micro_f1") == ("micro_f1", "macro_f1_qald")
    with pytest.raises(KeyError):
        ranking_measures("gerbil", chosen="f2")


def test_rank_shares_ranks_on_ties_and_keeps_sanity_systems_apart() -> None:
    entries = [
        ("a", 0.5, 0.1),
        ("gold", 1.0, 1.0),
        ("b", 0.7, 0.2),
        ("c", 0.5, 0.1),
        ("d", None, 0.9),
    ]
    ranked = rank(
        entries,
        values=lambda e: (e[1], e[2]),
        label=lambda e: e[0],
        sanity=lambda e: e[0] == "gold",
    )
    assert [(n, e[0]) for n, e in ranked.ranked] == [(1, "b"), (2, "a"), (2, "c"), (4, "d")]
    assert [e[0] for e in ranked.sanity] == ["gold"]
    assert is_sanity(SystemKind.BUILT_IN, "gold") and not is_sanity(SystemKind.ANSWER_FILE, "gold")

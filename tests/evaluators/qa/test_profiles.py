"""The scoring-profile registry."""

from __future__ import annotations

import pytest

from evaluators.errors import UnknownSubExperimentError
from evaluators.qa.markings import MarkingMode
from evaluators.qa.profiles import PROFILES, AnswerMatching, profile
from evaluators.qa.subexperiments import SUBEXPERIMENTS
from evaluators.results import QA_TYPES
from vocab.project import QAB


def test_the_four_profiles_exist_with_distinct_vocabulary_terms() -> None:
    assert list(PROFILES) == ["strict", "gerbil", "gerbil-legacy", "qald-classic"]
    assert len({p.term for p in PROFILES.values()}) == 4
    assert all(p.term in QAB for p in PROFILES.values())


def test_profile_rules() -> None:
    strict, gerbil, legacy, classic = (profile(i) for i in PROFILES)
    assert strict.answers is AnswerMatching.STRICT and strict.markings is MarkingMode.STRICT
    assert not strict.classify_emerging and not strict.gerbil_answer_type
    assert gerbil.is_gerbil and legacy.is_gerbil and not strict.is_gerbil
    assert gerbil.markings is legacy.markings is MarkingMode.GERBIL
    assert classic.experiment_types == ("QA",) and classic.classic_aggregation
    assert strict.experiment_types == gerbil.experiment_types == QA_TYPES
    assert set(QA_TYPES) == set(SUBEXPERIMENTS)


def test_unknown_profile_error_lists_the_profiles() -> None:
    with pytest.raises(UnknownSubExperimentError, match=r"'gerbl'.*strict, gerbil, gerbil-legacy"):
        profile("gerbl")

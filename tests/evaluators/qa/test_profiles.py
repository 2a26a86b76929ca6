"""The scoring-profile registry."""

from __future__ import annotations

import pytest

from evaluators.errors import UnknownSubExperimentError
from evaluators.qa.gerbil_counter import Era
from evaluators.qa.markings import MarkingMode
from evaluators.qa.profiles import PROFILES, AnswerMatching, profile
from evaluators.qa.subexperiments import SUBEXPERIMENTS
from evaluators.results import QA_TYPES
from vocab.project import QAB


def test_the_profiles_exist_with_distinct_vocabulary_terms() -> None:
    assert list(PROFILES) == [
        "strict", "gerbil", "gerbil-legacy", "gerbil-2018", "qald-classic", "text2sparql",
        "text2sparql-2026", "text2sparql-corrected", "execution-em", "mirage",
    ]  # fmt: skip
    assert len({p.term for p in PROFILES.values()}) == len(PROFILES)
    assert all(p.term in QAB for p in PROFILES.values())
    assert [p.id for p in PROFILES.values() if p.is_text2sparql] == [
        "text2sparql", "text2sparql-2026", "text2sparql-corrected"
    ]  # fmt: skip
    assert [p.id for p in PROFILES.values() if p.family_scored] == ["execution-em", "mirage"]


def test_profile_rules() -> None:
    strict, gerbil, legacy, y2018, classic = (
        profile(i) for i in ("strict", "gerbil", "gerbil-legacy", "gerbil-2018", "qald-classic")
    )
    assert strict.answers is AnswerMatching.STRICT and strict.markings is MarkingMode.STRICT
    assert not strict.classify_emerging and not strict.gerbil_answer_type
    assert gerbil.is_gerbil and legacy.is_gerbil and y2018.is_gerbil and not strict.is_gerbil
    assert [p.era for p in (gerbil, legacy, y2018)] == [Era.Y2024, Era.Y2019, Era.Y2018]
    assert gerbil.markings is legacy.markings is y2018.markings is MarkingMode.GERBIL
    assert classic.experiment_types == ("QA",) and classic.classic_aggregation
    assert strict.experiment_types == gerbil.experiment_types == QA_TYPES
    assert set(QA_TYPES) == set(SUBEXPERIMENTS)


def test_unknown_profile_error_lists_the_profiles() -> None:
    with pytest.raises(UnknownSubExperimentError, match=r"'gerbl'.*strict, gerbil, gerbil-legacy"):
        profile("gerbl")


# A system output that writes a default boolean next to its bindings, and one that leaves its
# bindings empty (both real shapes). Gold: question 1 has answer A, question 2 is an ASK (true).
_GOLD = {
    "questions": [
        {
            "id": "1",
            "question": [{"language": "en", "string": "Which?"}],
            "answers": [
                {
                    "head": {"vars": ["x"]},
                    "results": {"bindings": [{"x": {"type": "uri", "value": "http://ex.org/A"}}]},
                }
            ],
        },
        {
            "id": "2",
            "question": [{"language": "en", "string": "Is it?"}],
            "answers": [{"head": {}, "results": {}, "boolean": True}],
        },
    ]
}
_SYSTEM = {
    "questions": [
        {
            "id": "1",
            "answers": [
                {
                    "head": {"vars": ["x"]},
                    "results": {"bindings": [{"x": {"type": "uri", "value": "http://ex.org/A"}}]},
                    "boolean": True,
                }
            ],
        },
        {"id": "2", "answers": [{"head": {}, "results": {"bindings": []}, "boolean": True}]},
    ]
}


@pytest.mark.parametrize(
    ("profile_id", "expected"),
    [
        # bindings whenever the key is there: Q1 exact (P=R=1), Q2 an empty answer (P=1, R=0)
        ("qald-classic", [(1.0, 1.0), (1.0, 0.0)]),
        ("strict", [(1.0, 1.0), (0.0, 0.0)]),
        # the union: Q1 gets an extra "true" (P=1/2), Q2 reads the boolean (correct)
        ("gerbil", [(0.5, 1.0), (1.0, 1.0)]),
        ("gerbil-legacy", [(0.5, 1.0), (1.0, 1.0)]),
        ("gerbil-2018", [(0.5, 1.0), (1.0, 1.0)]),
    ],
)
def test_each_profile_decides_whether_a_boolean_next_to_bindings_counts(
    profile_id: str, expected: list[tuple[float, float]]
) -> None:
    import json

    from evaluators.formats import parse_bytes
    from evaluators.qa.scoring import evaluate

    gold = parse_bytes(json.dumps(_GOLD).encode(), source="gold.json")
    system = parse_bytes(json.dumps(_SYSTEM).encode(), source="system.json")
    (both, empty) = (q.answers[0] for q in system.questions if q.answers)
    assert both.boolean is True and both.has_bindings and both.values
    assert empty.boolean is True and empty.has_bindings and not empty.values
    result = evaluate(gold, system.by_id(), profile=profile_id)
    qa = result.get("QA")
    assert qa is not None
    got = [(s.value("precision"), s.value("recall")) for s in qa.per_question]
    assert got == expected
    assert profile(profile_id).reading.value in ("union", "bindings-first")

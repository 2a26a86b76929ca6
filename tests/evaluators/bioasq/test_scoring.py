"""evaluate_bioasq against the official evaluator's outputs (shared/reference/bioasq.md §2.6)."""

from __future__ import annotations

import math
from pathlib import Path
from random import Random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluators.bioasq.scoring import evaluate_bioasq
from evaluators.errors import EvaluationError, UnknownSubExperimentError
from evaluators.formats import parse_file
from evaluators.model import BioasqGold, Dataset, Question, Snippet
from evaluators.results import EvaluationResult, to_json
from tests.plugins.bioasq import dataset, doc, phase_a, question, snip

# Official output on gold/system A: measure -> {version: value}, printed by EvaluatorTask1b.
OFFICIAL_A = {
    ("documents", "mean_precision"): {2: 0.316667, 5: 0.316667, 8: 0.316667},
    ("documents", "mean_recall"): {2: 0.291667, 5: 0.291667, 8: 0.291667},
    ("documents", "mean_f1"): {2: 0.254167, 5: 0.254167, 8: 0.254167},
    ("documents", "map"): {2: 0.213194, 5: 0.085833, 8: 0.218056},
    ("documents", "gmap"): {2: 0.0016463, 5: 0.0012753, 8: 0.0017231},
    ("snippets", "mean_precision"): {2: 0.1875, 5: 0.1875, 8: 0.1875},
    ("snippets", "mean_recall"): {2: 0.263889, 5: 0.263889, 8: 0.263889},
    ("snippets", "mean_f1"): {2: 0.214912, 5: 0.214912, 8: 0.214912},
    ("snippets", "map"): {2: 0.1875, 5: 0.025, 8: 0.1875},
    ("snippets", "gmap"): {2: 0.0018803, 5: 0.00070718, 8: 0.0018803},
}
VERSION_ROWS = [(2, 2), (3, 5), (5, 5), (8, 8), (9, 8)]  # (version run, column of the table)


def value(result: EvaluationResult, experiment_type: str, measure: str) -> float:
    """Return a defined aggregate value (fail if the type or value is missing)."""
    typed = result.get(experiment_type)
    assert typed is not None, experiment_type
    found = typed.value(measure)
    assert found is not None, (experiment_type, measure, typed.measures)
    return found


def close(expected: float) -> object:
    """Match a value printed with 5-6 significant digits."""
    return pytest.approx(expected, rel=1e-4, abs=5e-7)


@pytest.mark.parametrize(("version", "column"), VERSION_ROWS)
def test_gold_a_matches_official_output(
    gold_a: Dataset, system_a: Dataset, version: int, column: int
) -> None:
    result = evaluate_bioasq(gold_a, system_a, version=version)
    checked = 0
    for (experiment_type, measure), by_version in OFFICIAL_A.items():
        assert value(result, experiment_type, measure) == close(by_version[column]), (
            experiment_type,
            measure,
        )
        checked += 1
    assert checked == 10
    assert value(result, "documents", "questions") == 4
    assert result.profile == "bioasq"
    assert result.questions == 4


def test_gold_a_per_question_matches_hand_check(gold_a: Dataset, system_a: Dataset) -> None:
    result = evaluate_bioasq(gold_a, system_a, version=8)
    documents = result.get("documents")
    snippets = result.get("snippets")
    assert documents is not None and snippets is not None
    aps = [q.value("average_precision") for q in documents.per_question]
    assert aps == [close((1 + 2 / 3 + 3 / 5) / 3), close((1 / 2 + 2 / 3) / 10), 0.0, 0.0]
    q1, q2 = snippets.per_question[:2]
    assert (q1.value("precision"), q1.value("recall"), q1.value("average_precision")) == (
        0.25,
        0.5,
        0.5,
    )
    assert q2.value("precision") == 0.5
    assert q2.value("recall") == close(100 / 180)
    # q2: the first snippet shares no characters but its document is a gold document
    assert q2.value("average_precision") == 0.25
    assert len(q2.gold) == 2  # (101, 10-59) and (101, 40-89) merged


def test_dropping_a_question_skips_it(gold_a: Dataset, system_a: Dataset) -> None:
    without_q4 = dataset(*system_a.questions[:3])
    result = evaluate_bioasq(gold_a, without_q4, version=8)
    assert value(result, "documents", "map") == close(0.290741)
    assert value(result, "documents", "questions") == 3
    skipped = result.get("documents")
    assert skipped is not None
    assert skipped.per_question[3].value("average_precision") is None
    assert "skipped" in (skipped.per_question[3].measures[0].undefined_reason or "")


def test_strict_missing_counts_a_dropped_question_as_zero(
    gold_a: Dataset, system_a: Dataset
) -> None:
    without_q4 = dataset(*system_a.questions[:3])
    result = evaluate_bioasq(gold_a, without_q4, version=8, strict_missing=True)
    assert value(result, "documents", "map") == close(0.218056)
    assert value(result, "documents", "questions") == 4
    assert value(result, "snippets", "mean_precision") == close(0.1875)
    assert "strict_missing" in result.notes[1]


def test_gold_b_matches_official_output(gold_b: Dataset, system_b: Dataset) -> None:
    for version in (5, 8, 9):
        result = evaluate_bioasq(gold_b, system_b, version=version)
        expected = {
            ("yesno", "accuracy"): 0.6,
            ("yesno", "f1_yes"): 0.5,
            ("yesno", "f1_no"): 0.666667,
            ("yesno", "macro_f1"): 0.583333,
            ("factoid", "strict_accuracy"): 0.25,
            ("factoid", "lenient_accuracy"): 0.75,
            ("factoid", "mrr"): 0.416667,
            ("list", "mean_precision"): 0.5,
            ("list", "mean_recall"): 0.555556,
            ("list", "mean_f1"): 0.523810,
        }
        for (experiment_type, measure), official in expected.items():
            assert value(result, experiment_type, measure) == close(official), (version, measure)
        assert len(expected) == 10


def test_gold_b_per_question_results(gold_b: Dataset, system_b: Dataset) -> None:
    result = evaluate_bioasq(gold_b, system_b)
    yes_no = result.get("yesno")
    factoid = result.get("factoid")
    listed = result.get("list")
    assert yes_no is not None and factoid is not None and listed is not None
    assert [q.value("accuracy") for q in yes_no.per_question] == [1, 1, 0, 1, 0]
    rows = [
        (q.value("strict_accuracy"), q.value("lenient_accuracy"), q.value("reciprocal_rank"))
        for q in factoid.per_question
    ]
    assert rows == [(1, 1, 1), (0, 1, 0.5), (0, 1, close(1 / 6)), (0, 0, 0)]
    l1 = listed.per_question[0]
    assert (l1.value("tp"), l1.value("fp"), l1.value("fn")) == (2, 2, 1)
    assert l1.value("f1") == close(0.571429)
    assert [q.value("f1") for q in listed.per_question[1:]] == [0, 1]


def test_versions_before_5_keep_system_synonyms(gold_b: Dataset, system_b: Dataset) -> None:
    # f4 answers [["egfr ", "EGFR"]]: only versions 2 and 3 look past the first string
    result = evaluate_bioasq(gold_b, system_b, version=3)
    factoid = result.get("factoid")
    assert factoid is not None
    assert factoid.per_question[3].value("strict_accuracy") == 1.0
    assert value(result, "factoid", "strict_accuracy") == 0.5


def test_phase_b_response_leaves_phase_a_undefined(gold_b: Dataset, system_b: Dataset) -> None:
    result = evaluate_bioasq(gold_b, system_b)
    documents = result.get("documents")
    assert documents is not None
    assert documents.value("map") is None
    assert "no documents" in (documents.measures[0].undefined_reason or "")
    assert result.get("concepts") is None  # gold B has no concepts
    ideal = result.get("ideal")
    assert ideal is not None and ideal.value("rouge2_f1") is None


def test_types_without_gold_questions_are_undefined_with_reason(
    gold_a: Dataset, system_a: Dataset
) -> None:
    result = evaluate_bioasq(gold_a, system_a)
    assert [r.experiment_type for r in result.results] == [
        "documents",
        "snippets",
        "yesno",
        "factoid",
        "list",
        "ideal",
    ]
    yes_no = result.get("yesno")
    assert yes_no is not None
    assert {m.undefined_reason for m in yes_no.measures} == {"no yes/no questions"}


def test_unknown_response_ids_are_reported(gold_a: Dataset, system_a: Dataset) -> None:
    extra = dataset(*system_a.questions, phase_a("zz", [1], []), phase_a("q1", [5], []))
    result = evaluate_bioasq(gold_a, extra)
    assert result.unknown_ids == ("zz",)
    assert value(result, "documents", "map") == close(0.218056)  # the first q1 wins


def test_unknown_version_is_rejected(gold_a: Dataset, system_a: Dataset) -> None:
    with pytest.raises(UnknownSubExperimentError, match=r"version 4.*2, 3, 5, 8, 9"):
        evaluate_bioasq(gold_a, system_a, version=4)


def test_gold_without_bioasq_data_is_rejected(system_a: Dataset) -> None:
    with pytest.raises(EvaluationError, match="'q1' has no BioASQ data"):
        evaluate_bioasq(dataset(Question(id="q1")), system_a)


def test_json_has_the_cli_contract_keys(
    gold_a: Dataset, system_a: Dataset, gold_b: Dataset, system_b: Dataset
) -> None:
    both_gold = dataset(*gold_a.questions, *gold_b.questions)
    both_system = dataset(*system_a.questions, *system_b.questions)
    doc_json = to_json(evaluate_bioasq(both_gold, both_system, dataset_label="fixtures"))
    assert doc_json["dataset"] == "fixtures"
    results = doc_json["results"]
    for key in ("documents", "snippets"):
        assert {"map", "gmap", "mean_precision", "mean_recall", "mean_f1"} <= set(results[key])
    assert {"accuracy", "macro_f1", "f1_yes", "f1_no"} <= set(results["yesno"])
    assert {"strict_accuracy", "lenient_accuracy", "mrr"} <= set(results["factoid"])
    assert {"mean_precision", "mean_recall", "mean_f1"} <= set(results["list"])
    ideal = {"rouge2_recall", "rouge2_f1", "rougesu4_recall", "rougesu4_f1"}
    assert ideal <= set(results["ideal"])
    assert results["ideal"]["rouge2_f1"] is None  # nobody has ideal answers here
    # the phase B questions count too (no documents on either side: AP 0), as officially
    assert results["documents"]["questions"] == 16
    assert results["documents"]["map"] == close(0.218056 * 4 / 16)


def test_version_9_skips_questions_without_gold_documents() -> None:
    gold = dataset(phase_a("a", [1], [snip(1, 0, 9)]), phase_a("b", [], [snip(2, 0, 9)]))
    system = dataset(phase_a("a", [1], [snip(1, 0, 9)]), phase_a("b", [2], [snip(2, 0, 9)]))
    assert value(evaluate_bioasq(gold, system, version=8), "documents", "map") == 0.5
    assert value(evaluate_bioasq(gold, system, version=9), "documents", "map") == 1.0
    assert value(evaluate_bioasq(gold, system, version=9), "snippets", "map") == 1.0


def test_snippet_ap_without_gold_snippets_is_undefined_and_perfect_in_gmap() -> None:
    gold = dataset(phase_a("a", [1], [snip(1, 0, 99)]), phase_a("b", [2], []))
    system = dataset(
        phase_a("a", [1], [snip(1, 50, 149), snip(9, 0, 9)]), phase_a("b", [2], [snip(2, 0, 9)])
    )
    result = evaluate_bioasq(gold, system, version=8)
    snippets = result.get("snippets")
    assert snippets is not None
    assert snippets.per_question[1].value("average_precision") is None
    assert value(result, "snippets", "map") == 0.25
    assert value(result, "snippets", "gmap") == close(math.sqrt(0.5 + 1e-5))
    version_5 = evaluate_bioasq(gold, system, version=5)
    assert value(version_5, "snippets", "gmap") == close(math.sqrt((0.05 + 1e-5) * 1e-5))


def concepts_question(qid: str, concepts: tuple[str, ...]) -> Question:
    """Return a phase A question with one document and the given concepts."""
    return question(qid, BioasqGold("summary", documents=(doc(1),), concepts=concepts))


def test_concepts_count_only_questions_with_concepts_on_both_sides() -> None:
    gold = dataset(
        concepts_question("a", ("c1", "c2")),
        concepts_question("b", ("c3",)),
        concepts_question("c", ()),
    )
    system = dataset(
        concepts_question("a", ("c1", "x")),
        concepts_question("b", ()),
        concepts_question("c", ("c9",)),
    )
    official = evaluate_bioasq(gold, system)
    assert value(official, "concepts", "questions") == 1
    assert value(official, "concepts", "mean_precision") == 0.5
    assert value(official, "concepts", "map") == 0.5
    strict = evaluate_bioasq(gold, system, strict_missing=True)
    assert value(strict, "concepts", "questions") == 2
    assert value(strict, "concepts", "map") == 0.25


def test_inputs_are_not_changed(gold_b: Dataset, system_b: Dataset) -> None:
    before = (gold_b, system_b)
    first = evaluate_bioasq(gold_b, system_b)
    second = evaluate_bioasq(gold_b, system_b)
    assert (gold_b, system_b) == before
    assert first == second


# --- properties ---------------------------------------------------------------------------

_names = st.text(alphabet="abcxyz", min_size=1, max_size=4)
_pmids = st.integers(min_value=1, max_value=30)
# "sections.0" is left out on purpose: next to "abstract" it triggers the official special
# case and the same characters are counted twice (see the test below).
_sections = st.sampled_from(["abstract", "title", "sections.1"])


@st.composite
def _snippets(draw: st.DrawFn, min_size: int) -> tuple[Snippet, ...]:
    found = []
    for _ in range(draw(st.integers(min_size, 4))):
        begin = draw(st.integers(0, 300))
        end = begin + draw(st.integers(0, 120))
        found.append(snip(draw(_pmids), begin, end, draw(_sections)))
    return tuple(found)


@st.composite
def _questions(draw: st.DrawFn, full: bool = False) -> tuple[Question, ...]:
    """Draw BioASQ questions; ``full``: each has documents and snippets."""
    questions = []
    for index in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["yesno", "factoid", "list", "summary"]))
        pmids = draw(st.lists(_pmids, min_size=int(full), max_size=10, unique=True))
        entity = st.lists(_names, min_size=1, max_size=3).map(tuple)
        exact = kind in ("factoid", "list")
        part = BioasqGold(
            kind,
            documents=tuple(map(doc, pmids)),
            snippets=draw(_snippets(int(full))),
            yesno=draw(st.sampled_from(["yes", "no"])) if kind == "yesno" else None,
            entities=tuple(draw(st.lists(entity, min_size=1, max_size=3))) if exact else (),
        )
        questions.append(question(f"q{index}", part))
    return tuple(questions)


def _defined(result: EvaluationResult) -> dict[tuple[str, str], float]:
    return {
        (r.experiment_type, m.measure): m.value
        for r in result.results
        for m in r.measures
        if m.value is not None and m.measure != "questions"
    }


@settings(max_examples=60, deadline=None)
@given(_questions(full=True))
def test_a_perfect_response_scores_one(questions: tuple[Question, ...]) -> None:
    gold = dataset(*questions)
    scores = _defined(evaluate_bioasq(gold, gold))
    gold_yes = {q.bioasq.yesno for q in questions if q.bioasq and q.bioasq.question_type == "yesno"}
    checked = 0
    for (experiment_type, measure), score in scores.items():
        if measure in ("f1_yes", "f1_no", "macro_f1") and len(gold_yes) < 2:
            continue  # official: the F1 of a class no gold answer has is 0
        assert score == pytest.approx(1.0, abs=1e-4), (experiment_type, measure)
        checked += 1
    assert checked >= 10  # documents and snippets at least


@settings(max_examples=60, deadline=None)
@given(_questions(), _questions())
def test_scores_stay_in_range(
    gold_questions: tuple[Question, ...], answers: tuple[Question, ...]
) -> None:
    result = evaluate_bioasq(dataset(*gold_questions), dataset(*answers))
    for (experiment_type, measure), score in _defined(result).items():
        # snippet AP counts snippets of gold documents as relevant even without overlap
        upper = 4.0 if experiment_type == "snippets" and measure in ("map", "gmap") else 1.0
        if measure == "gmap":
            upper += 1e-5  # exp(ln(AP + ε)) of a perfect question is 1 + ε
        assert 0.0 <= score <= upper + 1e-9, (experiment_type, measure, score)


@settings(max_examples=40, deadline=None)
@given(_questions(), _questions(), st.randoms(use_true_random=False))
def test_question_order_does_not_matter(
    gold_questions: tuple[Question, ...], answers: tuple[Question, ...], rng: Random
) -> None:
    gold_shuffled = list(gold_questions)
    answers_shuffled = list(answers)
    rng.shuffle(gold_shuffled)
    rng.shuffle(answers_shuffled)
    forward = _defined(evaluate_bioasq(dataset(*gold_questions), dataset(*answers)))
    shuffled = _defined(evaluate_bioasq(dataset(*gold_shuffled), dataset(*answers_shuffled)))
    assert forward == pytest.approx(shuffled)


def test_snippet_precision_can_exceed_one_with_section_0_and_abstract() -> None:
    # Official quirk: a system snippet in section "0" overlaps gold snippets of both "0" and
    # "abstract", so the same characters count twice.
    snippets = [snip(1, 0, 99, "sections.0"), snip(1, 0, 99, "abstract")]
    gold = dataset(phase_a("a", [1], snippets))
    result = evaluate_bioasq(gold, gold)
    assert value(result, "snippets", "mean_precision") == 1.5
    assert value(result, "snippets", "mean_recall") == 1.5


TRAINING_2B = (
    "bioasq/balikasg_BioASQParticipantsArea/TrainingData2014/BioASQ_2013_TaskB.zip.d/"
    "BioASQ_2013_TaskB/BioASQ-trainingDataset2b.json"
)


def test_training_set_scored_against_itself(shared_data: Path) -> None:
    gold = parse_file(shared_data / TRAINING_2B)
    assert len(gold.questions) == 310
    result = evaluate_bioasq(gold, gold)
    counts = {r.experiment_type: r.value("questions") for r in result.results}
    assert counts == {
        "documents": 310,
        "snippets": 310,
        "concepts": 263,
        "yesno": 85,
        "factoid": 59,
        "list": 92,
        "ideal": 310,
    }
    for experiment_type in ("documents", "concepts"):
        for measure in ("mean_precision", "mean_recall", "mean_f1"):
            assert value(result, experiment_type, measure) == 1.0
    # Gold lists longer than 10 and no truncation: AP above 1 (official quirk 2)
    assert value(result, "documents", "map") > 1.0
    for experiment_type, measure in [
        ("yesno", "accuracy"),
        ("yesno", "macro_f1"),
        ("factoid", "mrr"),
        ("list", "mean_f1"),
        ("ideal", "rougesu4_recall"),
    ]:
        assert value(result, experiment_type, measure) == 1.0, (experiment_type, measure)
    # one question has no snippets: an empty answer scores 0 there
    assert value(result, "snippets", "mean_precision") == pytest.approx(309 / 310, abs=1e-3)

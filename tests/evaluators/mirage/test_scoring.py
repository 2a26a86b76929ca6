"""The ``mirage`` profile through ``qabench evaluate``'s path: accuracy per MIRAGE dataset and on
average, on the excerpts of tests/data/mirage and (slow) on the whole published Table 6."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from bench.snapshot import Snapshot
from evaluators.errors import UnknownSubExperimentError
from evaluators.evaluate import Evaluation, evaluate
from evaluators.formats import parse_bytes
from evaluators.formats.mirage.predictions import pack
from evaluators.model import Dataset
from evaluators.qa.scoring import evaluate as qa_evaluate
from evaluators.results import EvaluationResult
from tests import TEST_DATA

MIRAGE = TEST_DATA / "mirage"


@pytest.fixture
def gold() -> Dataset:
    return parse_bytes((MIRAGE / "benchmark-excerpt.json").read_bytes(), source="benchmark.json")


def _score(gold: Dataset, folder: Path) -> EvaluationResult:
    data = pack(folder, max_bytes=1_000_000)
    return evaluate(gold, data, Evaluation(profile="mirage", label="mirage-excerpt"))


def test_accuracy_per_dataset_and_their_mean(gold: Dataset) -> None:
    result = _score(gold, MIRAGE / "prediction" / "{dataset}" / "cot/OpenAI/gpt-35-turbo-16k")
    qa = result.get("QA")
    assert qa is not None and result.profile == "mirage" and result.questions == 28
    # read by hand from the files (SOURCE.md): which located letters are the gold ones
    expected = {
        "accuracy_mmlu": Fraction(10, 13),
        "accuracy_medqa": Fraction(1, 3),
        "accuracy_medmcqa": Fraction(2, 3),
        "accuracy_pubmedqa": Fraction(2, 3),
        "accuracy_bioasq": Fraction(4, 6),  # y11c is an empty list, y7a has no test_ file
    }
    for measure, value in expected.items():
        assert qa.value(measure) == pytest.approx(float(value)), measure
    assert qa.value("accuracy") == pytest.approx(float(sum(expected.values()) / 5))
    assert qa.value("errors") == 0 and qa.value("avg_millis") is None
    rows = {s.question_id: s for s in qa.per_question}
    assert len(rows) == 28
    assert rows["bioasq:y11c"].value("accuracy") == 0 and rows["bioasq:y11c"].system == ()
    assert rows["bioasq:y11c"].reading == "chosen by: no output stored"
    assert rows["bioasq:y7a"].reading == "chosen by: no answer"
    # 'A/B"}' is read as A by the fourth rule; the gold is B
    anatomy = rows["mmlu:anatomy-001"]
    assert anatomy.system[0].startswith("A: ") and anatomy.gold[0].startswith("B: ")
    assert anatomy.value("accuracy") == 0


def test_one_dataset_alone_has_its_accuracy_as_the_mean(gold: Dataset) -> None:
    result = _score(gold, MIRAGE / "prediction" / "bioasq" / "cot/OpenAI/gpt-35-turbo-16k")
    qa = result.get("QA")
    assert qa is not None and qa.value("accuracy_bioasq") == pytest.approx(4 / 6)
    # the other datasets' questions have no answer here: wrong, each dataset weighs the same
    assert qa.value("accuracy_mmlu") == 0 and qa.value("accuracy") == pytest.approx(4 / 6 / 5)


def test_the_gold_answers_score_one(gold: Dataset) -> None:
    simple = (
        b"["
        + b",".join(
            b'{"id": "%s", "answers": ["%s"]}'
            % (q.id.encode(), q.answers[0].values[0].value.encode())
            for q in gold.questions
            if q.answers
        )
        + b"]"
    )
    result = evaluate(gold, simple, Evaluation(profile="mirage"))
    qa = result.get("QA")
    assert qa is not None and qa.value("accuracy") == 1.0


def test_qa_scoring_refuses_a_family_profile(gold: Dataset) -> None:
    with pytest.raises(UnknownSubExperimentError, match="its own family"):
        qa_evaluate(gold, {}, profile="mirage")


@pytest.mark.slow
def test_the_published_table_is_reproduced(snapshot: Snapshot) -> None:
    from bench.mirage import SYSTEMS, benchmark, score

    root = snapshot("Teddy-XiongGZ/MIRAGE", "rawdata", "prediction")
    dataset, _ = benchmark(root)
    cells = [c for system in SYSTEMS for c in score(root, dataset, system)]
    parts = [c for c in cells if c.measure != "accuracy"]
    assert len(parts) == 20 and sum(c.exact for c in parts) == 17
    differing = {(c.system, c.measure) for c in parts if not c.exact}
    cot35 = ("GPT-3.5", "CoT")
    assert differing == {
        (cot35, "accuracy_medqa"), (cot35, "accuracy_medmcqa"), (cot35, "accuracy_bioasq"),
    }  # fmt: skip
    # each is explained by its empty stored predictions, scored as MIRAGE scored them then
    for c in cells:
        assert c.then is not None and f"{100 * c.then:.2f}" == f"{c.published:.2f}", c
    explained = {c.measure: [q for q, gold, then in c.empty if then == gold] for c in parts
                 if not c.exact}  # fmt: skip
    assert explained["accuracy_medqa"] == ["medqa:0041", "medqa:1260"]
    assert len(explained["accuracy_medmcqa"]) == 5
    assert explained["accuracy_bioasq"] == ["bioasq:5c6b198f7c78d69471000025"]

"""Benchmark: the evaluation engine on QALD-9 and on LC-QuAD-sized synthetic answers.

For each dataset it measures, in the same run: parsing the benchmark file (``parse_file``), then
``evaluate`` with every experiment type under ``strict`` and ``gerbil``, gold against itself and
against a perturbed copy (dropped, added and reformatted answers, some changed queries, some
unanswered questions). Each line gives the wall time, the cost per question and its ratio to
parsing the same file. "cold" evaluations parse every SPARQL query (the costliest step);
"warm" ones reuse the query markings of an earlier run through ``markings_cache`` (what the
experiment runner can do across tasks on one dataset version).

Target (issue "Evaluation engine"): a 150-question dataset with all sub-experiments in well
under a second.

    .venv/bin/python bench/evaluate.py [--data ../shared/data] [--lcquad-questions 5000]
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pyoxigraph import Literal, NamedNode  # noqa: E402

from evaluators.formats import parse_file  # noqa: E402
from evaluators.model import AnswerSet, Dataset, Question  # noqa: E402
from evaluators.qa.scoring import evaluate, gold_as_answers  # noqa: E402
from server.config import load_config  # noqa: E402

QALD9 = "qald/ag-sc_QALD/9/data/qald-9-{}-multilingual.json"
LCQUAD = ("qald/AskNowQA_LC-QuAD/train-data.json", "qald/AskNowQA_LC-QuAD/test-data.json")
DBR = "http://dbpedia.org/resource/"


def timed(action: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    value = action()
    return time.perf_counter() - start, value


def perturbed(dataset: Dataset, seed: int = 0) -> dict[str, Question]:
    """Return system answers that differ from the gold ones in every way the matchers care for."""
    rng = random.Random(seed)
    answers: dict[str, Question] = {}
    for q in dataset.questions:
        if rng.random() < 0.15:
            continue  # unanswered
        values = [v for s in q.answers or () for v in s.values if rng.random() > 0.2]
        values = [Literal(v.value + ".0") if v.value.isdigit() else v for v in values]
        if rng.random() < 0.3:
            values.append(NamedNode(f"{DBR}Wrong_{q.id}"))
        boolean = next((s.boolean for s in q.answers or () if s.boolean is not None), None)
        if boolean is not None and rng.random() < 0.3:
            boolean = not boolean
        sparql = q.sparql
        if sparql and rng.random() < 0.2:
            sparql = sparql.replace(DBR, DBR + "Other_", 1)
        answers[q.id] = dataclasses.replace(
            q, answers=(AnswerSet(tuple(dict.fromkeys(values)), boolean),), sparql=sparql
        )
    return answers


def synthetic(dataset: Dataset, seed: int = 1) -> Dataset:
    """Return LC-QuAD questions with synthetic gold answers (LC-QuAD ships queries only)."""
    rng = random.Random(seed)
    questions = []
    for q in dataset.questions:
        n = rng.choice([1, 1, 2, 3, 5, 10, 40])
        values = tuple(NamedNode(f"{DBR}Synthetic_{q.id}_{i}") for i in range(n))
        questions.append(dataclasses.replace(q, answers=(AnswerSet(values),)))
    return dataclasses.replace(dataset, questions=tuple(questions))


def report(name: str, dataset: Dataset, parse_seconds: float) -> None:
    n = len(dataset.questions)
    per_parse = parse_seconds / n * 1000
    print(f"\n{name}: {n} questions, parsing {parse_seconds:.3f} s ({per_parse:.3f} ms/question)")
    print(
        f"{'profile':<8} {'answers':<10} {'markings':<8} {'seconds':>8} {'ms/question':>12} {'x parsing':>10}"
    )
    runs = [("gold", gold_as_answers(dataset)), ("perturbed", perturbed(dataset))]
    for profile in ("strict", "gerbil"):
        for label, answers in runs:
            cache: dict = {}
            for markings in ("cold", "warm"):
                seconds, result = timed(
                    lambda a=answers, c=cache, p=profile: evaluate(  # type: ignore[misc]
                        dataset, a, profile=p, markings_cache=c
                    )
                )
                types = ",".join(r.experiment_type for r in result.results)  # type: ignore[attr-defined]
                per = seconds / n * 1000
                print(
                    f"{profile:<8} {label:<10} {markings:<8} {seconds:>8.3f} {per:>12.3f} "
                    f"{per / per_parse:>10.1f}   {types}"
                )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=load_config().datasets.reference_data)
    parser.add_argument("--lcquad-questions", type=int, default=5000)
    args = parser.parse_args()
    for split in ("test", "train"):
        path = args.data / QALD9.format(split)
        seconds, dataset = timed(lambda p=path: parse_file(p))  # type: ignore[misc]
        report(f"QALD-9 {split}", dataset, seconds)  # type: ignore[arg-type]
    seconds = 0.0
    questions: list[Question] = []
    for rel in LCQUAD:
        took, part = timed(lambda p=args.data / rel: parse_file(p))  # type: ignore[misc]
        seconds += took
        questions.extend(part.questions)  # type: ignore[attr-defined]
    questions = questions[: args.lcquad_questions]
    lcquad = synthetic(Dataset(part.format, tuple(questions)))  # type: ignore[attr-defined]
    report("LC-QuAD with synthetic answers", lcquad, seconds * len(questions) / 5000)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Reproduce MIRAGE's Table 6 from its repository: the benchmark rebuilt, the predictions scored.

MIRAGE (github.com/Teddy-XiongGZ/MIRAGE) stores the per-question predictions of GPT-4 and
GPT-3.5, each with chain-of-thought (CoT) and with MedRAG (32 snippets of MedCorp, RRF-4),
and publishes their accuracies in Table 6 of its paper (``figs/result_llm.png``). This script

1. rebuilds ``benchmark.json`` from ``rawdata/`` (``evaluators/formats/mirage/build.py``) and
   checks it against the catalog's SHA-256 and the repository's git blob id;
2. scores each system's predictions with ``qabench``'s own path (``evaluators.evaluate`` under
   the ``mirage`` profile), per dataset and on average;
3. compares every cell with the published one (two decimals) and, for the cells that differ,
   names the questions that cause it: the stored predictions that are empty lists, which
   today's rule scores as wrong, and what MIRAGE's evaluation scored for them before its
   2024-07-22 change (commit ddf4a47c): the letter located in the *preceding* question's
   output (its loop variable still held it), which gives the published cells.

    .venv/bin/python bench/mirage.py [--mirage DIR | --snapshots DIR] [--json]

``--mirage`` is a checkout of the repository (or its bare git directory); by default the
snapshot folder of ``bench/snapshot.py`` is searched. Load average matters little (the run is
bound by reading 30,652 small files; about a minute on two cores).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.snapshot import checkout, find, snapshots_root  # noqa: E402
from evaluators.datasets.catalog import catalog  # noqa: E402
from evaluators.evaluate import Evaluation, evaluate  # noqa: E402
from evaluators.formats import parse_bytes  # noqa: E402
from evaluators.formats.mirage.benchmark import PARTS, split_id  # noqa: E402
from evaluators.formats.mirage.build import build_benchmark  # noqa: E402
from evaluators.formats.mirage.predictions import pack  # noqa: E402
from evaluators.mirage.choice import outputs, prediction_letter  # noqa: E402
from evaluators.mirage.scoring import PART_MEASURES, gold_letter  # noqa: E402
from evaluators.model import Dataset  # noqa: E402

MIRAGE_REPO = "Teddy-XiongGZ/MIRAGE"
BLOB = "85bdd2857e62723921a81b6560b98937e5238776"
# (model, method) -> the folder of its predictions below prediction/<dataset>/
SYSTEMS = {
    ("GPT-4", "CoT"): "cot/OpenAI/gpt-4-32k",
    ("GPT-4", "MedRAG"): "rag_32/OpenAI/gpt-4-32k/medcorp/RRF-4",
    ("GPT-3.5", "CoT"): "cot/OpenAI/gpt-35-turbo-16k",
    ("GPT-3.5", "MedRAG"): "rag_32/OpenAI/gpt-35-turbo-16k/medcorp/RRF-4",
}
# Table 6 of the paper (accuracy in %, MMLU-Med, MedQA-US, MedMCQA, PubMedQA*, BioASQ-Y/N, Avg.)
PUBLISHED = {
    ("GPT-4", "CoT"): (89.44, 83.97, 69.88, 39.60, 84.30, 73.44),
    ("GPT-4", "MedRAG"): (87.24, 82.80, 66.65, 70.60, 92.56, 79.97),
    ("GPT-3.5", "CoT"): (72.91, 65.04, 55.25, 36.00, 74.27, 60.69),
    ("GPT-3.5", "MedRAG"): (75.48, 66.61, 58.04, 67.40, 90.29, 71.57),
}
COLUMNS = (*PART_MEASURES.values(), "accuracy")


@dataclass(frozen=True, slots=True)
class Cell:
    """One table cell: ours, the published one, and (when they differ) what explains it."""

    system: tuple[str, str]
    measure: str
    ours: float
    published: float
    empty: tuple[tuple[str, str, str | None], ...] = ()  # (question, gold, letter scored then)
    then: float | None = None  # the cell as MIRAGE's evaluation before 2024-07-22 computed it

    @property
    def exact(self) -> bool:
        """Whether ours, in percent with two decimals, is the published number."""
        return f"{100 * self.ours:.2f}" == f"{self.published:.2f}"


def benchmark(root: Path) -> tuple[Dataset, bytes]:
    """Return MIRAGE rebuilt from ``root/rawdata``, checked against the catalog and the blob."""
    built = build_benchmark(root / "rawdata")
    entry = catalog()["mirage"]
    blob = hashlib.sha1(b"blob %d\0" % len(built) + built).hexdigest()
    if hashlib.sha256(built).hexdigest() != entry.sha256 or blob != BLOB:
        raise SystemExit(f"the rebuilt benchmark.json differs from the published one ({blob})")
    return parse_bytes(built, source="benchmark.json"), built


def then_letters(dataset: Dataset, predictions: dict[str, list[str]]) -> dict[str, str | None]:
    """Return, for each question whose stored prediction is empty, the letter MIRAGE's
    evaluation before 2024-07-22 scored: the preceding question's (in its sorted order)."""
    out: dict[str, str | None] = {}
    for part in PARTS:
        keys = sorted(split_id(q.id)[1] for q in dataset.questions if split_id(q.id)[0] == part)
        last: str | None = None
        for key in keys:
            found = predictions.get(f"{part}:{key}")
            if found:
                last = prediction_letter(found)
            elif found is not None:
                out[f"{part}:{key}"] = last
    return out


def score(root: Path, dataset: Dataset, system: tuple[str, str]) -> list[Cell]:
    """Return the cells of one system's row, with the explanation of any that differs."""
    folder = root / "prediction" / "{dataset}" / SYSTEMS[system]
    data = pack(folder, max_bytes=500_000_000)
    result = evaluate(dataset, data, Evaluation(profile="mirage", label="mirage"))
    scored = result.get("QA")
    assert scored is not None
    stored = json.loads(data)["mirage_predictions"]
    predictions = {qid: outputs(json.dumps(v)) or [] for qid, v in stored.items()}
    then = then_letters(dataset, predictions)
    gold = {q.id: gold_letter(q) for q in dataset.questions}
    cells: list[Cell] = []
    for measure, published in zip(COLUMNS, PUBLISHED[system], strict=True):
        value = scored.value(measure)
        assert value is not None
        part = next((p for p, m in PART_MEASURES.items() if m == measure), None)
        empty = tuple(
            (qid, gold[qid], letter)
            for qid, letter in then.items()
            if part is None or split_id(qid)[0] == part
        )
        cells.append(Cell(system, measure, value, published, empty))
    return _with_then(cells)


def _with_then(cells: list[Cell]) -> list[Cell]:
    """Add each cell's value under the old evaluation (empty predictions scored as then)."""
    out = []
    for cell in cells[:-1]:
        part = next(p for p, m in PART_MEASURES.items() if m == cell.measure)
        gained = sum(1 for _, gold, letter in cell.empty if letter == gold)
        out.append(_replace_then(cell, cell.ours + gained / PARTS[part].size))
    mean = sum(c.then or 0.0 for c in out) / len(out)
    out.append(_replace_then(cells[-1], mean))
    return out


def _replace_then(cell: Cell, then: float) -> Cell:
    return Cell(cell.system, cell.measure, cell.ours, cell.published, cell.empty, then)


def main() -> None:
    """Print the table: ours, published, and the explanation of each difference."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirage", help="a checkout (or bare git directory) of MIRAGE")
    parser.add_argument("--snapshots", help="the folder of repository snapshots")
    parser.add_argument("--json", action="store_true", help="print the cells as JSON")
    args = parser.parse_args()
    source = Path(args.mirage) if args.mirage else find(MIRAGE_REPO, snapshots_root(args.snapshots))
    if source is None:
        raise SystemExit("no snapshot of MIRAGE: give --mirage DIR or --snapshots DIR")
    start = time.perf_counter()
    root = checkout(source, ("rawdata", "prediction"))
    dataset, built = benchmark(root)
    print(f"benchmark.json rebuilt: {len(built)} bytes, git blob {BLOB[:12]}, sha256 ok; "
          f"{len(dataset.questions)} questions", file=sys.stderr)  # fmt: skip
    cells = [c for system in SYSTEMS for c in score(root, dataset, system)]
    if args.json:
        print(json.dumps([_cell_json(c) for c in cells], indent=1))
    else:
        _print(cells)
    elapsed = time.perf_counter() - start
    print(f"{elapsed:.1f} s", file=sys.stderr)


def _cell_json(c: Cell) -> dict[str, object]:
    return {
        "model": c.system[0], "method": c.system[1], "measure": c.measure,
        "ours": round(100 * c.ours, 4), "published": c.published, "exact": c.exact,
        "then": None if c.then is None else round(100 * c.then, 4),
        "empty_predictions": [list(e) for e in c.empty],
    }  # fmt: skip


def _print(cells: list[Cell]) -> None:
    labels = [PARTS[p].label for p in PART_MEASURES] + ["Avg."]
    print(f"{'system':<18}" + "".join(f"{label:>22}" for label in labels))
    for system in SYSTEMS:
        row = [c for c in cells if c.system == system]
        shown = [f"{100 * c.ours:.2f} ({c.published:.2f}{'' if c.exact else ' !'})" for c in row]
        print(f"{' '.join(system):<18}" + "".join(f"{s:>22}" for s in shown))
    parts = [c for c in cells if c.measure != "accuracy"]
    exact = sum(c.exact for c in parts)
    print(f"\n{exact} of {len(parts)} dataset cells exactly as published; averages: "
          f"{sum(c.exact for c in cells if c.measure == 'accuracy')} of 4")  # fmt: skip
    for c in cells:
        if c.exact or c.measure == "accuracy":
            continue
        right = [qid for qid, gold, letter in c.empty if letter == gold]
        then = f"{100 * (c.then or 0):.2f}"
        print(f"- {' '.join(c.system)} {c.measure}: {len(c.empty)} stored predictions are empty "
              f"lists (wrong today); scored as MIRAGE did before 2024-07-22 (the preceding "
              f"question's letter) {len(right)} of them are right ({', '.join(right)}): "
              f"{then}, published {c.published:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()

"""RAG answering benchmark: per-stage latency and BioASQ scores of the generators on 20 questions.

Corpus: the BioASQ 2013 training questions name their documents only as PMIDs, so the corpus is
made of their gold snippets (``rag.corpus.bioasq_snippets``): per PMID, each title and abstract snippet
is placed at its gold offset. That favours every system equally and makes retrieval easier than
real PubMed; it measures the pipeline, not PubMed search.
Questions: the first five questions of each type (yesno, factoid, list, summary) by id, 20 in
all; each is asked with its BioASQ type. For every generator the benchmark reports p50/p95 per
stage and end to end, and scores a BioASQ response file built from the runs with
``evaluators.bioasq.scoring.evaluate_bioasq`` (phase A: documents, snippets; phase B: exact and ideal
answers). Snippet offsets line up with the gold offsets, so the official overlap measures apply.
Response files are written to ``--out``.

Run:  .venv/bin/python bench/rag.py [--data ../shared/data] [--generators extractive,transformers-local]
          [--questions 20] [--index-dir DIR] [--out DIR] [--json]
"""

# ruff: noqa: E402 (the path fix below must run before the imports)
from __future__ import annotations

import sys
from pathlib import Path

# This script is called rag.py: without its own directory on the path, "rag" is the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import contextlib
import json
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import numpy as np

from evaluators.bioasq.scoring import evaluate_bioasq
from evaluators.formats import parse_bytes
from evaluators.model import Dataset
from rag.corpus.bioasq_snippets import read_bioasq_snippets
from rag.errors import IndexMissingError
from rag.models.generators import (
    EXTRACTIVE,
    TRANSFORMERS_LOCAL,
    ExtractiveGenerator,
    Generator,
    TransformersGenerator,
)
from rag.models.model_files import LocalModelSettings
from rag.pipeline import STAGES, RagSystem
from rag.retrieval.index import open_index
from rag.retrieval.retrievers import Retriever, WhooshRetriever
from rag.run import RagRun, RagSettings
from server.ask.payloads import bioasq_question

TRAINING = (
    "bioasq/balikasg_BioASQParticipantsArea/TrainingData2014/BioASQ_2013_TaskB.zip.d/"
    "BioASQ_2013_TaskB/BioASQ-trainingDataset2b.json"
)
TYPES = ("yesno", "factoid", "list", "summary")
REPORTED = {
    "documents": ("map", "mean_precision", "mean_recall", "mean_f1"),
    "snippets": ("map", "mean_f1"),
    "yesno": ("accuracy", "macro_f1"),
    "factoid": ("strict_accuracy", "lenient_accuracy", "mrr"),
    "list": ("mean_precision", "mean_recall", "mean_f1"),
    "ideal": ("rouge2_recall", "rouge2_f1", "rougesu4_recall", "rougesu4_f1"),
}


def selection(questions: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """Return ``count`` questions: the first of each type by id, round robin."""
    by_type = {
        t: sorted((q for q in questions if q.get("type") == t), key=lambda q: q["id"])
        for t in TYPES
    }
    chosen: list[dict[str, Any]] = []
    for i in range(count):
        pool = by_type[TYPES[i % len(TYPES)]]
        if i // len(TYPES) < len(pool):
            chosen.append(pool[i // len(TYPES)])
    return chosen


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def run_generator(
    generator: Generator, index_dir: Path, questions: list[dict[str, Any]], settings: RagSettings
) -> tuple[list[RagRun], dict[str, list[float]]]:
    @contextlib.contextmanager
    def opener() -> Iterator[Retriever]:
        with open_index(index_dir) as index:
            yield WhooshRetriever(index)

    system = RagSystem(opener, generator, settings)
    runs, times = [], defaultdict(list)
    for number, question in enumerate(questions, start=1):
        started = time.perf_counter()
        run = system.ask(question["body"], kind=question["type"])
        times["end_to_end"].append((time.perf_counter() - started) * 1000.0)
        for timing in run.timings:
            times[timing.stage].append(timing.millis)
        runs.append(run)
        print(
            f"  {generator.info.name} {number}/{len(questions)}: {times['end_to_end'][-1]:.0f} ms",
            flush=True,
        )
    return runs, times


def score(
    gold_all: Dataset, questions: list[dict[str, Any]], runs: list[RagRun], out: Path, name: str
) -> dict[str, dict[str, float | None]]:
    response = {
        "questions": [
            numbered(bioasq_question(r, q["id"])) for q, r in zip(questions, runs, strict=True)
        ]
    }
    path = out / f"rag-{name}-response.json"
    path.write_text(json.dumps(response, indent=1, ensure_ascii=False), "utf-8")
    wanted = {q["id"] for q in questions}
    gold = Dataset(gold_all.format, tuple(q for q in gold_all.questions if q.id in wanted))
    result = evaluate_bioasq(gold, parse_bytes(path.read_bytes(), source=str(path)))
    scores: dict[str, dict[str, float | None]] = {}
    for part in result.results:
        if part.experiment_type in REPORTED:
            values = {m.measure: m.value for m in part.measures}
            scores[part.experiment_type] = {
                k: values.get(k) for k in REPORTED[part.experiment_type]
            }
    return scores


def numbered(question: dict[str, Any]) -> dict[str, Any]:
    """Name abstract snippets ``sections.0`` as the 2013 gold file does (official matching)."""
    for snippet in question.get("snippets", []):
        if snippet.get("beginSection") == "abstract":
            snippet["beginSection"] = snippet["endSection"] = "sections.0"
    return question


def warning_counts(runs: list[RagRun]) -> dict[str, int]:
    """Return how many warnings each stage gave (by the warning's first words)."""
    counts: dict[str, int] = defaultdict(int)
    for run in runs:
        for warning in run.warnings:
            counts[warning.split(":", 1)[0] if ":" in warning[:40] else "retrieval"] += 1
    return dict(sorted(counts.items()))


def load_generator(name: str, cache: Path, threads: int) -> Generator:
    if name == EXTRACTIVE:
        return ExtractiveGenerator()
    if name == TRANSFORMERS_LOCAL:
        started = time.perf_counter()
        generator = TransformersGenerator.load(
            LocalModelSettings(cache_dir=cache, threads=threads, timeout_seconds=300)
        )
        print(
            f"  loaded {generator.info.model} in {time.perf_counter() - started:.1f} s", flush=True
        )
        return generator
    raise SystemExit(
        f"unknown generator {name!r}; this benchmark runs extractive and transformers-local"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    parser.add_argument("--generators", default="extractive,transformers-local")
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument(
        "--index-dir", type=Path, help="reuse (or build once into) this index directory"
    )
    parser.add_argument(
        "--cache-dir", type=Path, help="converted model cache (default: a temporary directory)"
    )
    parser.add_argument("--out", type=Path, default=Path("bench-out"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--llm-documents", type=int, default=3, help="articles a model reads per question"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    raw = (args.data / TRAINING).read_bytes()
    everything = json.loads(raw)["questions"]
    gold_all = parse_bytes(raw, source=TRAINING)
    questions = selection(everything, args.questions)
    temp = Path(tempfile.mkdtemp(prefix="qabench-rag-bench-"))
    index_dir = args.index_dir or temp / "index"
    articles = list(read_bioasq_snippets(args.data / TRAINING))
    try:
        open_index(index_dir).close()
    except IndexMissingError:
        started = time.perf_counter()
        with open_index(index_dir, create=True) as index:
            index.add(articles)
        seconds = time.perf_counter() - started
        print(f"indexed {len(articles)} synthetic abstracts in {seconds:.1f} s", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    settings = RagSettings(top_k=50, snippets=10, llm_documents=args.llm_documents)
    report: dict[str, Any] = {
        "questions": len(questions),
        "corpus": len(articles),
        "generators": {},
    }
    for name in [g.strip() for g in args.generators.split(",") if g.strip()]:
        print(f"{name}:", flush=True)
        generator = load_generator(name, args.cache_dir or temp / "cache", args.threads)
        runs, times = run_generator(generator, index_dir, questions, settings)
        report["generators"][name] = {
            "latency_ms": {
                stage: {
                    "p50": percentile(times[stage], 50),
                    "p95": percentile(times[stage], 95),
                    "mean": statistics.fmean(times[stage]),
                }
                for stage in (*STAGES, "end_to_end")
            },
            "warnings": sum(len(r.warnings) for r in runs),
            "warnings_by_stage": warning_counts(runs),
            "scores": score(gold_all, questions, runs, args.out, name),
        }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print_report(report)


def print_report(report: dict[str, Any]) -> None:
    print(
        f"\n{report['questions']} BioASQ questions, corpus of {report['corpus']} synthetic abstracts"
    )
    for name, entry in report["generators"].items():
        by_stage = ", ".join(f"{k} {v}" for k, v in entry["warnings_by_stage"].items())
        print(f"\n{name}  (warnings over all runs: {entry['warnings']}; {by_stage or 'none'})")
        print(f"  {'stage':<12} {'p50 ms':>10} {'p95 ms':>10} {'mean ms':>10}")
        for stage, value in entry["latency_ms"].items():
            print(
                f"  {stage:<12} {value['p50']:>10.1f} {value['p95']:>10.1f} {value['mean']:>10.1f}"
            )
        for part, measures in entry["scores"].items():
            shown = ", ".join(
                f"{k} {v:.4f}" if v is not None else f"{k} -" for k, v in measures.items()
            )
            print(f"  {part:<10} {shown}")


if __name__ == "__main__":
    main()

"""The built-in RAG system as a MIRAGE system on BioASQ-Y/N and PubMedQA*, beside MedRAG.

MIRAGE's setting: the question alone goes to retrieval ("question-only retrieval"), the system
chooses an option, accuracy is counted per dataset (docs/scoring.md, "MIRAGE"). This script
runs qabench's built-in RAG system that way through its public interfaces only, the command
line a user runs:

1. ``benchmark.json`` rebuilt from MIRAGE's ``rawdata/`` (checked against the catalog), its
   BioASQ-Y/N and PubMedQA* questions written to a file of their own;
2. ``qabench index build`` of the literature index it is given (``--index DIR``), or by
   default of the evidence corpus below;
3. ``qabench answer --builtin rag`` (the question text only; the RAG system infers the question
   type and answers yes or no, which chooses the option of that text; it never answers
   "maybe");
4. ``qabench evaluate --profile mirage``.

The default corpus is small and holds each question's evidence: the 1,000 expert-annotated
PubMedQA abstracts (``../shared/data/pubmed/pubmedqa_pubmedqa/data/ori_pqal.json``, among them
the 500 of PubMedQA*) and the abstracts rebuilt from the gold snippets of MIRAGE's BioASQ
golden files (2019-2023, every question type). MedRAG retrieves from MedCorp (PubMed's 23.9
million abstracts, StatPearls, textbooks and Wikipedia) with a 32-snippet context for GPT-3.5
or GPT-4; qabench's default generator is extractive (no language model). The numbers are
printed beside MedRAG's published ones, with those differences.

    .venv/bin/python bench/mirage_rag.py [--mirage DIR] [--index DIR] [--limit N] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.snapshot import checkout, find, snapshots_root  # noqa: E402
from server.cli import main as qabench  # noqa: E402
from server.config import load_config  # noqa: E402

MIRAGE_REPO = "Teddy-XiongGZ/MIRAGE"
PARTS = ("bioasq", "pubmedqa")
PUBMEDQA = "pubmed/pubmedqa_pubmedqa/data/ori_pqal.json"
# MIRAGE Table 6 (accuracy in %): BioASQ-Y/N, PubMedQA*
PUBLISHED = {
    "GPT-4, CoT (no retrieval)": (84.30, 39.60),
    "GPT-4, MedRAG (MedCorp, RRF-4, 32 snippets)": (92.56, 70.60),
    "GPT-3.5, CoT (no retrieval)": (74.27, 36.00),
    "GPT-3.5, MedRAG (MedCorp, RRF-4, 32 snippets)": (90.29, 67.40),
}


def _cli(data_dir: Path, *argv: str) -> None:
    status = qabench(["--data-dir", str(data_dir), *argv])
    if status != 0:
        raise SystemExit(f"qabench {' '.join(argv[:2])} failed ({status})")


def main() -> None:
    """Build, answer, score; print the accuracies beside MedRAG's."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirage", help="a checkout (or bare git directory) of MIRAGE")
    parser.add_argument("--snapshots", help="the folder of repository snapshots")
    parser.add_argument("--index", help="an existing literature index (default: build one)")
    parser.add_argument("--limit", type=int, help="answer only the first N questions of each")
    parser.add_argument("--work", help="working directory (default: a temporary one)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args()
    source = Path(args.mirage) if args.mirage else find(MIRAGE_REPO, snapshots_root(args.snapshots))
    if source is None:
        raise SystemExit("no snapshot of MIRAGE: give --mirage DIR or --snapshots DIR")
    work = Path(args.work or tempfile.mkdtemp(prefix="qabench-mirage-rag-"))
    root = checkout(source, ("rawdata",), work)
    sys.path.insert(0, str(REPO / "bench"))
    from mirage import benchmark  # bench/mirage.py: the rebuild, checked

    _, built = benchmark(root)
    whole = json.loads(built)
    timings: dict[str, float] = {}
    data_dir = work / "data"
    start = time.perf_counter()
    if args.index:
        (data_dir / "index").parent.mkdir(parents=True, exist_ok=True)
        config_index = Path(args.index)
    else:
        config_index = data_dir / "index"
        shared = load_config().datasets.reference_data
        _cli(data_dir, "index", "build", str(shared / PUBMEDQA))
        golden = sorted((root / "rawdata" / "bioasq").glob("Task*BGoldenEnriched/*.json"))
        _cli(data_dir, "index", "build", "--format", "bioasq-snippets", *map(str, golden))
    timings["index"] = time.perf_counter() - start
    results: dict[str, dict[str, object]] = {}
    for part in PARTS:
        entries = whole[part]
        if args.limit:
            entries = dict(list(entries.items())[: args.limit])
        questions = work / f"mirage-{part}.json"
        questions.write_text(json.dumps({part: entries}), encoding="utf-8")
        answers = work / f"rag-{part}.json"
        start = time.perf_counter()
        extra = ("--config", str(_config(work, config_index))) if args.index else ()
        qabench([*extra, "--data-dir", str(data_dir), "answer", "--dataset", str(questions),
                 "--builtin", "rag", "-o", str(answers)])  # fmt: skip
        timings[part] = time.perf_counter() - start
        doc = json.loads(answers.read_text("utf-8"))
        kinds = _answer_kinds(doc)
        out = work / f"score-{part}.json"
        with out.open("w", encoding="utf-8") as handle:
            saved, sys.stdout = sys.stdout, handle
            try:
                _cli(data_dir, "evaluate", "--dataset", str(questions), "--answers", str(answers),
                     "--profile", "mirage", "--json")  # fmt: skip
            finally:
                sys.stdout = saved
        qa = json.loads(out.read_text("utf-8"))["results"]["QA"]
        results[part] = {"questions": len(entries), "accuracy": qa[f"accuracy_{part}"],
                         "answered": kinds}  # fmt: skip
    _report(results, timings, args.json)


def _config(work: Path, index: Path) -> Path:
    path = work / "config.toml"
    path.write_text(f'[rag]\nindex_dir = "{index}"\n', encoding="utf-8")
    return path


def _answer_kinds(doc: dict[str, object]) -> dict[str, int]:
    """Count the RAG system's answers by kind: yes, no, another answer, none."""
    counts = {"yes": 0, "no": 0, "other": 0, "none": 0}
    questions = doc.get("questions", [])
    for q in questions if isinstance(questions, list) else []:
        answers = q.get("answers") or []
        first = answers[0] if answers else {}
        if isinstance(first, dict) and isinstance(first.get("boolean"), bool):
            counts["yes" if first["boolean"] else "no"] += 1
        elif first:
            counts["other"] += 1
        else:
            counts["none"] += 1
    return counts


def _report(
    results: dict[str, dict[str, object]], timings: dict[str, float], as_json: bool
) -> None:
    if as_json:
        print(json.dumps({"rag": results, "medrag_published": PUBLISHED, "seconds": timings}))
        return
    print(f"{'system':<48}{'BioASQ-Y/N':>12}{'PubMedQA*':>12}")
    ours = [100 * float(results[p]["accuracy"]) for p in PARTS]  # type: ignore[arg-type]
    print(f"{'qabench RAG (extractive; evidence corpus)':<48}{ours[0]:>12.2f}{ours[1]:>12.2f}")
    for name, (bioasq, pubmedqa) in PUBLISHED.items():
        print(f"{name:<48}{bioasq:>12.2f}{pubmedqa:>12.2f}")
    for part in PARTS:
        print(
            f"{part}: {results[part]['questions']} questions, answered {results[part]['answered']}"
        )
    print(", ".join(f"{k} {v:.0f} s" for k, v in timings.items()), file=sys.stderr)


if __name__ == "__main__":
    main()

"""Benchmark: an experiment of 400 questions against a loopback QA service that answers in 50 ms.

The service is the tests' loopback stub (a real HTTP server speaking the GERBIL QA protocol);
it returns each question's gold answers after sleeping 50 ms. For each concurrency the runner
asks all questions through ``WebServiceSystem`` and ``RequestGate``, scores them and writes the
results in one transaction, exactly as ``qabench experiment run`` does. Reported per run:

* asking: wall time from the first to the last answered question, and its ratio to the ideal
  ``questions x 50 ms / concurrency`` (1.00 would be a perfect pipeline);
* total: submission to summary, including scoring and the Data Cube write.

    .venv/bin/python bench/experiment.py [--data ../shared/data] [--concurrency 1 4 8 16]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from evaluators.datasets import library  # noqa: E402
from evaluators.experiments.model import SoftwareRelease, TaskStatus  # noqa: E402
from evaluators.experiments.runner import (  # noqa: E402
    ExperimentRequest,
    ExperimentRunner,
    ProgressEvent,
    RunLimits,
    SystemRequest,
)
from evaluators.systems.protocol import SystemKind, builtin_registry  # noqa: E402
from server.config import load_config  # noqa: E402
from store.triplestore import TripleStore  # noqa: E402
from tests.plugins.qa_stub import ok, start_stub  # noqa: E402

QALD9_TRAIN = "qald/ag-sc_QALD/9/data/qald-9-train-multilingual.json"
BASE = "http://bench.qabench.test"


def _dataset_file(data: Path, questions: int, target: Path) -> Path:
    """Write the first ``questions`` questions of QALD-9 train (408) to a temporary file."""
    doc = json.loads((data / QALD9_TRAIN).read_text("utf-8"))
    doc["questions"] = [
        q
        for q in doc["questions"]
        if any(s.get("language") == "en" and s.get("string") for s in q.get("question", []))
    ][:questions]
    if len(doc["questions"]) < questions:
        raise SystemExit(f"QALD-9 train has only {len(doc['questions'])} English questions")
    target.write_text(json.dumps(doc), "utf-8")
    return target


class _Clock:
    """First and last moment a question was answered (from the runner's progress events)."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.last: float | None = None
        self.lock = threading.Lock()

    def __call__(self, event: ProgressEvent) -> None:
        if event.status is not TaskStatus.RUNNING:
            return
        now = time.perf_counter()
        with self.lock:
            self.first = now if self.first is None else self.first
            self.last = now


def run(data: Path, questions: int, delay: float, concurrency: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = _dataset_file(data, questions, Path(tmp) / "qald-9-train-400.json")
        store = TripleStore.open(Path(tmp) / "store")
        outcome = library.load_dataset(store, BASE, path, name="bench")
        gold = {q.text("en"): q for q in library.read_dataset(store, outcome.info).questions}
        server = start_stub(lambda text, lang: ok(gold.get(text), delay=delay))
        try:
            limits = RunLimits(
                request_timeout_seconds=30,
                concurrency_per_system=concurrency,
                parallel_tasks=1,
                retries=0,
                bootstrap_samples=100,
            )
            runner = ExperimentRunner(
                store,
                BASE,
                limits=limits,
                registry=builtin_registry(),
                release=SoftwareRelease("bench"),
            )
            clock = _Clock()
            started = time.perf_counter()
            submission = runner.submit(
                ExperimentRequest(
                    systems=(SystemRequest("stub", SystemKind.WEB_SERVICE, url=server.stub.url),),
                    datasets=("bench",),
                )
            )
            summary = runner.run(submission.id, progress=clock)
            total = time.perf_counter() - started
        finally:
            server.stop()
            store.close()
    [task] = summary.tasks
    if task.status is not TaskStatus.FINISHED or task.errors:
        raise SystemExit(f"the benchmark experiment did not finish cleanly: {task}")
    assert clock.first is not None and clock.last is not None
    # the first progress event comes after the first answer: add one answer's time back
    asking = clock.last - clock.first + delay
    ideal = questions * delay / concurrency
    return {
        "asking": asking,
        "ideal": ideal,
        "ratio": asking / ideal,
        "total": total,
        "requests": float(len(server.stub.requests)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="shared data directory")
    parser.add_argument("--questions", type=int, default=400)
    parser.add_argument("--delay", type=float, default=0.05, help="seconds per answer")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8, 16])
    args = parser.parse_args()
    data = args.data or load_config().datasets.reference_data
    print(f"{args.questions} questions, loopback service answering in {args.delay * 1000:.0f} ms")
    print(f"{'concurrency':>11} {'ideal s':>8} {'asking s':>9} {'ratio':>6} {'total s':>8}")
    for concurrency in args.concurrency:
        r = run(data, args.questions, args.delay, concurrency)
        assert r["requests"] == args.questions
        print(
            f"{concurrency:>11} {r['ideal']:>8.2f} {r['asking']:>9.2f} {r['ratio']:>6.2f} "
            f"{r['total']:>8.2f}"
        )


if __name__ == "__main__":
    main()

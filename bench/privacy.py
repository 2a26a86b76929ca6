"""Benchmark: does timing tell which private experiments exist?

Builds a store with one published and one private experiment whose task holds many per-question
observations (``--questions``), serves it on loopback (a real HTTP server in this process) and
asks, anonymously, for the private experiment's resources and for the same resources of an id
that does not exist: the experiment, its task, a per-question observation of the task and its
graph, each as HTML and as Turtle. For every pair it prints the status codes, whether the
bodies are identical (once the id is replaced), the median time of ``--requests`` requests each
and the ratio private / missing. Target (issue 13): ratio < 1.5 and identical responses.

    .venv/bin/python bench/privacy.py [--questions 20000] [--requests 30]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from evaluators import cube  # noqa: E402
from evaluators.results import (  # noqa: E402
    EvaluationResult,
    ExperimentTypeResult,
    MeasureValue,
    QuestionScore,
)
from store import graphs  # noqa: E402
from tests.plugins.server import (  # noqa: E402
    BASE,
    PRIVATE_EXPERIMENT,
    LiveServer,
    build_app,
    fixture_quads,
    server_config,
)
from vocab import iris  # noqa: E402

MISSING = "209912319999"


def _big_task(questions: int) -> list[object]:
    graph = graphs.experiment_graph(BASE, PRIVATE_EXPERIMENT)
    task = iris.task_iri(BASE, PRIVATE_EXPERIMENT, 1)
    scores = tuple(
        QuestionScore(str(n), (MeasureValue("f1", (n % 7) / 7),)) for n in range(questions)
    )
    result = EvaluationResult(
        dataset="demo-qa",
        profile="strict",
        language="en",
        questions=questions,
        results=(ExperimentTypeResult("QA", (MeasureValue("macro_f1", 0.5),), scores),),
    )
    return list(
        cube.observation_quads(
            result,
            base=BASE,
            task=task,
            graph=graph,
            system=iris.system_iri(BASE, "Demo System"),
            dataset_version=iris.dataset_version_iri(BASE, "demo-qa", 1),
        )
    )


def _medians_ms(
    client: httpx.Client, paths: tuple[str, str], accept: str, n: int
) -> list[tuple[float, httpx.Response]]:
    """Time ``n`` requests to each path, alternating, so both see the same machine load."""
    times: list[list[float]] = [[], []]
    last = [client.get(p, headers={"Accept": accept}) for p in paths]
    for _ in range(n):
        for i, path in enumerate(paths):
            started = time.perf_counter()
            last[i] = client.get(path, headers={"Accept": accept})
            times[i].append(time.perf_counter() - started)
    return [(statistics.median(t) * 1000, r) for t, r in zip(times, last, strict=True)]


def _comparable(response: httpx.Response, experiment_id: str) -> str:
    text = response.text.replace(experiment_id, "ID")
    # The request id differs on every response, by design.
    rid = response.headers.get("x-request-id", "")
    return text.replace(rid, "RID") if rid else text


def main() -> int:
    """Run the measurement and print one line per resource and form."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=20_000)
    parser.add_argument("--requests", type=int, default=30)
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        quads = fixture_quads() + _big_task(args.questions)
        live = LiveServer(build_app(server_config(Path(tmp)), quads))  # type: ignore[arg-type]
        print(f"store: {len(quads)} quads ({time.perf_counter() - started:.1f} s to build)")
        paths = [
            "/experiment/{id}",
            "/task/{id}/1",
            "/task/{id}/1/obs/qa/1",
            "/graph/experiment/{id}",
        ]
        worst = 0.0
        identical = True
        try:
            with httpx.Client(base_url=live.url, timeout=60) as client:
                print(f"{'path':28} {'form':12} {'private':>12} {'missing':>12} {'ratio':>6}  same")
                for template in paths:
                    for accept in ("text/html", "text/turtle"):
                        pair = (template.format(id=PRIVATE_EXPERIMENT), template.format(id=MISSING))
                        (private_ms, private), (missing_ms, missing) = _medians_ms(
                            client, pair, accept, args.requests
                        )
                        same = private.status_code == missing.status_code and _comparable(
                            private, PRIVATE_EXPERIMENT
                        ) == _comparable(missing, MISSING)
                        ratio = private_ms / missing_ms
                        worst, identical = max(worst, ratio), identical and same
                        codes = f"{private.status_code}/{missing.status_code}"
                        print(
                            f"{template:28} {accept:12} {private_ms:9.2f} ms {missing_ms:9.2f} ms"
                            f" {ratio:6.2f}  {same} ({codes})"
                        )
        finally:
            live.stop()
    print(f"worst ratio {worst:.2f} (target < 1.5); responses identical: {identical}")
    return 0 if worst < 1.5 and identical else 1


if __name__ == "__main__":
    sys.exit(main())

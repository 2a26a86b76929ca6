"""Crash safety: ``kill -9`` of ``qabench experiment run`` mid-experiment leaves a consistent
store; the next start marks the unfinished task interrupted, and ``experiment resume`` finishes
exactly that task, so every task ends up with exactly one set of observations."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from evaluators.datasets import library
from evaluators.experiments.answers import stored_replies
from evaluators.experiments.model import AskingUnit, TaskStatus
from evaluators.experiments.read import experiment_summary
from evaluators.experiments.recovery import is_process_alive, process_token, recover_interrupted
from evaluators.experiments.runner import ExperimentRequest, SystemRequest
from evaluators.systems.protocol import SystemKind
from store import graphs
from store.triplestore import TripleStore
from tests import REPO
from tests.plugins.qa_stub import wait_for
from tests.plugins.qa_stub_experiments import QALD_FILES, TextOracle, even_gold

BASE = "http://qabench.test"

DUPLICATES = """
PREFIX qb: <http://purl.org/linked-data/cube#>
PREFIX qab: <https://w3id.org/qabench/vocab#>
SELECT ?g ?task ?type ?measure (COUNT(?value) AS ?n) WHERE {
  GRAPH ?g {
    ?o a qb:Observation ; qab:ofTask ?task ; qab:experimentType ?type ; qb:measureType ?measure .
    ?o ?measure ?value .
    FILTER NOT EXISTS { ?o <http://w3id.org/gerbil/vocab#datasetElement> ?q }
  }
}
GROUP BY ?g ?task ?type ?measure
HAVING (COUNT(?value) > 1)
"""

OBSERVATIONS = """
PREFIX qb: <http://purl.org/linked-data/cube#>
PREFIX qab: <https://w3id.org/qabench/vocab#>
SELECT ?g ?task (COUNT(DISTINCT ?o) AS ?n) WHERE {
  GRAPH ?g { ?o a qb:Observation ; qab:ofTask ?task }
}
GROUP BY ?g ?task
"""


def _config(tmp_path: Path, shared: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f"""
[server]
base_iri = "{BASE}"
demo = false

[store]
data_dir = "{tmp_path / "data"}"

[datasets]
reference_data = "{shared}"

[evaluation]
request_timeout_seconds = 10.0
concurrency_per_system = 2
parallel_tasks = 1
bootstrap_samples = 10
"""
    )
    return path


def _qabench(config: Path, *args: str, **kwargs) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("QABENCH_DATA_DIR", None)
    return subprocess.Popen(
        [sys.executable, "-m", "server", "--config", str(config), "experiment", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
        **kwargs,
    )


def _count(store: TripleStore, query: str, g: NamedNode, task: str) -> int:
    rows = store.select(query, g=g, task=NamedNode(task))
    return int(rows[0]["n"].value) if rows else 0


@pytest.mark.timeout(240)
@pytest.mark.slow
def test_kill_minus_nine_then_resume_finishes_exactly_the_interrupted_task(
    tmp_path: Path, shared_data: Path, qa_stubs
) -> None:
    config = _config(tmp_path, shared_data)
    store_dir = tmp_path / "data" / "store"
    store = TripleStore.open(store_dir)
    oracle = TextOracle()
    texts: dict[str, set[str]] = {}
    ids: dict[str, str] = {}
    for name in ("qald-8-test", "qald-9-test"):
        outcome = library.load_dataset(store, BASE, shared_data / QALD_FILES[name], name=name)
        dataset = library.read_dataset(store, outcome.info)
        oracle.add(dataset)
        texts[name] = {q.text("en") or "" for q in dataset.questions}
        if name == "qald-9-test":
            ids = {q.id: q.text("en") or "" for q in dataset.questions}
    store.close()
    answer = even_gold(oracle)
    stub = qa_stubs(lambda text, lang: dataclasses.replace(answer(text, lang), delay=0.03))
    proc = _qabench(
        config,
        "run",
        "--dataset",
        "qald-8-test",
        "--dataset",
        "qald-9-test",
        "--system",
        f"slow={stub.url}",
    )
    try:
        experiment_id = proc.stdout.readline().strip()  # printed as soon as it is stored
        assert len(experiment_id) == 12, proc.stderr.read()
        # task 1 (41 questions) ends before task 2 starts (parallel_tasks = 1): kill in task 2
        assert wait_for(lambda: len(stub.requests) >= 41 + 30, timeout=120)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    asked_before = len(stub.requests)
    assert asked_before < 41 + 150

    # the next start finds a consistent store and marks the unfinished task
    store = TripleStore.open(store_dir)
    assert recover_interrupted(store, BASE) == [experiment_id]
    summary = experiment_summary(store, BASE, experiment_id)
    first, second = summary.tasks
    assert first.status is TaskStatus.FINISHED
    assert second.status is TaskStatus.INTERRUPTED and second.code == -107
    g = graphs.experiment_graph(BASE, experiment_id)
    first_observations = _count(store, OBSERVATIONS, g, first.iri)
    assert first_observations > 0
    assert _count(store, OBSERVATIONS, g, second.iri) == 0
    assert recover_interrupted(store, BASE) == []  # idempotent
    # the replies task 2 received before the kill were stored as they came in
    stored = stored_replies(store, BASE, experiment_id, AskingUnit.of(second.plan))
    store.close()
    stored_texts = {ids[qid] for qid in stored}
    assert 0 < len(stored) <= asked_before - 41

    proc = _qabench(config, "resume", experiment_id, "--json")
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    doc = json.loads(out)
    assert [t["state"] for t in doc["tasks"]] == ["finished", "finished"]
    # only the interrupted task's questions without a stored reply were asked; task 1 was not
    # repeated, and no question was asked twice
    resumed = stub.asked()[asked_before:]
    assert len(resumed) == 150 - len(stored)
    assert not set(resumed) & stored_texts
    assert set(resumed) | stored_texts == texts["qald-9-test"]

    store = TripleStore.open(store_dir)
    try:
        summary = experiment_summary(store, BASE, experiment_id)
        assert [t.status for t in summary.tasks] == [TaskStatus.FINISHED, TaskStatus.FINISHED]
        assert summary.tasks[0].started == first.started  # not run again
        assert _count(store, OBSERVATIONS, g, first.iri) == first_observations
        assert _count(store, OBSERVATIONS, g, summary.tasks[1].iri) > 0
        assert store.select(DUPLICATES, g=g) == []
    finally:
        store.close()


def test_process_tokens_tell_live_from_dead_processes() -> None:
    me = process_token()
    assert is_process_alive(me)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    token = process_token(child.pid)
    child.wait()
    assert not is_process_alive(token)
    # a reused pid has another start time
    host, pid, start = me.split(":")
    assert not is_process_alive(f"{host}:{pid}:{int(start or 0) + 1}")
    # a runner on another host cannot be checked and is left alone
    assert is_process_alive(f"elsewhere.example:{pid}:1")


def test_recovery_leaves_live_experiments_alone(load_qald, make_runner, store, config) -> None:
    load_qald("qald-8-test")
    runner = make_runner()
    submission = runner.submit(
        ExperimentRequest(
            systems=(SystemRequest("gold", SystemKind.BUILT_IN, builtin="gold"),),
            datasets=("qald-8-test",),
        )
    )
    # queued, but claimed as live by this process: untouched
    assert recover_interrupted(store, config.base_iri, live={submission.id}) == []
    # nobody runs it: interrupted, and resume finishes it
    assert recover_interrupted(store, config.base_iri) == [submission.id]
    summary = runner.resume(submission.id)
    assert [t.status for t in summary.tasks] == [TaskStatus.FINISHED]
    assert runner.resume(submission.id).tasks == summary.tasks  # nothing left to do

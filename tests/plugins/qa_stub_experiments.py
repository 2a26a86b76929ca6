"""Fixtures for experiment tests: real QALD datasets in a temporary store, runners, stub rules.

(The file name sorts after ``qa_stub`` on purpose: plugins load in name order, and this one
imports that one's helpers.) The well-behaved and faulty loopback services decide what to answer from the question string
alone (the GERBIL QA protocol sends nothing else), so ``TextOracle`` maps a string back to the
gold question that carries it; tests compute their expected answers with the same oracle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from evaluators.datasets import library
from evaluators.experiments.model import SoftwareRelease
from evaluators.experiments.runner import ExperimentRunner, RunLimits
from evaluators.model import Dataset, Question
from evaluators.systems.registry import SystemRegistry, builtin_registry
from server.config import Config
from store.triplestore import TripleStore
from tests.plugins.qa_stub import FAULTS, Reply, ok

QALD_FILES = {
    "qald-8-test": "qald/ag-sc_QALD/8/data/qald-8-test-multilingual.json",
    "qald-8-train": "qald/ag-sc_QALD/8/data/qald-8-train-multilingual.json",
    "qald-9-test": "qald/ag-sc_QALD/9/data/qald-9-test-multilingual.json",
}
TEBAQA_QALD8_TRAIN = (
    "systems/AKSW_NLIWOD/qa.ml/src/main/resources/QALD8Answers/TeBaQA_QALD8_Train.json"
)

# Timeouts and sizes used by experiment tests (kept small so fault tests stay fast).
TEST_TIMEOUT = 1.0


@dataclass
class TextOracle:
    """Finds the gold question behind a question string (first dataset wins on duplicates)."""

    by_text: dict[str, Question] = field(default_factory=dict)

    def add(self, dataset: Dataset) -> None:
        for question in dataset.questions:
            text = question.text("en")
            if text:
                self.by_text.setdefault(text, question)

    def gold(self, text: str) -> Question | None:
        return self.by_text.get(text)


def even_gold(oracle: TextOracle) -> Callable[[str, str], Reply]:
    """Behaviour: the gold answer for even question ids, an empty answer for odd ones."""

    def behave(text: str, lang: str) -> Reply:
        question = oracle.gold(text)
        if question is not None and question.id.isdigit() and int(question.id) % 2 == 0:
            return ok(question)
        return ok(None)

    return behave


def faulty(oracle: TextOracle, faults: list[str], every: int) -> Callable[[str, str], Reply]:
    """Behaviour: a fault for ids divisible by ``every`` (cycling through ``faults``), else gold."""

    def behave(text: str, lang: str) -> Reply:
        question = oracle.gold(text)
        if question is not None and is_faulted(question.id, every):
            return FAULTS[faults[(int(question.id) // every) % len(faults)]](TEST_TIMEOUT)
        return ok(question)

    return behave


def is_faulted(question_id: str, every: int) -> bool:
    return question_id.isdigit() and int(question_id) % every == 0


def limits_for_tests(**changes: float) -> RunLimits:
    settings: dict[str, float] = {
        "request_timeout_seconds": TEST_TIMEOUT,
        "concurrency_per_system": 4,
        "parallel_tasks": 3,
        "retries": 1,
        "bootstrap_samples": 20,
    }
    settings.update(changes)
    return RunLimits(**settings)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def qald_datasets(shared_data: Path) -> dict[str, Path]:
    """Return the paths of the QALD files experiment tests load."""
    paths = {name: shared_data / rel for name, rel in QALD_FILES.items()}
    missing = [str(p) for p in paths.values() if not p.is_file()]
    assert not missing, f"reference data missing: {missing}"
    return paths


@pytest.fixture
def load_qald(
    store: TripleStore, config: Config, qald_datasets: dict[str, Path]
) -> Callable[..., dict[str, Dataset]]:
    """Return ``load(*names) -> {name: Dataset}``: load QALD files into the test store."""

    def load(*names: str) -> dict[str, Dataset]:
        out = {}
        for name in names:
            outcome = library.load_dataset(store, config.base_iri, qald_datasets[name], name=name)
            out[name] = library.read_dataset(store, outcome.info)
        return out

    return load


@pytest.fixture
def make_runner(store: TripleStore, config: Config) -> Iterator[Callable[..., ExperimentRunner]]:
    """Return ``make(limits=None, registry=None, on_write=None, kb="", strict_ids=False)``."""
    runners: list[ExperimentRunner] = []

    def make(
        limits: RunLimits | None = None,
        registry: SystemRegistry | None = None,
        on_write: Callable[[], None] | None = None,
        kb: str = "",
        strict_ids: bool = False,
    ) -> ExperimentRunner:
        runner = ExperimentRunner(
            store,
            config.base_iri,
            limits=limits or limits_for_tests(),
            registry=registry or builtin_registry(),
            release=SoftwareRelease("0.1.0", "0123456789abcdef0123456789abcdef01234567"),
            on_write=on_write,
            kb=kb,
            strict_ids=strict_ids,
        )
        runners.append(runner)
        return runner

    yield make
    for runner in runners:
        for eid in runner.live():
            runner.cancel(eid)
            runner.wait(eid, 30)

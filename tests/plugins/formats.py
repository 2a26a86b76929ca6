"""Fixtures for the benchmark file parser tests (``tests/test_evaluators_formats*.py``).

``formats_data`` points at the hand-written edge-case files in ``tests/data/formats``;
``formats_real_files`` lists the public benchmark files the acceptance test parses, grouped by
how their question count is computed independently of our parsers.

TEXT2SPARQL: ``t2s_files`` (the shared CK25/DB25 files), ``ck25_gold``/``db25_gold`` (questions
with the published reference results) and ``ck25_executor``, queries on the CK25 graph in a
real store; session-scoped and read-only (the graph's 26,587 statements load once).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from evaluators.formats import parse_bytes, parse_file
from evaluators.formats.text2sparql.gold import with_gold_results
from evaluators.knowledge.bases import load_kb
from evaluators.knowledge.execution import StoreExecutor, open_executor
from evaluators.model import Dataset
from store.triplestore import TripleStore
from tests import TEST_DATA

FORMATS_DATA = TEST_DATA / "formats"


@pytest.fixture(scope="session")
def formats_data() -> Path:
    """Return the directory of hand-written format fixtures."""
    return FORMATS_DATA


@pytest.fixture
def formats_parse(formats_data: Path) -> Callable[[str], Dataset]:
    """Return a function parsing one fixture file by name (format detected)."""

    def parse(name: str) -> Dataset:
        path = formats_data / name
        return parse_bytes(path.read_bytes(), source=name)

    return parse


def qald_json(*questions: dict[str, object], **top: object) -> bytes:
    """Return a QALD JSON document holding ``questions`` (plus top-level fields)."""
    return json.dumps({"questions": list(questions), **top}).encode("utf-8")


@dataclass(frozen=True, slots=True)
class RealFiles:
    """Public benchmark files, by area."""

    qald: tuple[Path, ...]
    bioasq: tuple[Path, ...]
    systems_json: tuple[Path, ...]
    systems_xml: tuple[Path, ...]


@pytest.fixture(scope="session")
def formats_real_files(shared_data: Path) -> RealFiles:
    """Return the QALD, BioASQ and system answer files under the shared data directory."""

    def glob(area: str, *suffixes: str) -> tuple[Path, ...]:
        return tuple(
            sorted(
                p
                for p in (shared_data / area).rglob("*")
                if p.is_file() and (not suffixes or p.suffix in suffixes)
            )
        )

    return RealFiles(
        qald=glob("qald", ".json", ".xml"),
        bioasq=glob("bioasq"),
        systems_json=glob("systems", ".json"),
        systems_xml=glob("systems", ".xml"),
    )


# ---------------------------------------------------------------------------- TEXT2SPARQL

BASE = "http://qabench.test"
# The three shared 2025 systems: (system, dataset) pairs with published files.
SYSTEMS = (("WSE", "ck25"), ("LACODAM", "ck25"), ("IIS-Q", "ck25"), ("IIS-Q", "db25"))


@dataclass(frozen=True, slots=True)
class T2sFiles:
    """Where the shared TEXT2SPARQL files are."""

    root: Path

    def questions(self, dataset: str) -> Path:
        name = "ck25/questions.yml" if dataset == "ck25" else "db25/questions_db25.yaml"
        return self.root / name

    def reference(self, dataset: str) -> Path:
        return self.root / dataset / f"{dataset}_true_result_set.json"

    def result(self, system: str, dataset: str, kind: str) -> Path:
        """``kind``: answers, eval or system_result_set."""
        return self.root / "2025" / "results" / system / f"{dataset}_{kind}.json"

    @property
    def graph(self) -> list[Path]:
        return [self.root / "ck25" / "prod-vocab.ttl", self.root / "ck25" / "prod-inst.ttl"]


@pytest.fixture(scope="session")
def t2s_files(shared_data: Path) -> T2sFiles:
    """Return the shared TEXT2SPARQL files."""
    return T2sFiles(shared_data / "text2sparql")


def gold_dataset(files: T2sFiles, dataset: str) -> Dataset:
    """Return a questions file with the published reference result set as gold answers."""
    reference = files.reference(dataset)
    return with_gold_results(
        parse_file(files.questions(dataset)), parse_file(reference), source=reference.name
    )


@pytest.fixture(scope="session")
def ck25_gold(t2s_files: T2sFiles) -> Dataset:
    """CK25 with the published reference results."""
    return gold_dataset(t2s_files, "ck25")


@pytest.fixture(scope="session")
def db25_gold(t2s_files: T2sFiles) -> Dataset:
    """DB25 (English and Spanish) with the published reference results."""
    return gold_dataset(t2s_files, "db25")


@pytest.fixture(scope="session")
def ck25_executor(
    t2s_files: T2sFiles, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[StoreExecutor]:
    """Run queries on the CK25 graph (ontology and instances) in a real store; read-only."""
    store = TripleStore.open(tmp_path_factory.mktemp("ck25") / "store")
    info = load_kb(store, BASE, t2s_files.graph, "ck25")
    assert info.triples > 26_587  # the instances and the ontology
    executor = open_executor(store, BASE, "ck25")
    assert isinstance(executor, StoreExecutor)
    yield executor
    store.close()

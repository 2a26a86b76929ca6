"""Fixtures for the benchmark file parser tests (``tests/test_evaluators_formats*.py``).

``formats_data`` points at the hand-written edge-case files in ``tests/data/formats``;
``formats_real_files`` lists the public benchmark files the acceptance test parses, grouped by
how their question count is computed independently of our parsers.

TEXT2SPARQL: ``t2s_files`` (the shared CK25/DB25 files), ``ck25_gold``/``db25_gold`` (questions
with the published reference results) and ``ck25_executor``, queries on the CK25 graph in a
real store; session-scoped and read-only (the graph's 26,587 statements load once).

TEXT2SPARQL'26: ``t2s26`` names the published files kept in ``tests/data/text2sparql-2026``
(their ``README.md`` says where each comes from, under which licence, and which are excerpts);
``ck26_gold`` and ``db26_gold`` are the questions files with the excerpts of the reference
result sets as gold, restricted to the questions the excerpts hold.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import NamedNode

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
    assert store.layout(NamedNode(info.graph)).quads > 26_587  # the instances and the ontology
    executor = open_executor(store, BASE, "ck25")
    assert isinstance(executor, StoreExecutor)
    yield executor
    store.close()


# ---------------------------------------------------------------------------- TEXT2SPARQL'26

T2S26 = TEST_DATA / "text2sparql-2026"
# The eight systems of the 2026 tables, in the published order of the overall table.
SYSTEMS_2026 = (
    "SPARQL-LLM",
    "INFAI-ETI-AND-FRIENDS-A",
    "ADFR",
    "LIBER-AI-CLAUDE",
    "IRIS",
    "LIBER-AI-QWEN",
    "INFAI-ETI-AND-FRIENDS-C",
    "INFAI-ETI-AND-FRIENDS-B",
)
# The run each published DB26 table cell uses, where a system has several (IRIS: its second).
PUBLISHED_RUN = {("db26", "IRIS"): 2}
# The three systems whose result sets the tests score (excerpts).
EXCERPT_SYSTEMS = ("SPARQL-LLM", "IRIS", "LIBER-AI-QWEN")


@dataclass(frozen=True, slots=True)
class T2s26Files:
    """Where the kept 2026 files are."""

    root: Path = T2S26

    def questions(self, dataset: str) -> Path:
        return self.root / dataset / f"questions_{dataset}.yml"

    def reference(self, dataset: str) -> Path:
        """The excerpt of the reference result set."""
        return self.root / dataset / f"{dataset}_true_result_set.excerpt.json"

    def suffix(self, dataset: str, system: str, run: int | None = None) -> str:
        number = run if run is not None else PUBLISHED_RUN.get((dataset, system), 1)
        return "" if number == 1 else str(number)

    def results(self, dataset: str, system: str, run: int | None = None) -> Path:
        """The official evaluation file (``*_results.json``) of a system's run."""
        tail = self.suffix(dataset, system, run)
        return self.root / dataset / system / f"{dataset}_results{tail}.json"

    def predictions(self, dataset: str, system: str) -> Path:
        """The excerpt of a system's published result set (the published run)."""
        tail = self.suffix(dataset, system)
        return self.root / dataset / system / f"{dataset}_pred_result_set{tail}.excerpt.json"

    def all_results(self) -> list[Path]:
        return sorted(self.root.glob("*/*/*_results*.json"))

    def tables(self) -> dict[str, Any]:
        return json.loads((self.root / "published_tables.json").read_text())  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def t2s26() -> T2s26Files:
    """Return the kept TEXT2SPARQL'26 files."""
    return T2s26Files()


def excerpt_gold(files: T2s26Files, dataset: str) -> Dataset:
    """Return a questions file with the reference excerpt as gold (the excerpt's questions)."""
    reference = parse_file(files.reference(dataset))
    kept = {q.id for q in reference.questions}
    questions = parse_file(files.questions(dataset))
    questions = replace(questions, questions=tuple(q for q in questions.questions if q.id in kept))
    return with_gold_results(questions, reference, source=files.reference(dataset).name)


@pytest.fixture(scope="session")
def ck26_gold(t2s26: T2s26Files) -> Dataset:
    """CK26 questions 1-11 (English and German) with the published reference results."""
    return excerpt_gold(t2s26, "ck26")


@pytest.fixture(scope="session")
def db26_gold(t2s26: T2s26Files) -> Dataset:
    """DB26 questions 1-14 (English and Spanish) with the published reference results."""
    return excerpt_gold(t2s26, "db26")

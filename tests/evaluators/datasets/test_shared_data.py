"""Acceptance: every shared benchmark file loads into a real store with the right question count."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluators.datasets import library
from store.triplestore import TripleStore
from tests.evaluators.formats.test_realdata import independent_count

BASE = "http://qabench.test"


def shared_files(shared_data: Path) -> list[Path]:
    """Every QALD-family file and the BioASQ training sets."""
    qald = sorted(p for p in (shared_data / "qald").rglob("*") if p.suffix in (".json", ".xml"))
    bioasq = sorted((shared_data / "bioasq").rglob("*training*.json"))
    return qald + bioasq


@pytest.mark.slow
def test_every_shared_dataset_file_loads(shared_data: Path, tmp_path: Path) -> None:
    paths = shared_files(shared_data)
    store = TripleStore.open(tmp_path / "store")
    loaded = 0
    try:
        for i, path in enumerate(paths):
            outcome = library.load_dataset(store, BASE, path, name=f"f{i}-{path.stem}")
            assert outcome.info.questions == independent_count(path)[0], path
            stored = library.read_dataset(store, outcome.info)
            assert len(stored.questions) == outcome.info.questions, path
            loaded += 1
        assert len(library.list_versions(store, BASE)) == loaded
    finally:
        store.close()
    assert loaded == len(paths)
    assert loaded >= 80

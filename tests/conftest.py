"""Shared fixtures. Area-specific fixtures live in ``tests/plugins/<area>.py`` (loaded below)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from bench.snapshot import Snapshot, checkout, find, snapshots_root
from server.config import Config, config_from_dict, load_config
from store.triplestore import TripleStore
from tests import REPO

# Hypothesis times every example (200 ms by default) and fails one that runs over: a wall-clock
# assertion, which a loaded machine breaks. The suite checks properties, never their speed.
settings.register_profile("qabench", deadline=None)
settings.load_profile("qabench")

pytest_plugins = [
    "tests.disk",
    *sorted(
        f"tests.plugins.{p.stem}"
        for p in (Path(__file__).parent / "plugins").glob("*.py")
        if p.stem != "__init__"
    ),
]


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Return the public benchmark data directory (``datasets.reference_data``)."""
    path = load_config().datasets.reference_data
    if not path.is_dir():
        pytest.fail(f"reference data not found at {path}; set datasets.reference_data")
    return path


@pytest.fixture(scope="session")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    """Return a function giving a checkout of some paths of a public repository's snapshot
    (``bench/snapshot.py``: the full SciQA/FIRESPARQL and MIRAGE files, which are not in
    ``../shared/data``); a test that needs one is skipped, with the reason, without it."""
    made: dict[tuple[str, tuple[str, ...]], Path] = {}

    def get(repository: str, *paths: str) -> Path:
        key = (repository, paths)
        if key not in made:
            source = find(repository, snapshots_root())
            if source is None:
                pytest.skip(
                    f"no snapshot of {repository} (set QABENCH_SNAPSHOTS to a folder holding "
                    "owner+name/repo or owner_name)"
                )
            made[key] = checkout(source, paths, tmp_path_factory.mktemp("snapshot"))
        return made[key]

    return get


@pytest.fixture
def config(tmp_path: Path) -> Config:
    """Return a configuration whose store, index and caches live under ``tmp_path``."""
    return config_from_dict(
        {
            "server": {"base_iri": "http://qabench.test", "demo": False},
            "store": {"data_dir": str(tmp_path / "data")},
        },
        source=REPO / "config.toml",
    )


@pytest.fixture
def store(config: Config) -> Iterator[TripleStore]:
    """Return a real Oxigraph store in the test's temporary directory."""
    ts = TripleStore.open(config.store_path)
    yield ts
    ts.close()

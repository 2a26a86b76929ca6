"""Private data on disk is owner-only whatever the umask: the data directory, the store, the
SPARQL snapshots and uploaded answers files (``store/permissions.py`` and its callers)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from store.permissions import private_directory, private_file
from tests.plugins.experiment_pages import EXAMPLE_DATASET, EXAMPLES, make_forms_app
from tests.plugins.page_helpers import BEARER, upload


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_private_directory_creates_every_missing_level_owner_only(
    tmp_path: Path, open_umask: None
) -> None:
    leaf = private_directory(tmp_path / "a" / "b" / "c")
    assert [_mode(p) for p in (tmp_path / "a", tmp_path / "a" / "b", leaf)] == [0o700] * 3
    existing = tmp_path / "open"
    existing.mkdir(mode=0o755)
    assert _mode(private_directory(existing)) == 0o700
    loose = tmp_path / "file"
    loose.write_text("x")
    assert _mode(private_file(loose)) == 0o600


def test_server_files_holding_private_data_are_owner_only(tmp_path: Path, open_umask: None) -> None:
    app: Any = make_forms_app(tmp_path)
    svc = app.extensions["services"]
    try:
        client = app.test_client()
        response = client.post(
            "/experiments/new",
            data={
                "dataset": f"{EXAMPLE_DATASET}@1",
                "answers_file_1": upload((EXAMPLES / "example-answers.json").read_bytes()),
            },
            headers=BEARER,
            content_type="multipart/form-data",
        )
        assert response.status_code == 201, response.get_data(as_text=True)
        svc.notify_write()
        view = svc.view()
        data = svc.config.data_dir
        assert _mode(data) == 0o700
        assert _mode(svc.config.store_path) == 0o700
        # The SPARQL views and the mirror hold hard links to the store's files: their
        # directories are owner-only, so nobody else can reach those files.
        assert _mode(view.path) == 0o700 and _mode(view.path.parent) == 0o700
        assert _mode(view.path.parent / "mirror") == 0o700
        uploads = [p for p in (data / "uploads").rglob("*")]
        assert any(p.is_file() for p in uploads)
        for path in uploads:
            assert _mode(path) == (0o600 if path.is_file() else 0o700), path
    finally:
        svc.close()

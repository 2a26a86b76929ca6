"""The store's write-ahead log stays bounded however many writes a process makes (issue 41: it
grew to 1.16 GB over a server's life and filled a 700 MB disk)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from store import triplestore
from store.triplestore import TripleStore


def _wal(path: Path) -> int:
    return sum(e.stat().st_size for e in os.scandir(path) if e.name.endswith(".log"))


def test_the_write_ahead_log_stays_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limit = 4 << 20
    monkeypatch.setattr(triplestore, "WAL_LIMIT_BYTES", limit, raising=False)
    store = TripleStore.open(tmp_path / "store")
    graph = NamedNode("http://g.test/")
    largest = 0
    try:
        for n in range(60):  # about 30 MB of writes in all, 0.5 MB each
            before = _wal(tmp_path / "store")
            store.add(
                [
                    Quad(
                        NamedNode(f"http://e.test/{n}/{m}"),
                        NamedNode("http://p.test/"),
                        Literal("x" * 200),
                        graph,
                    )
                    for m in range(2000)
                ]
            )
            largest = max(largest, _wal(tmp_path / "store") - before)
            assert _wal(tmp_path / "store") <= 2 * limit + 2 * largest, n
        assert len(store) == 120_000  # nothing was lost to the flushes
    finally:
        store.close()

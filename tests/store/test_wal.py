"""The store's write-ahead log stays bounded however many writes a process makes (issue 41: it
grew to 1.16 GB over a server's life and filled a 700 MB disk), and a store closed on a full
disk gives its files back at once (their space is what the disk needs)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from store import triplestore
from store.errors import StoreError
from store.triplestore import TripleStore
from tests.disk import fill, open_under


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


def test_a_store_that_cannot_flush_when_closed_lets_its_files_go_at_once(
    small_disk_of: Callable[[str], Path],
) -> None:
    # The public mirror's rebuild deletes a store closed on a full disk; while anything holds
    # the engine's files open their space stays taken, and the rebuild ran out of it again and
    # again (the mirror's full-disk test, on a busy host): the close's error was logged with
    # the error as an argument, pytest's log handler keeps records, and the error's traceback
    # kept the frame that still held the engine's store. The error is kept here likewise.
    disk = small_disk_of("8m")
    store = TripleStore.open(disk / "store", journaled=False)
    graph = NamedNode("http://g.test/")
    quads = [
        Quad(NamedNode(f"http://s.test/{n}"), graph, Literal("x" * 500), graph) for n in range(2000)
    ]
    store.add(quads)  # in the log and in memory, not yet in a table
    ballast = fill(disk, chunk=1 << 16)
    with pytest.raises(StoreError, match="Flushing the store failed") as failed:
        store.close()
    held = open_under(disk / "store")
    assert held == [], held
    shutil.rmtree(disk / "store")
    ballast.unlink()
    assert shutil.disk_usage(disk).free > 7 << 20  # the space came back with the deletion
    assert failed.value.__cause__ is not None  # the error, kept all along, says why

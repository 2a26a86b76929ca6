"""The public mirror across restarts and faults: kept on disk, caught up from the journal,
never sharing a file with the main store, healed after a full disk, repaired when it differs.

Real on-disk stores throughout; the full disk is a real tmpfs mounted for the test (root only).
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from server.replica.mirror import PublicMirror
from server.replica.views import ViewNotReadyError, ViewPublisher
from store import graphs
from store.changes import ChangeLog
from store.errors import StoreError
from store.triplestore import TripleStore, journal_path
from store.visibility import VisibilityIndex
from tests.disk import fill
from tests.server.replica.test_views import BASE, EX, World, _flag, _q


def _inodes(directory: Path) -> set[int]:
    return {p.stat().st_ino for p in directory.rglob("*") if p.is_file()}


def _reopen(world: World, tmp: Path) -> World:
    world.views.close()
    world.store.close()
    return World(tmp)


def test_the_mirror_and_its_views_share_no_file_with_the_store(tmp_path: Path) -> None:
    world = World(tmp_path)
    try:
        world.store.add([_q(f"s{n}", "x", graphs.rag_graph(BASE)) for n in range(200)])
        world.store.raw.flush()
        view = world.sync()
        store_files = _inodes(tmp_path / "store")
        assert store_files
        assert not store_files & _inodes(tmp_path / "views"), "a view file is a store file"
        assert view.path.parent == tmp_path / "views"
    finally:
        world.views.close()
        world.store.close()


def test_a_restart_keeps_the_mirror_and_copies_only_what_was_written_since(
    tmp_path: Path,
) -> None:
    kb, rag = graphs.kb_graph(BASE, "kb"), graphs.rag_graph(BASE)
    world = World(tmp_path)
    world.store.add([_q(f"k{n}", "x", kb) for n in range(100)] + [_q("r", "1", rag)])
    world.sync()
    world.views.close()
    world.store.close()
    # a command writes while no server runs: a new public graph, a private then published
    # experiment, and a quad into the RAG graph
    command = TripleStore.open(tmp_path / "store")
    exp = graphs.experiment_graph(BASE, "202401010001")
    command.add([*_flag("202401010001", False), _q("e", "secret", exp)])
    command.apply(remove=[_flag("202401010001", False)[0]], add=[_flag("202401010001", True)[0]])
    command.add([_q("r", "2", rag)])
    command.close()
    world = World(tmp_path)
    try:
        view = world.sync()
        assert world.views.events["kept"] == 1 and world.views.events["rebuilt"] == 0
        assert world.view_quads(view) == world.expected()
        assert view.quads == len(world.expected())
        # the RAG graph and the published experiment, not the 100-quad knowledge base
        assert world.views._mirror.caught_up == 2
    finally:
        world.views.close()
        world.store.close()


def test_a_journal_that_no_longer_reaches_back_makes_the_mirror_rebuild(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.store.add([_q("a", "1", graphs.rag_graph(BASE))])
    world.sync()
    world.views.close()
    world.store.close()
    journal = journal_path(tmp_path / "store")
    epoch = journal.read_text("utf-8").split()[3]
    journal.write_text(f"qabench-journal 1 1000 {epoch}\n", "utf-8")  # trimmed beyond the mark
    world = World(tmp_path)
    try:
        view = world.sync()
        assert world.views.events == {"kept": 0, "rebuilt": 1, "healed": 0, "repaired": 0}
        assert world.view_quads(view) == world.expected()
    finally:
        world.views.close()
        world.store.close()


def test_a_server_stopped_while_a_batch_was_applied_counts_the_mirror_again(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)
    world.store.add([_q(f"s{n}", "x", graphs.rag_graph(BASE)) for n in range(7)])
    world.sync()
    world.views.close()
    world.store.close()
    state = tmp_path / "views" / "mirror.json"
    # as a kill -9 in the middle of ``apply`` leaves it: the count is marked untrusted
    state.write_text(state.read_text().replace('"quads": 7', '"quads": null'))
    world = World(tmp_path)
    try:
        assert world.sync().quads == 7
    finally:
        world.views.close()
        world.store.close()


def test_a_mirror_that_differs_from_the_store_is_repaired(world: World) -> None:
    rag = graphs.rag_graph(BASE)
    world.store.add([_q("a", "1", rag), _q("b", "2", rag)])
    world.sync()
    mirror = world.views._mirror
    assert mirror.store is not None
    mirror.store.raw.remove(_q("a", "1", rag))  # as a lost write would leave it
    world.store.add([_q("c", "3", rag)])
    view = world.sync()
    assert world.view_quads(view) == world.expected()
    assert world.views.events["repaired"] == 1


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    found = World(tmp_path)
    yield found
    found.views.close()
    found.store.close()


@pytest.fixture
def small_disk(small_disk_of: Callable[[str], Path]) -> Path:
    """A real 16 MiB tmpfs (needs root; CI runs as root)."""
    return small_disk_of("16m")


def test_a_full_disk_stops_the_views_until_space_is_freed_then_they_heal(
    tmp_path: Path, small_disk: Path
) -> None:
    store = TripleStore.open(tmp_path / "store")
    store.changes = ChangeLog()
    index = VisibilityIndex(store, BASE)
    views = ViewPublisher(store, index.public_names(), small_disk / "views", grace_seconds=0)
    rag = graphs.rag_graph(BASE)
    generation = 0

    def sync() -> int:
        nonlocal generation
        assert store.changes is not None
        changes, sequence = store.changes.drain()
        index.apply(changes)
        generation += 1
        views.submit(generation, changes, index.public_names(), sequence)
        return generation

    try:
        views.current(sync(), timeout=30)
        ballast = fill(small_disk)
        big = "x" * 2000
        store.add([_q(f"s{n}", big, rag) for n in range(20_000)])  # ~40 MB: cannot fit
        wanted = sync()
        with pytest.raises(ViewNotReadyError) as failed:
            views.current(wanted, timeout=20)
        assert str(small_disk) not in str(failed.value) and "/" not in str(failed.value)
        assert views.failing
        ballast.unlink()
        store.drop_graphs([rag])
        store.add([_q("after", "the fault", rag)])
        wanted = sync()
        deadline = time.monotonic() + 60
        while True:
            try:
                view = views.current(wanted, timeout=2)
                break
            except ViewNotReadyError:
                assert time.monotonic() < deadline, "the views did not heal"
        while views.failing:  # the view is installed a moment before the fault is cleared
            assert time.monotonic() < deadline, "the fault was never cleared"
            time.sleep(0.05)
        assert views.events["healed"] >= 1
        reader = TripleStore.open_read_only(view.path)
        try:
            assert {str(q) for q in reader.quads()} == {str(_q("after", "the fault", rag))}
        finally:
            reader.close()
    finally:
        views.close()
        store.close()
        shutil.rmtree(small_disk / "views", ignore_errors=True)


def test_the_mirror_alone_rebuilds_from_any_store(tmp_path: Path) -> None:
    main = TripleStore.in_memory()
    public = graphs.catalog_graph(BASE)
    main.add([Quad(NamedNode(EX + "a"), NamedNode(EX + "p"), Literal("1"), public)])
    mirror = PublicMirror(main, tmp_path / "mirror")
    assert mirror.open(frozenset({public.value})) is False  # nothing kept: built
    assert mirror.quads == 1 and mirror.mark == 0
    mirror.close()


def test_a_write_on_a_full_disk_says_so_and_changes_nothing(small_disk: Path) -> None:
    from store.errors import StoreFullError

    store = TripleStore.open(small_disk / "store")
    rag = graphs.rag_graph(BASE)
    try:
        store.add([_q("kept", "1", rag)])
        ballast = fill(small_disk)
        with pytest.raises(StoreFullError, match="No space left"):
            store.add([_q(f"s{n}", "x" * 2000, rag) for n in range(20_000)])
        ballast.unlink()
        assert {str(q) for q in store.quads()} == {str(_q("kept", "1", rag))}
    finally:
        with contextlib.suppress(StoreError):
            store.close()

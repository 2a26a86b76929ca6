"""Dump files of views: written once per checkpoint by a background thread, followed while they
grow, shared by views of one checkpoint, older files removed, failures reported to readers."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from pyoxigraph import RdfFormat, parse

from server.replica import dumps as dumps_module
from server.replica.dumps import DumpFailedError, PublicDumps
from store import graphs
from tests.server.replica.test_views import BASE, World, _q


def test_a_reader_gets_the_first_bytes_before_the_file_is_complete(
    world: World, tmp_path: Path
) -> None:
    world.store.add([_q(f"s{n}", "x" * 40, graphs.rag_graph(BASE)) for n in range(60_000)])
    view = world.sync()
    dumps = PublicDumps(tmp_path / "dump")
    dump = dumps.request(view)
    chunks = dumps.follow(dump)
    first = next(chunks)
    complete_at_first_byte = dump.complete
    body = first + b"".join(chunks)
    assert not complete_at_first_byte, "the reader waited for the whole file"
    assert dump.complete and body == dump.path.read_bytes()
    assert len(list(parse(body, RdfFormat.N_QUADS))) == 60_000


def test_views_of_one_checkpoint_share_one_file_and_older_files_go(
    world: World, tmp_path: Path
) -> None:
    rag = graphs.rag_graph(BASE)
    world.store.add([_q("a", "1", rag)])
    view = world.sync()
    dumps = PublicDumps(tmp_path / "dump")
    first = dumps.request(view)
    b"".join(dumps.follow(first))
    # a private write: a new generation, the same checkpoint, the same file
    assert dumps.request(dataclasses.replace(view, generation=view.generation + 1)) is first
    world.store.add([_q("b", "2", rag)])
    newer = dumps.request(world.sync())
    assert b"".join(dumps.follow(newer)).count(b"\n") == 2
    assert not first.path.exists()
    assert dumps.wait_compressed(newer, 10) is not None


def test_a_dump_that_cannot_be_written_fails_its_readers(world: World, tmp_path: Path) -> None:
    view = world.sync()
    gone = dataclasses.replace(view, path=tmp_path / "no-such-view")
    dumps = PublicDumps(tmp_path / "dump")
    dump = dumps.request(gone)
    with pytest.raises(DumpFailedError):
        b"".join(dumps.follow(dump))
    assert dumps.request(gone) is not dump  # a failed dump is tried again


def test_at_most_a_few_dumps_are_written_at_once(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dumps_module, "MAX_WRITERS", 0)
    view = world.sync()
    dumps = PublicDumps(tmp_path / "dump")
    monkeypatch.setattr(dumps_module, "MAX_WRITERS", 1)
    first = dumps.request(view)
    # while it is being written, a newer checkpoint gets the dump being written
    other = dumps.request(dataclasses.replace(view, path=view.path.with_name("view-other")))
    assert other is first or first.complete
    b"".join(dumps.follow(first))


@pytest.fixture
def world(tmp_path: Path):  # type: ignore[no-untyped-def]
    found = World(tmp_path)
    yield found
    found.views.close()
    found.store.close()

"""The change journal: written before each write by whoever holds the store, read by followers
that catch up after a restart; bounded, and robust to a line cut short by a crash."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from store.changes import ChangeJournal
from store.errors import StoreError
from store.triplestore import TripleStore, journal_path

G1, G2 = NamedNode("http://x/g1"), NamedNode("http://x/g2")


def _q(graph: NamedNode, n: int = 0) -> Quad:
    return Quad(NamedNode(f"http://x/s{n}"), NamedNode("http://x/p"), Literal("o"), graph)


def test_every_kind_of_write_names_its_graphs_before_it_happens(tmp_path: Path) -> None:
    store = TripleStore.open(tmp_path / "store")
    assert store.journal is not None
    mark = store.journal.last
    store.add([_q(G1)])
    store.apply(remove=[_q(G1)], add=[_q(G2)])
    store.drop_graphs([G1])
    store.bulk_add([_q(G2, 1), _q(G1, 2)])
    span = store.journal.since(mark)
    assert span is not None and not span.everything
    assert span.graphs == {G1.value, G2.value} and span.last == mark + 5
    store.update("INSERT DATA { <http://x/a> <http://x/b> <http://x/c> }")
    everything = store.journal.since(mark)
    assert everything is not None and everything.everything
    store.close()
    # another process (a command) opening the store continues the numbering
    again = TripleStore.open(tmp_path / "store")
    assert again.journal is not None and again.journal.last == mark + 6
    again.close()


def test_a_write_that_cannot_be_journaled_does_not_happen(tmp_path: Path) -> None:
    store = TripleStore.open(tmp_path / "store")
    journal = journal_path(tmp_path / "store")
    journal.unlink()
    journal.mkdir()  # appending fails now
    with pytest.raises(StoreError, match="journal"):
        store.add([_q(G1)])
    assert len(store) == 0
    store.close()


def test_a_line_cut_short_by_a_crash_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "j"
    journal = ChangeJournal(path)
    journal.note([G1.value])
    with path.open("a") as fh:
        fh.write("2\thttp://x/half")  # a crash in the middle of a line
    again = ChangeJournal(path)
    assert again.last == 1
    again.note([G2.value])
    span = again.since(1)
    assert span is not None and span.graphs == {G2.value} and span.last == 2


def test_the_journal_is_bounded_and_says_when_it_no_longer_reaches_back(tmp_path: Path) -> None:
    journal = ChangeJournal(tmp_path / "j", keep=10)
    for n in range(25):
        journal.note([f"http://x/g{n}"])
    assert journal.last == 25
    assert len((tmp_path / "j").read_text().splitlines()) <= 11
    assert journal.since(2) is None  # trimmed: the follower must read everything
    recent = journal.since(23)
    assert recent is not None and recent.graphs == {"http://x/g23", "http://x/g24"}
    assert journal.since(26) is None  # a mark from another journal


def test_a_damaged_journal_is_set_aside_and_followers_read_everything(tmp_path: Path) -> None:
    first = ChangeJournal(tmp_path / "j")
    first.note([G1.value])
    (tmp_path / "j").write_text("not a journal\n")
    fresh = ChangeJournal(tmp_path / "j")  # the store still opens
    assert (tmp_path / "j.damaged").read_text() == "not a journal\n"
    assert fresh.epoch != first.epoch
    assert fresh.since(0, first.epoch) is None  # a mark of the old journal means nothing now
    span = fresh.since(0, fresh.epoch)
    assert span is not None and span.graphs == frozenset()

"""The experiment index (server.listings) on a real store: kept from changes, it always equals
an index built from scratch, and its boards hold the aggregate values the store holds."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from pyoxigraph import NamedNode, Quad

from evaluators.results import MEASURES
from server import listings
from server.listings import ExperimentIndex
from server.services import IndexSnapshots
from store import graphs
from tests.plugins.experiment_pages import PagesWorld

MACRO_F1 = MEASURES["macro_f1"].term.value


def _copy(world: PagesWorld, new_id: str) -> list[Quad]:
    """Return the published experiment's graph again under another id (as a new experiment)."""
    svc = world.services
    old_id = world.published.id
    graph = graphs.experiment_graph(svc.base, old_id)
    out = []
    for q in svc.store.quads(graph=graph):
        terms = [
            NamedNode(t.value.replace(old_id, new_id)) if isinstance(t, NamedNode) else t
            for t in (q.subject, q.predicate, q.object)
        ]
        out.append(Quad(*terms, graphs.experiment_graph(svc.base, new_id)))  # type: ignore[arg-type]
    return out


def test_the_index_kept_from_changes_equals_one_built_from_scratch(
    fresh_world: PagesWorld,
) -> None:
    svc = fresh_world.services
    kept = svc.experiments
    everyone = svc.visibility().can_see
    version = next(s.version for e in kept.entries() for s in e.scores)
    qa = next(s.type for e in kept.entries() for s in e.scores if s.type.endswith("#QA"))
    before = list(kept.board(version, qa, everyone))
    assert before and all(s.value(MACRO_F1) is not None or s.builtin for _, s in before)

    copied = _copy(fresh_world, "209901010001")
    svc.store.add(copied)
    svc.notify_write()
    assert kept.entries() == ExperimentIndex(svc.store, svc.base).entries()
    after = list(kept.board(version, qa, svc.visibility().can_see))
    new = [s for e, s in after if e.id == "209901010001"]
    published = [s for e, s in before if e.id == fresh_world.published.id]
    assert len(new) == len(published) >= 2
    assert [s.value(MACRO_F1) for s in new] == [s.value(MACRO_F1) for s in published]

    # an experiment removed leaves every board it was on
    svc.store.drop_graphs([graphs.experiment_graph(svc.base, "209901010001")])
    svc.notify_write()
    assert kept.entries() == ExperimentIndex(svc.store, svc.base).entries()
    assert list(kept.board(version, qa, svc.visibility().can_see)) == before


def test_boards_yield_only_what_the_reader_may_see(pages_world: PagesWorld) -> None:
    svc = pages_world.services
    index = svc.experiments
    version = next(s.version for e in index.entries() for s in e.scores)
    qa = next(s.type for e in index.entries() for s in e.scores if s.type.endswith("#QA"))
    anyone = {e.id for e, _ in index.board(version, qa, svc.visibility().can_see)}
    everything = {e.id for e, _ in index.board(version, qa, lambda _g: True)}
    assert pages_world.private.id in everything - anyone
    assert pages_world.published.id in anyone
    assert list(index.board(version, "http://example.org/no-such-type", lambda _g: True)) == []


def test_the_index_is_kept_on_disk_and_catches_up_with_writes_made_since(
    fresh_world: PagesWorld, tmp_path: Path
) -> None:
    """Saved by one run, read back by the next, which summarises only what was written since
    (as by a command while no server ran), and equals an index built from scratch."""
    svc = fresh_world.services
    snapshot = tmp_path / "index.pickle"
    svc.experiments.save(snapshot)
    svc.store.add(_copy(fresh_world, "209901010002"))  # written after the snapshot
    svc.store.drop_graphs([graphs.experiment_graph(svc.base, fresh_world.published.id)])
    resumed = ExperimentIndex(svc.store, svc.base, snapshot)
    assert resumed.caught_up == 2  # the new experiment and the dropped one, nothing else
    assert resumed.entries() == ExperimentIndex(svc.store, svc.base).entries()
    assert "209901010002" in {e.id for e in resumed.entries()}
    assert fresh_world.published.id not in {e.id for e in resumed.entries()}


def test_snapshots_are_written_in_chunks_and_not_again_when_read_back_unchanged(
    fresh_world: PagesWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot is pickled a chunk at a time (the request threads run between chunks), reads
    back whole, and an index read back with nothing written since is not saved again."""
    monkeypatch.setattr(listings, "SNAPSHOT_CHUNK", 1)  # a chunk per experiment
    svc = fresh_world.services
    snapshot = tmp_path / "index.pickle"
    svc.experiments.save(snapshot)
    resumed = ExperimentIndex(svc.store, svc.base, snapshot)
    assert resumed.caught_up == 0
    assert len(resumed.entries()) >= 2 and resumed.entries() == svc.experiments.entries()
    assert resumed.on_disk == resumed.version
    written = snapshot.stat().st_mtime_ns
    # the services as IndexSnapshots sees them (the real write lock), holding this index
    kept = IndexSnapshots(SimpleNamespace(experiments=resumed, writes=svc.writes), snapshot, 3600)
    kept.close()  # stops its thread after a last save
    assert snapshot.stat().st_mtime_ns == written  # unchanged: not written again
    # written since: read back, caught up, and saved again
    svc.store.add(_copy(fresh_world, "209901010003"))
    caught_up = ExperimentIndex(svc.store, svc.base, snapshot)
    assert caught_up.caught_up == 1 and caught_up.on_disk == -1
    changed = IndexSnapshots(
        SimpleNamespace(experiments=caught_up, writes=svc.writes), snapshot, 3600
    )
    changed.close()
    assert snapshot.stat().st_mtime_ns != written
    again = ExperimentIndex(svc.store, svc.base, snapshot)
    assert again.caught_up == 0 and again.entries() == caught_up.entries()


def test_a_snapshot_that_cannot_be_trusted_is_not_read(
    fresh_world: PagesWorld, tmp_path: Path
) -> None:
    svc = fresh_world.services
    snapshot = tmp_path / "index.pickle"
    svc.experiments.save(snapshot)
    data = snapshot.read_bytes()
    snapshot.write_bytes(data[: len(data) // 2])  # cut short
    assert ExperimentIndex(svc.store, svc.base, snapshot).caught_up is None  # built instead
    svc.experiments.save(snapshot)
    assert svc.store.journal is not None
    svc.store.journal.path.write_text("damaged")  # another journal: marks mean nothing
    svc.store.journal = type(svc.store.journal)(svc.store.journal.path)
    rebuilt = ExperimentIndex(svc.store, svc.base, snapshot)
    assert rebuilt.caught_up is None
    assert rebuilt.entries() == svc.experiments.entries()

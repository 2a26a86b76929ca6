"""The SPARQL views: the visibility index, the public mirror and the checkpoints workers read.

A real on-disk store takes a scripted series of writes of every kind (quads added and removed,
graphs dropped and bulk-loaded, an experiment created private and then published, an arbitrary
SPARQL update); after each one the incrementally maintained index must equal one rebuilt from
scratch, and the published view must hold exactly the public graphs of the main store.
"""

from __future__ import annotations

import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, NamedNode, Quad, RdfFormat

from server.replica.mirror import PublicMirror
from server.replica.views import View, ViewNotReadyError, ViewPublisher, check_view
from store import graphs
from store.changes import ChangeLog
from store.errors import StoreError
from store.triplestore import TripleStore
from store.visibility import VisibilityIndex, token_hash
from vocab.project import QAB
from vocab.standard import XSD

BASE = "http://views.test"
EX = "http://views.test/thing/"


def _q(s: str, o: str, graph: NamedNode) -> Quad:
    return Quad(NamedNode(EX + s), NamedNode(EX + "p"), Literal(o), graph)


def _flag(eid: str, published: bool, token: str = "t0k3n") -> list[Quad]:
    admin = graphs.admin_graph(BASE)
    iri = NamedNode(f"{BASE}/experiment/{eid}")
    return [
        Quad(iri, QAB.published, Literal(str(published).lower(), datatype=XSD.boolean), admin),
        Quad(iri, QAB.accessTokenHash, Literal(token_hash(token)), admin),
    ]


class World:
    """A store with a change log, its visibility index and a view publisher over it."""

    def __init__(self, tmp: Path, grace: float = 60.0) -> None:
        self.store = TripleStore.open(tmp / "store")
        self.store.changes = ChangeLog()
        self.index = VisibilityIndex(self.store, BASE)
        self.views = ViewPublisher(
            self.store, self.index.public_names(), tmp / "views", grace_seconds=grace
        )
        self.generation = 0

    def sync(self) -> View:
        assert self.store.changes is not None
        changes, sequence = self.store.changes.drain()
        self.index.apply(changes)
        self.generation += 1
        self.views.submit(self.generation, changes, self.index.public_names(), sequence)
        return self.views.current(self.generation, timeout=30)

    def view_quads(self, view: View) -> set[str]:
        store = TripleStore.open_read_only(view.path)
        try:
            return {str(q) for q in store.quads()}
        finally:
            store.close()

    def expected(self) -> set[str]:
        fresh = VisibilityIndex(self.store, BASE)
        return {str(q) for g in fresh.public_graphs() for q in self.store.quads(graph=g)}


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    found = World(tmp_path)
    yield found
    found.views.close()
    found.store.close()


def _steps(tmp: Path) -> list[tuple[str, Callable[[TripleStore], None]]]:
    kb = graphs.kb_graph(BASE, "kb")
    rag = graphs.rag_graph(BASE)
    exp = graphs.experiment_graph(BASE, "202401010001")
    other = graphs.experiment_graph(BASE, "202401010002")
    ttl = tmp / "kb.nt"
    ttl.write_text("".join(f"<{EX}b{i}> <{EX}p> <{EX}c{i}> .\n" for i in range(50)), "utf-8")
    return [
        ("add public quads", lambda s: s.add([_q("a", "1", rag), _q("b", "2", kb)])),
        (
            "create a private experiment",
            lambda s: s.add([*_flag("202401010001", False), _q("e", "secret", exp)]),
        ),
        ("write into the private experiment", lambda s: s.add([_q("f", "more", exp)])),
        (
            "a published experiment",
            lambda s: s.add([*_flag("202401010002", True), _q("o", "open", other)]),
        ),
        ("remove and add", lambda s: s.apply(remove=[_q("a", "1", rag)], add=[_q("a", "2", rag)])),
        (
            "publish the private experiment",
            lambda s: s.apply(
                remove=[_flag("202401010001", False)[0]], add=[_flag("202401010001", True)[0]]
            ),
        ),
        ("bulk load a graph", lambda s: s.bulk_load(ttl, RdfFormat.N_TRIPLES, graph=kb)),
        ("drop a graph", lambda s: s.drop_graphs([other])),
        (
            "an arbitrary update",
            lambda s: s.update(f'INSERT DATA {{ GRAPH <{rag.value}> {{ <{EX}u> <{EX}p> "u" }} }}'),
        ),
        (
            "unpublish by update",
            lambda s: s.update(
                f"DELETE WHERE {{ GRAPH <{graphs.admin_graph(BASE).value}> "
                f"{{ <{BASE}/experiment/202401010001> <{QAB.published.value}> ?v }} }} ;"
                f" INSERT DATA {{ GRAPH <{graphs.admin_graph(BASE).value}> "
                f"{{ <{BASE}/experiment/202401010001> <{QAB.published.value}> "
                f'"false"^^<{XSD.boolean.value}> }} }}'
            ),
        ),
        ("a staging graph", lambda s: s.add([_q("z", "staged", graphs.staging_graph(BASE, "x"))])),
    ]


def test_views_hold_exactly_the_public_graphs_after_every_kind_of_write(
    world: World, tmp_path: Path
) -> None:
    steps = _steps(tmp_path)
    public_secret = False
    for label, step in steps:
        step(world.store)
        view = world.sync()
        fresh = VisibilityIndex(world.store, BASE)
        assert world.index.public_names() == fresh.public_names(), label
        assert {p.graph for p in world.index.private()} == {p.graph for p in fresh.private()}
        assert world.view_quads(view) == world.expected(), label
        assert view.graphs == fresh.public_names(), label
        public_secret = label.startswith("publish") or (public_secret and "unpublish" not in label)
        assert ('"secret"' in str(world.view_quads(view))) == public_secret, label
    assert len(steps) == 11


def test_a_token_view_adds_only_the_opened_experiment(world: World) -> None:
    secret = graphs.experiment_graph(BASE, "202401010001")
    other = graphs.experiment_graph(BASE, "202401010003")
    world.store.add([*_flag("202401010001", False, "mine"), _q("e", "secret", secret)])
    world.store.add([*_flag("202401010003", False, "theirs"), _q("t", "theirs", other)])
    view = world.sync()
    assert not {secret.value, other.value} & {g for g in view.graphs}
    opened = world.views.token_view(view, (secret,))
    found = world.view_quads(opened)
    assert str(_q("e", "secret", secret)) in found
    assert not any("theirs" in q for q in found)
    assert world.views.token_view(view, (secret,)) == opened  # made once


def test_a_view_holding_an_unexpected_graph_is_refused(tmp_path: Path) -> None:
    store = TripleStore.open(tmp_path / "s")
    store.add([_q("a", "1", graphs.admin_graph(BASE))])
    store.checkpoint(tmp_path / "c")
    store.close()
    with pytest.raises(StoreError, match="may not see"):
        check_view(tmp_path / "c", frozenset())


def test_the_mirror_refuses_a_touched_graph_that_is_not_public(tmp_path: Path) -> None:
    main = TripleStore.open(tmp_path / "main")
    hidden, public = graphs.admin_graph(BASE), graphs.catalog_graph(BASE)
    main.add([_q("a", "1", hidden), _q("b", "2", public)])
    mirror = PublicMirror(main, tmp_path / "mirror")
    mirror.rebuild(frozenset({public.value}))
    mirror.verify(frozenset({hidden.value, public.value}))  # as built: nothing leaked
    assert mirror.store is not None
    mirror.store.add([_q("a", "1", hidden)])  # as a faulty replay would
    with pytest.raises(StoreError, match="may not see"):
        mirror.verify(frozenset({hidden.value}))
    mirror.close()
    main.close()


def test_views_and_the_mirror_are_readable_by_the_owner_only(world: World) -> None:
    view = world.sync()
    for path in (view.path, view.path.parent, view.path.parent / "mirror"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path


def test_old_views_are_pruned_after_the_grace_period(tmp_path: Path) -> None:
    world = World(tmp_path, grace=0.0)
    made = []
    for n in range(5):
        world.store.add([_q(f"n{n}", "x", graphs.rag_graph(BASE))])
        made.append(world.sync().path)
    world.views.close()
    world.store.close()
    assert made[-1].exists() and made[-2].exists() and made[-3].exists()
    assert not made[0].exists() and not made[1].exists()


# ---------------------------------------------------------------- randomised change sequences
_GRAPHS = ("rag", "kb", "exp1", "exp2", "staging")
_ITEMS = tuple(range(6))


def _graph(name: str) -> NamedNode:
    return {
        "rag": graphs.rag_graph(BASE),
        "kb": graphs.kb_graph(BASE, "kb"),
        "exp1": graphs.experiment_graph(BASE, "202401010001"),
        "exp2": graphs.experiment_graph(BASE, "202401010002"),
        "staging": graphs.staging_graph(BASE, "x"),
    }[name]


_quad = st.builds(
    lambda g, s, o: _q(f"s{s}", f"o{o}", _graph(g)),
    st.sampled_from(_GRAPHS),
    st.sampled_from(_ITEMS),
    st.sampled_from(_ITEMS),
)
_step = st.one_of(
    st.tuples(st.just("add"), st.lists(_quad, max_size=4)),
    st.tuples(st.just("apply"), st.lists(_quad, max_size=4), st.lists(_quad, max_size=4)),
    st.tuples(st.just("same"), st.lists(_quad, min_size=1, max_size=3)),
    st.tuples(st.just("drop"), st.sampled_from(_GRAPHS)),
    st.tuples(st.just("flag"), st.sampled_from(("202401010001", "202401010002")), st.booleans()),
    st.tuples(st.just("blank"), st.sampled_from(_GRAPHS)),
    st.tuples(st.just("bulk"), st.lists(_quad, max_size=4)),
    st.tuples(st.just("update"), _quad),
    st.tuples(st.just("restate"), st.sampled_from(_GRAPHS), st.sampled_from(_ITEMS)),
)


def _do(store: TripleStore, step: tuple[object, ...]) -> None:
    kind = step[0]
    if kind == "add":
        store.add(step[1])  # type: ignore[arg-type]
    elif kind == "apply":
        store.apply(remove=step[1], add=step[2])  # type: ignore[arg-type]
    elif kind == "same":
        # removed and added again by one write: present afterwards
        store.apply(remove=step[1], add=step[1])  # type: ignore[arg-type]
    elif kind == "drop":
        store.drop_graphs([_graph(str(step[1]))])
    elif kind == "flag":
        eid, published = str(step[1]), bool(step[2])
        admin = graphs.admin_graph(BASE)
        store.apply(
            remove=list(store.quads(NamedNode(f"{BASE}/experiment/{eid}"), None, None, admin)),
            add=_flag(eid, published),
        )
    elif kind == "blank":
        store.add([Quad(BlankNode(), NamedNode(EX + "p"), Literal("b"), _graph(str(step[1])))])
    elif kind == "restate":
        # as a task's state is rewritten: the old quads read back from the store (in the
        # store's canonical form) removed, the same values written again in another form
        node = NamedNode(f"{EX}task{step[2]}")
        graph = _graph(str(step[1]))
        old = list(store.quads(node, None, None, graph))
        when = Literal("2026-11-27T09:05:34.5+00:00", datatype=XSD.dateTime)
        count = Literal("01", datatype=XSD.int)
        store.apply(
            remove=old,
            add=[
                Quad(node, NamedNode(EX + "started"), when, graph),
                Quad(node, NamedNode(EX + "errors"), count, graph),
            ],
        )
    elif kind == "bulk":
        store.bulk_add(step[1])  # type: ignore[arg-type]
    else:
        quad = step[1]
        assert isinstance(quad, Quad)
        store.update(
            f"INSERT DATA {{ GRAPH {quad.graph_name} {{ {quad.subject} {quad.predicate} "
            f"{quad.object} }} }}"
        )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.lists(_step, min_size=1, max_size=4)), min_size=1, max_size=6))
def test_the_view_equals_the_public_graphs_after_random_change_sequences(
    batches: list[tuple[list[tuple[object, ...]]]],
) -> None:
    """Whatever writes come, in whatever batches, the view holds exactly the public data."""
    with tempfile.TemporaryDirectory() as tmp:
        world = World(Path(tmp))
        try:
            world.sync()
            for (steps,) in batches:
                for step in steps:
                    _do(world.store, step)
                view = world.sync()
                assert world.view_quads(view) == world.expected(), steps
                # right by replaying: the runtime check never had to copy a graph again
                assert world.views.events["repaired"] == 0, steps
        finally:
            world.views.close()
            world.store.close()


def test_a_quad_removed_and_added_by_one_write_stays_in_the_view(world: World) -> None:
    rag = graphs.rag_graph(BASE)
    started = _q("task", "started", rag)
    world.store.add([started])
    world.sync()
    # as a task's state is rewritten: the same quad removed and added in one transaction
    world.store.apply(remove=[started], add=[started, _q("task", "running", rag)])
    assert str(started) in world.view_quads(world.sync())


def test_a_view_older_than_the_readers_write_is_never_served(world: World) -> None:
    world.store.add([_q("a", "1", graphs.rag_graph(BASE))])
    view = world.sync()
    # a reader who has seen write generation N + 1 cannot be given the view of N
    with pytest.raises(ViewNotReadyError, match="catching up"):
        world.views.current(view.generation + 1, timeout=0.2)
    assert world.views.current(view.generation, timeout=0.2) == view


def test_a_value_rewritten_in_another_lexical_form_stays_in_the_view(world: World) -> None:
    """The store keeps "...+00:00" as "...Z": removed in one form, added in the other."""
    rag = graphs.rag_graph(BASE)
    node = NamedNode(EX + "task")
    started = Literal("2026-11-27T09:05:34.540609+00:00", datatype=XSD.dateTime)
    world.store.add([Quad(node, NamedNode(EX + "started"), started, rag)])
    world.sync()
    stored = list(world.store.quads(node, None, None, rag))  # canonical: ...Z
    world.store.apply(remove=stored, add=[Quad(node, NamedNode(EX + "started"), started, rag)])
    view = world.sync()
    assert world.view_quads(view) == world.expected() and len(world.expected()) == 1
    assert view.quads == 1
    assert world.views.events["repaired"] == 0  # right by replaying, not by the repair

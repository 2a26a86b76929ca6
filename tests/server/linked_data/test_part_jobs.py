"""Experiment and task document parts read by a query worker from the public view are the parts
the serving process would read itself; nothing private goes to a worker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from server.linked_data import documents
from server.linked_data.part_jobs import READERS
from server.linked_data.parts import Part
from store import graphs
from tests.plugins.experiment_pages import PAGES_BASE, PagesWorld, make_pages_world
from vocab.project import QAB


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PagesWorld]:
    world = make_pages_world(tmp_path_factory.mktemp("part-jobs"))
    world.services.pool.start()
    assert world.services.pool.wait_ready(60)
    yield world
    world.services.close()


def _here(world: PagesWorld, kind: str, iri: NamedNode, graph: NamedNode, page: int) -> Part:
    return READERS[kind](world.services, iri, graph, page)


def test_a_worker_reads_the_same_parts_as_the_server(world: PagesWorld) -> None:
    svc = world.services
    vis = svc.visibility()
    eid = world.published.id
    graph = graphs.experiment_graph(PAGES_BASE, eid)
    experiment = NamedNode(f"{PAGES_BASE}/experiment/{eid}")
    tasks = [q.object for q in svc.store.quads(experiment, QAB.task, None, graph)]
    assert len(tasks) == 4
    compared = 0
    for kind, iri in [("experiment", experiment), *(("task", t) for t in tasks)]:
        assert isinstance(iri, NamedNode)
        there = documents._read_elsewhere(svc, kind, iri, graph, 1, vis)
        assert there is not None, iri  # read by a worker
        here = _here(world, kind, iri, graph, 1)
        assert there.quads == here.quads  # the same quads, in the same order
        assert (there.page, there.pages, there.exact) == (here.page, here.pages, here.exact)
        assert here.quads
        compared += 1
    assert compared == 5
    # what the document route serves is the worker's part
    response = world.app.test_client().get(f"/experiment/{eid}.nq")
    assert response.status_code == 200


def test_private_experiments_and_opened_readers_are_read_by_the_server(world: PagesWorld) -> None:
    svc = world.services
    private = world.private.id
    graph = graphs.experiment_graph(PAGES_BASE, private)
    iri = NamedNode(f"{PAGES_BASE}/experiment/{private}")
    public = svc.visibility()
    # not in the public view: never sent to a worker, whoever asks
    assert graph.value not in svc.view().graphs
    assert documents._read_elsewhere(svc, "experiment", iri, graph, 1, public) is None
    opened = svc.visibility([world.private.token])
    assert opened.unlocked
    assert documents._read_elsewhere(svc, "experiment", iri, graph, 1, opened) is None
    # and the server reads it for the reader who may see it
    part = documents.document_part(svc, iri, opened, 1)
    assert part.quads


def test_without_started_workers_the_server_reads_parts_itself(tmp_path: Path) -> None:
    world = make_pages_world(tmp_path)
    try:
        svc = world.services
        assert not svc.pool.started
        eid = world.published.id
        graph = graphs.experiment_graph(PAGES_BASE, eid)
        iri = NamedNode(f"{PAGES_BASE}/experiment/{eid}")
        assert documents._read_elsewhere(svc, "experiment", iri, graph, 1, svc.visibility()) is None
        assert not svc.pool.started  # reading a page did not start them
        assert documents.document_part(svc, iri, svc.visibility(), 1).quads
    finally:
        world.services.close()

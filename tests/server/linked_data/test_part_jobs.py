"""Experiment and task documents written by a query worker from the public view are, byte for
byte, the documents the serving process writes itself; nothing private goes to a worker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from server.linked_data import documents
from server.linked_data.part_jobs import READERS
from server.linked_data.parts import with_view
from server.linked_data.serialisation import serialize_document
from server.web.representations import DOCUMENT_FORMATS, NQUADS, TURTLE
from store import graphs
from tests.plugins.experiment_pages import PAGES_BASE, PagesWorld, make_pages_world
from vocab.project import QAB

RDF_FORMS = [rep for rep in DOCUMENT_FORMATS if rep.rdf_format is not None]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PagesWorld]:
    world = make_pages_world(tmp_path_factory.mktemp("part-jobs"))
    world.services.pool.start()
    assert world.services.pool.wait_ready(60)
    yield world
    world.services.close()


def _resources(world: PagesWorld) -> list[tuple[str, NamedNode]]:
    svc = world.services
    eid = world.published.id
    graph = graphs.experiment_graph(PAGES_BASE, eid)
    experiment = NamedNode(f"{PAGES_BASE}/experiment/{eid}")
    tasks = [q.object for q in svc.store.quads(experiment, QAB.task, None, graph)]
    assert len(tasks) == 4
    return [("experiment", experiment), *(("task", t) for t in tasks if isinstance(t, NamedNode))]


def test_a_worker_writes_the_documents_the_server_writes(world: PagesWorld) -> None:
    svc = world.services
    vis = svc.visibility()
    graph = graphs.experiment_graph(PAGES_BASE, world.published.id)
    compared = 0
    for kind, iri in _resources(world):
        path = iri.value.removeprefix(PAGES_BASE)
        here = READERS[kind](svc, iri, graph, 1)
        assert here.quads
        for rep in RDF_FORMS:
            for as_graph in (True, False):
                made = documents.document_elsewhere(svc, iri, vis, 1, path, rep, as_graph)
                assert made is not None, (iri, rep.label)  # written by a worker
                body, where = made
                expected = serialize_document(
                    with_view(iri, here, PAGES_BASE, path), rep, as_graph=as_graph
                )
                assert body == expected, (iri, rep.label, as_graph)
                assert (where.page, where.pages, where.exact) == (1, here.pages, here.exact)
                compared += 1
    assert compared == 5 * len(RDF_FORMS) * 2


def test_the_document_route_sends_what_the_worker_wrote(world: PagesWorld) -> None:
    client = world.app.test_client()
    eid = world.published.id
    for suffix, rep in ((".ttl", TURTLE), (".nq", NQUADS)):
        response = client.get(f"/experiment/{eid}{suffix}")
        assert response.status_code == 200
        assert response.mimetype == rep.media_type
        assert f"/experiment/{eid}".encode() in response.data
    # a page past the end is still the serving process's 404
    assert client.get(f"/experiment/{eid}.ttl?page=9").status_code == 404


def test_private_experiments_and_opened_readers_are_written_by_the_server(
    world: PagesWorld,
) -> None:
    svc = world.services
    private = world.private.id
    graph = graphs.experiment_graph(PAGES_BASE, private)
    iri = NamedNode(f"{PAGES_BASE}/experiment/{private}")
    path = f"/experiment/{private}"
    # not in the public view: never sent to a worker, whoever asks
    assert graph.value not in svc.view().graphs
    assert documents.document_elsewhere(svc, iri, svc.visibility(), 1, path, TURTLE, True) is None
    opened = svc.visibility([world.private.token])
    assert opened.unlocked
    assert documents.document_elsewhere(svc, iri, opened, 1, path, TURTLE, True) is None
    # and the server reads it for the reader who may see it
    assert documents.document_part(svc, iri, opened, 1).quads


def test_without_started_workers_the_server_writes_documents_itself(tmp_path: Path) -> None:
    world = make_pages_world(tmp_path)
    try:
        svc = world.services
        assert not svc.pool.started
        eid = world.published.id
        iri = NamedNode(f"{PAGES_BASE}/experiment/{eid}")
        path = f"/experiment/{eid}"
        vis = svc.visibility()
        assert documents.document_elsewhere(svc, iri, vis, 1, path, TURTLE, True) is None
        assert not svc.pool.started  # asking did not start them
        response = world.app.test_client().get(f"{path}.ttl")
        assert response.status_code == 200 and response.data
    finally:
        world.services.close()


def test_a_worker_that_overruns_is_replaced_and_the_server_writes_the_page(
    world: PagesWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = world.services
    eid = world.published.id
    expected = world.app.test_client().get(f"/experiment/{eid}.nt?fresh=1").data
    # every job now overruns its time limit: the worker is killed and replaced
    monkeypatch.setattr(svc.pool, "_timeout", 1e-6)
    iri = NamedNode(f"{PAGES_BASE}/experiment/{eid}")
    path = f"/experiment/{eid}"
    assert documents.document_elsewhere(svc, iri, svc.visibility(), 1, path, TURTLE, True) is None
    response = world.app.test_client().get(f"/experiment/{eid}.nt?fresh=2")
    assert response.status_code == 200
    assert response.data == expected  # written here, the same document
    monkeypatch.undo()
    assert svc.pool.wait_ready(60)  # the killed workers were replaced
    made = documents.document_elsewhere(svc, iri, svc.visibility(), 1, path, TURTLE, True)
    assert made is not None

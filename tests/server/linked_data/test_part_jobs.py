"""Experiment and task documents, and experiment pages, written by a query worker from the
public view are, byte for byte, what the serving process writes itself; nothing private goes
to a worker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from server.linked_data import documents
from server.linked_data.part_jobs import PAGES, READERS, DocumentJob, Memo, write_document
from server.linked_data.parts import with_view
from server.linked_data.serialisation import serialize_document
from server.pages.experiments import Viewer, cached_task, experiment_html
from server.pages.tasks import Filters, PastTheEnd, TaskView, filters_of, task_html
from server.web.representations import DOCUMENT_FORMATS, HTML, NQUADS, TURTLE
from store import graphs
from store.triplestore import TripleStore
from tests.plugins.experiment_pages import PAGES_BASE, PagesWorld, make_pages_world
from vocab import iris
from vocab.project import QAB

RDF_FORMS = [rep for rep in DOCUMENT_FORMATS if rep.rdf_format is not None]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PagesWorld]:
    world = make_pages_world(tmp_path_factory.mktemp("part-jobs"))
    world.services.pool.start()
    assert world.services.pool.wait_ready(60)
    # The public view of the current generation: documents wait for it only briefly (and are
    # written here when it is late, as on a loaded machine), so the tests wait for it first.
    world.services.view(timeout=60)
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


def _context(path: str, args: tuple[tuple[str, str], ...] = ()) -> documents.PageContext:
    links = tuple((f"{path}.{r.extension}", r.media_type, r.label) for r in DOCUMENT_FORMATS)
    return documents.PageContext(links, args, PAGE_SIZE)


PAGE_SIZE = 3


def test_a_worker_writes_the_experiment_page_the_server_writes(world: PagesWorld) -> None:
    svc = world.services
    eid = world.published.id
    graph = graphs.experiment_graph(PAGES_BASE, eid)
    iri = NamedNode(f"{PAGES_BASE}/experiment/{eid}")
    path = f"/experiment/{eid}"
    context = _context(path)
    made = documents.document_elsewhere(svc, iri, svc.visibility(), 1, path, HTML, False, context)
    assert made is not None  # written by a worker
    expected = experiment_html(svc, iri, graph, Viewer(context.alternates)).encode()
    assert made[0] == expected
    assert f"Experiment {eid}".encode() in expected and b"<table" in expected
    assert f'href="{path}.ttl"'.encode() in expected
    # the route sends it: the same bytes, as HTML
    response = world.app.test_client().get(path, headers={"Accept": "text/html"})
    assert response.status_code == 200
    assert response.content_type == "text/html; charset=utf-8"
    assert response.data == expected


def test_a_worker_writes_the_task_pages_the_server_writes(world: PagesWorld) -> None:
    svc = world.services
    vis = svc.visibility()
    eid = world.published.id
    graph = graphs.experiment_graph(PAGES_BASE, eid)
    compared = 0
    for kind, iri in _resources(world):
        if kind != "task":
            continue
        path = iri.value.removeprefix(PAGES_BASE)
        ref = iris.parse(PAGES_BASE, iri.value)
        assert ref is not None and ref.number
        task = cached_task(svc, eid, ref.number)
        assert task is not None
        types = [r.experiment_type for r in task.results]
        asked: list[tuple[tuple[str, str], ...]] = [(), (("wrong", "1"),)]
        asked += [(("type", t), ("token", "not-sent")) for t in types[1:3]]
        for args in asked:
            for page in (1, 2):
                chosen = filters_of(args, types, page)
                assert isinstance(chosen, Filters)
                view = TaskView(path, PAGE_SIZE, _context(path).alternates, vis.can_see)
                try:
                    expected = task_html(svc, iri, graph, task, chosen, view).encode()
                except PastTheEnd:
                    expected = None
                context = _context(path, args)
                made = documents.document_elsewhere(svc, iri, vis, page, path, HTML, False, context)
                if expected is None:
                    assert made is None  # past the end: the server's 404
                    continue
                assert made is not None and made[0] == expected, (path, args, page)
                assert f"Task {ref.number} of experiment".encode() in expected
                compared += 1
    # every task at least on its first page with two filters, some with second pages
    assert compared >= 4 * 2 + 1, compared


def test_the_task_route_sends_what_the_worker_wrote_and_keeps_its_errors(
    world: PagesWorld,
) -> None:
    client = world.app.test_client()
    eid = world.published.id
    tasks = [iri for kind, iri in _resources(world) if kind == "task"]
    # a task with results (one without has no filter form)
    task = next(
        t for t in tasks if (s := cached_task(world.services, eid, int(t.value[-1]))) and s.results
    )
    path = task.value.removeprefix(PAGES_BASE)
    page = client.get(path, headers={"Accept": "text/html"})
    assert page.status_code == 200 and b"Questions" in page.data
    assert f'action="{path}"'.encode() in page.data  # the filter form points at the page
    assert client.get(f"{path}?type=NOPE", headers={"Accept": "text/html"}).status_code == 400
    assert client.get(f"{path}?page=999", headers={"Accept": "text/html"}).status_code == 404
    missing = f"/task/{world.published.id}/99"
    assert client.get(missing, headers={"Accept": "text/html"}).status_code == 404


def test_a_page_the_worker_cannot_render_is_left_to_the_server(world: PagesWorld) -> None:
    svc = world.services
    view = svc.view()
    eid = world.published.id
    where = (str(view.path), PAGES_BASE, "experiment", f"{PAGES_BASE}/experiment/{eid}")
    graph = graphs.experiment_graph(PAGES_BASE, eid).value
    store = TripleStore.open_read_only(view.path)
    html = HTML.media_type
    ok = write_document(store, DocumentJob(*where, graph, 1, "/x", html, False), Memo(1))
    assert ok.failure is None and ok.media_type == html
    task = f"{PAGES_BASE}/task/{eid}"
    scored = next(n for n in range(1, 5) if (t := cached_task(svc, eid, n)) and t.results)
    for iri, args, page in (
        (f"{task}/99", (), 1),  # no such task
        (f"{task}/{scored}", (("type", "NOPE"),), 1),  # no such experiment type
        (f"{task}/{scored}", (), 999),  # past the last page
    ):
        job = DocumentJob(*where[:2], "task", iri, graph, page, "/x", html, False, (), args, 3)
        assert write_document(store, job, Memo(1)).failure == "evaluation", (iri, args, page)
    broken = DocumentJob(*where, "not an IRI", 1, "/x", html, False)
    left = write_document(store, broken, Memo(1))
    assert left.failure == "evaluation" and "ValueError" in left.message
    assert set(PAGES) == {"experiment", "task"}


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
    for vis in (svc.visibility(), opened):
        made = documents.document_elsewhere(svc, iri, vis, 1, path, HTML, False, _context(path))
        assert made is None
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
        made = documents.document_elsewhere(svc, iri, vis, 1, path, HTML, False, _context(path))
        assert made is None
        assert not svc.pool.started  # asking did not start them
        response = world.app.test_client().get(f"{path}.ttl")
        assert response.status_code == 200 and response.data
        page = world.app.test_client().get(path, headers={"Accept": "text/html"})
        assert page.status_code == 200 and f"Experiment {eid}".encode() in page.data
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


def _hold(world: PagesWorld, job: object, client: str) -> tuple[object, object, float, object]:
    """Take a worker for ``client`` and send it ``job``, leaving its answer unread (busy)."""
    pool = world.services.pool
    ticket = pool.request(client, budgeted=False)
    worker, started = pool.claim(ticket)
    return worker, client, started, pool.begin(worker, job, client, started)  # type: ignore[arg-type]


def _release(world: PagesWorld, held: tuple[object, object, float, object]) -> None:
    """Read the held worker's answer and give the worker back."""
    pool = world.services.pool
    worker, client, started, reader = held
    while True:
        assert worker.readable(30)  # type: ignore[attr-defined]
        outcome = reader.feed(worker.conn.recv_bytes())  # type: ignore[attr-defined]
        if outcome is not None:
            pool.finish(worker, client, started, outcome)  # type: ignore[arg-type]
            return


@pytest.mark.parametrize(
    ("busy_with", "asked", "waits"),
    [("page", "html", True), ("query", "html", False), ("page", "turtle", False)],
)
def test_a_page_waits_for_a_worker_busy_with_pages_not_for_one_busy_with_queries(
    world: PagesWorld, monkeypatch: pytest.MonkeyPatch, busy_with: str, asked: str, waits: bool
) -> None:
    import threading

    from server.sparql.jobs import QueryJob

    svc = world.services
    assert svc.pool.wait_ready(60)
    eid = world.published.id
    iri = NamedNode(f"{PAGES_BASE}/experiment/{eid}")
    graph = graphs.experiment_graph(PAGES_BASE, eid)
    path = f"/experiment/{eid}"
    view = str(svc.view().path)
    page = DocumentJob(
        view, PAGES_BASE, "experiment", iri.value, graph.value, 1, path, TURTLE.media_type, True
    )
    query = QueryJob(
        "ASK { ?s ?p ?o }",
        PAGES_BASE,
        view,
        None,
        None,
        "application/sparql-results+json",
        None,
        10,
        "",
        form="ASK",
    )
    # A wait far longer than the test: a call that waits when it should not is still waiting
    # when the watchdog's join below gives up (no clock decides).
    monkeypatch.setattr(documents, "PART_WORKER_WAIT_SECONDS", 600.0)
    # every worker busy: the first with a page or a query, any others with queries
    first = _hold(world, page if busy_with == "page" else query, "holder-0")
    others = [_hold(world, query, f"holder-{n}") for n in range(1, svc.config.server.workers)]
    assert svc.pool.documents_running == (busy_with == "page")
    found: dict[str, object] = {}

    def _ask() -> None:
        if asked == "html":
            found["made"] = documents.document_elsewhere(
                svc, iri, svc.visibility(), 1, path, HTML, False, _context(path)
            )
        else:
            found["made"] = documents.document_elsewhere(
                svc, iri, svc.visibility(), 1, path, TURTLE, True
            )

    asking = threading.Thread(target=_ask)
    asking.start()
    if waits:
        # it waits for the worker busy with a page (still waiting while that one is held),
        # then that worker writes this page too
        asking.join(0.3)
        assert asking.is_alive()
        _release(world, first)
        asking.join(120)
        assert not asking.is_alive() and found["made"] is not None
    else:
        # every worker held by a query (for seconds, possibly), or an RDF document: written
        # here at once, without waiting for a worker
        asking.join(120)
        assert not asking.is_alive() and found["made"] is None
        _release(world, first)
    for held in others:
        _release(world, held)
    assert not svc.pool.documents_running

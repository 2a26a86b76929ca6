"""Documents sized for their readers: an experiment's document holds aggregate results only, a
task's its per-question results a page at a time, graphs come in pages; every page links the
rest (``hydra:view`` and ``Link``), and the pages together hold every quad exactly once."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest
from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad, RdfFormat, parse

from server.linked_data import parts
from store import graphs
from tests.plugins.experiment_pages import PAGES_BASE, PagesWorld
from vocab.standard import HYDRA

NQ = {"Accept": "application/n-quads"}


def _pages(client: Any, path: str) -> list[tuple[Any, set[Any]]]:
    """Follow ``rel="next"`` from ``path`` (as N-Quads keeping graphs: ``.nq``)."""
    found = []
    url: str | None = path
    while url is not None:
        response = client.get(url)
        assert response.status_code == 200, (url, response.data[:300])
        # the page's place (hydra:view) is in the default graph, the data in its own graphs
        quads = {
            q
            for q in parse(response.data, RdfFormat.N_QUADS)
            if not isinstance(q.graph_name, DefaultGraph)
        }
        found.append((response, quads))
        nexts = re.findall(r'<([^>]+)>; rel="next"', response.headers.get("Link", ""))
        url = nexts[0] if nexts else None
        assert len(found) < 50
    return found


def test_experiment_document_holds_aggregates_and_task_documents_the_questions(
    fresh_world: PagesWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parts, "DOCUMENT_TASK_QUADS", 1200)
    client = fresh_world.app.test_client()
    eid = fresh_world.published.id
    graph = graphs.experiment_graph(PAGES_BASE, eid)
    stored = {q for q in fresh_world.services.store.quads(graph=graph)}
    experiment = _pages(client, f"/experiment/{eid}.nq")
    assert len(experiment) == 1  # four tasks: one page
    aggregate = experiment[0][1]
    assert aggregate <= stored
    assert not any("/question/" in q.subject.value for q in aggregate)
    assert any(f"/task/{eid}/2/obs/QA/" in q.subject.value for q in aggregate)
    collected = set(aggregate)
    for task in fresh_world.runner.summary(eid).tasks:
        pages = _pages(client, f"/task/{eid}/{task.plan.number}.nq")
        if task.results:
            assert len(pages) >= 2  # eight questions, cut by quads
            # a page never holds more than its quads, whatever one question holds
            assert all(len(quads) <= 1200 for _response, quads in pages), [len(q) for _, q in pages]
            first = pages[0][0]
            assert 'rel="next"' in first.headers["Link"] and 'rel="last"' in first.headers["Link"]
            turtle = client.get(f"/task/{eid}/{task.plan.number}.ttl?page=2").data
            views = [
                t
                for t in parse(turtle, RdfFormat.TURTLE)
                if t.predicate in (HYDRA.next, HYDRA.previous)
            ]
            assert len(views) == 2
        for _response, quads in pages:
            assert quads <= stored
            collected |= quads
    # Every quad of the graph is in the experiment's or a task's documents.
    per_question = {q for q in stored if "/question/" in q.subject.value}
    assert per_question and per_question <= collected
    missing = {q for q in stored - collected if "/run/" not in q.subject.value}
    assert not missing, sorted(str(q) for q in missing)[:5]


def test_a_page_past_the_end_is_404(fresh_world: PagesWorld) -> None:
    client = fresh_world.app.test_client()
    eid = fresh_world.published.id
    assert client.get(f"/task/{eid}/2.nq?page=1").status_code == 200
    assert client.get(f"/task/{eid}/2.nq?page=99").status_code == 404


def test_graph_documents_come_in_pages_that_hold_every_quad_once(
    fresh_world: PagesWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parts, "DOCUMENT_GRAPH_QUADS", 500)
    client = fresh_world.app.test_client()
    eid = fresh_world.published.id
    graph = graphs.experiment_graph(PAGES_BASE, eid)
    stored = list(fresh_world.services.store.quads(graph=graph))
    assert len(stored) > 1500
    pages = _pages(client, f"/graph/experiment/{eid}.nq")
    assert len(pages) == -(-len(stored) // 500)
    sizes = [len(q) for _, q in pages]
    assert all(n == 500 for n in sizes[:-1]) and sum(sizes) == len(stored)
    assert set().union(*(q for _, q in pages)) == set(stored)
    version = client.get("/dataset/qabench-example/v1.nq")
    assert version.status_code == 200 and "next" not in version.headers.get("Link", "")
    assert NamedNode(f"{PAGES_BASE}/dataset/qabench-example/v1") in {
        q.subject for q in parse(version.data, RdfFormat.N_QUADS)
    }


def test_a_question_larger_than_a_page_continues_on_the_next(
    fresh_world: PagesWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 41: a page held 100 questions whatever their size, so one system answering
    # thousands of IRIs per question made every RDF form of its task a 500.
    monkeypatch.setattr(parts, "DOCUMENT_TASK_QUADS", 400)  # less than one question holds
    client = fresh_world.app.test_client()
    eid = fresh_world.published.id
    graph = graphs.experiment_graph(PAGES_BASE, eid)
    stored = {q for q in fresh_world.services.store.quads(graph=graph)}
    task = next(t for t in fresh_world.runner.summary(eid).tasks if t.results)
    pages = _pages(client, f"/task/{eid}/{task.plan.number}.nq")
    later = [len(quads) for _response, quads in pages[1:]]
    assert len(later) > 8 and all(0 < n <= 400 for n in later), later
    collected = set().union(*(quads for _response, quads in pages))
    assert collected <= stored
    total = sum(len(quads) for _response, quads in pages)
    assert total == len(collected)  # each quad on one page only
    per_question = {
        q for q in stored if f"/task/{eid}/{task.plan.number}/question/" in q.subject.value
    }
    assert per_question and per_question <= collected
    held = Counter(q.subject.value.split("/question/")[1].split("/")[0] for q in per_question)
    assert max(held.values()) > 400, held  # so a question did continue on the next page


def test_later_pages_name_themselves_in_content_location_and_alternates(
    fresh_world: PagesWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 41: pages >= 2 named page 1 in Content-Location and their alternate links.
    monkeypatch.setattr(parts, "DOCUMENT_TASK_QUADS", 1200)
    client = fresh_world.app.test_client()
    eid = fresh_world.published.id
    task = next(t for t in fresh_world.runner.summary(eid).tasks if t.results)
    path = f"/task/{eid}/{task.plan.number}"
    second = client.get(f"{path}?page=2", headers={"Accept": "text/turtle"})
    assert second.status_code == 200
    assert second.headers["Content-Location"] == f"{path}.ttl?page=2"
    alternates = re.findall(r'<([^>]+)>; rel="alternate"', second.headers["Link"])
    assert alternates and all(url.endswith("?page=2") for url in alternates), alternates
    first = client.get(path, headers={"Accept": "text/turtle"})
    assert first.headers["Content-Location"] == f"{path}.ttl"


class _Counted:
    """A store whose quad reads are counted (what a page costs), over a real store."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.read = 0

    def quads(self, *pattern: Any, **named: Any) -> Any:
        for quad in self._store.quads(*pattern, **named):
            self.read += 1
            yield quad

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class _Source:
    def __init__(self, store: Any) -> None:
        self.store = _Counted(store)
        self.base = "http://qabench.test"
        self._memo: dict[str, Any] = {}

    def remember(self, key: str, make: Any) -> Any:
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def remember_graph(self, graph: NamedNode, key: str, make: Any, wait: Any = None) -> Any:
        return self.remember(f"{key} {graph.value}", make)


def test_a_graph_page_reads_its_own_quads_only(
    store_with: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 41: /graph/…?page=N re-read the graph from its start (page 53: 22.8 s, page 1: 0.5 s).
    monkeypatch.setattr(parts, "DOCUMENT_GRAPH_QUADS", 100)
    graph = NamedNode("http://qabench.test/graph/kb/big")
    quads = [
        Quad(
            NamedNode(f"http://e.test/s{n // 7}"),
            NamedNode(f"http://e.test/p{n % 7}"),
            Literal(str(n)),
            graph,
        )
        for n in range(2_000)
    ]
    source = _Source(store_with(quads))
    seen: list[Quad] = []
    for page in range(1, 21):
        source.store.read = 0
        part = parts.graph_part(source, graph, page)
        assert part.pages == 20 and len(part.quads) == 100
        assert source.store.read <= 100 + 7, (page, source.store.read)  # its page, not the rest
        seen += part.quads
    assert len(seen) == len(set(seen)) == 2_000
    assert parts.graph_part(source, graph, 21).quads == []


def test_a_refusal_is_remembered_and_points_to_the_graph(
    fresh_world: PagesWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 41: each refusal of a too-large document was recomputed (10-20 s each) and named
    # no way to the data but /sparql and /dump.nq.
    from server.linked_data import documents

    monkeypatch.setattr(documents, "MAX_DOCUMENT_QUADS", 10)
    calls: list[str] = []
    real = documents.READERS["task"]

    def counted(svc: Any, iri: Any, graph: Any, page: int) -> Any:
        calls.append(iri.value)
        return real(svc, iri, graph, page)

    monkeypatch.setitem(documents.READERS, "task", counted)
    client = fresh_world.app.test_client()
    eid = fresh_world.published.id
    task = next(t for t in fresh_world.runner.summary(eid).tasks if t.results)
    answers = [
        client.get(f"/task/{eid}/{task.plan.number}.ttl", headers={"Accept": "application/json"})
        for _ in range(3)
    ]
    assert {a.status_code for a in answers} == {500}
    assert len(calls) == 1  # computed once, then remembered
    problem = answers[-1].get_json()
    assert f"/graph/experiment/{eid}" in problem["detail"]
    assert problem["graph"] == f"/graph/experiment/{eid}"


def test_a_graph_layout_outlives_writes_to_other_graphs(fresh_world: PagesWorld) -> None:
    # A layout costs a pass over the graph (38 s at 2.6 M quads on a busy host): it is kept
    # until a write touches that graph, not only for a store generation.
    from pyoxigraph import Literal as Lit

    svc = fresh_world.services
    eid = fresh_world.published.id
    graph = graphs.experiment_graph(PAGES_BASE, eid)
    made: list[int] = []

    def layout() -> int:
        made.append(1)
        return len(made)

    assert svc.remember_graph(graph, "probe", layout) == 1
    other = NamedNode(f"{PAGES_BASE}/graph/kb/other")
    svc.store.add(
        [Quad(NamedNode("http://e.test/s"), NamedNode("http://e.test/p"), Lit("o"), other)]
    )
    svc.notify_write()
    assert svc.remember_graph(graph, "probe", layout) == 1  # another graph changed: kept
    svc.store.add(
        [Quad(NamedNode("http://e.test/s"), NamedNode("http://e.test/p"), Lit("o"), graph)]
    )
    svc.notify_write()
    assert svc.remember_graph(graph, "probe", layout) == 2  # this one changed: made again

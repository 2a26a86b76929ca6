"""Graph page layouts are kept beside the store once made (by the server, in the background):
a reader of a page after a restart pays no pass over the graph (issue 41: 37.7 s at 2.6 M
quads), and a page reads its own subjects only, whatever its number. A bulk write makes none
(in ``kb load`` it cost 6.4 s of 20 s at 2.6 M quads)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import Literal, NamedNode, Quad, RdfFormat

from server.linked_data import parts
from store import layouts
from store.errors import StoreError
from store.triplestore import TripleStore, layouts_path

GRAPH = NamedNode("http://qabench.test/graph/kb/big")
OTHER = NamedNode("http://qabench.test/graph/kb/other")


def _ntriples(path: Path, subjects: int, per_subject: int = 7) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for n in range(subjects * per_subject):
            fh.write(f'<http://e.test/s{n // per_subject}> <http://e.test/p{n % 7}> "{n}" .\n')
    return path


class _Watched:
    """A store whose queries and quad reads are counted, over a real store."""

    def __init__(self, store: TripleStore) -> None:
        self._store = store
        self.queries: list[str] = []
        self.read = 0

    def query(self, sparql: str, **named: Any) -> Any:
        self.queries.append(sparql)
        return self._store.query(sparql, **named)

    def quads(self, *pattern: Any, **named: Any) -> Any:
        for quad in self._store.quads(*pattern, **named):
            self.read += 1
            yield quad

    def layout(self, graph: NamedNode, page_quads: int = layouts.PAGE_QUADS) -> Any:
        shelf = self._store.layouts
        found = shelf.read(graph, page_quads) if shelf is not None else None
        if found is not None:
            return found
        # made now: through this wrapper, so the counting query is seen
        return layouts.in_memory(layouts.count_subjects(self, graph), page_quads)


class _Source:
    def __init__(self, store: Any) -> None:
        self.store = store
        self.base = "http://qabench.test"

    def remember(self, key: str, make: Any) -> Any:
        return make()

    def remember_graph(self, graph: NamedNode, key: str, make: Any, wait: Any = None) -> Any:
        return make()


def test_a_layout_once_made_is_read_back_after_a_restart_and_a_bulk_load_makes_none(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store"
    store = TripleStore.open(path)
    # 105,000 quads: pages of 50,000, 50,000 and 5,000 (a subject cut between the first two)
    store.bulk_load(_ntriples(tmp_path / "kb.nt", 15_000), RdfFormat.N_TRIPLES, graph=GRAPH)
    assert not list(layouts_path(path).glob("*.layout"))  # the load costs the engine's work
    assert store.layout(GRAPH, parts.DOCUMENT_GRAPH_QUADS).quads == 105_000  # the server's
    store.close()
    assert len(list(layouts_path(path).glob("*.layout"))) == 1

    reopened = TripleStore.open(path)  # another process: the server, after a start
    try:
        watched = _Watched(reopened)
        source = _Source(watched)
        seen: list[Quad] = []
        for page, size in ((3, 5_000), (1, 50_000), (2, 50_000)):
            watched.read = 0
            part = parts.graph_part(source, GRAPH, page)
            assert part.pages == 3 and len(part.quads) == size, page
            assert watched.read <= size + 7, (page, watched.read)  # its page, not the rest
            seen += part.quads
        assert watched.queries == []  # no pass over the graph: the layout was read back
        assert len(seen) == len(set(seen)) == 105_000
        assert parts.graph_part(source, GRAPH, 4).quads == []
    finally:
        reopened.close()


def test_a_layout_is_made_again_once_a_write_touches_its_graph(tmp_path: Path) -> None:
    store = TripleStore.open(tmp_path / "store")
    try:
        store.bulk_load(_ntriples(tmp_path / "kb.nt", 40), RdfFormat.N_TRIPLES, graph=GRAPH)
        made = store.layout(GRAPH, 100)
        assert made.quads == 280 and made.pages == 3 and made.path is not None
        assert store.layout(GRAPH, 100).mark == made.mark  # read back, not made again
        extra = Quad(
            NamedNode("http://e.test/x"), NamedNode("http://e.test/p"), Literal("x"), OTHER
        )
        store.add([extra])
        assert store.layout(GRAPH, 100).mark == made.mark  # another graph: still current
        store.add([Quad(extra.subject, extra.predicate, extra.object, GRAPH)])
        again = store.layout(GRAPH, 100)
        assert again.mark > made.mark and again.quads == 281
        # a page of the old layout read after the new one was written says so
        with pytest.raises(StoreError):
            made.page(1)
        store.update(f"INSERT DATA {{ GRAPH {GRAPH} {{ <http://e.test/y> <http://e.test/p> 1 }} }}")
        assert store.layout(GRAPH, 100).quads == 282  # an update may touch any graph
        store.drop_graphs([GRAPH])
        assert not list(layouts_path(tmp_path / "store").glob("*.layout"))
        assert store.layout(GRAPH, 100).quads == 0
    finally:
        store.close()


def test_a_layout_that_cannot_be_kept_is_used_from_memory(tmp_path: Path) -> None:
    store = TripleStore.open(tmp_path / "store")
    try:
        layouts_path(tmp_path / "store").write_text("not a directory")  # as a full disk would
        store.bulk_load(_ntriples(tmp_path / "kb.nt", 30), RdfFormat.N_TRIPLES, graph=GRAPH)
        made = store.layout(GRAPH, 100)
        assert made.path is None and made.quads == 210 and made.pages == 3
        got = [
            q
            for page in (1, 2, 3)
            for s, a, b in made.page(page)
            for q in list(store.quads(s, None, None, GRAPH))[a:b]
        ]
        assert len(set(got)) == 210
    finally:
        store.close()


def test_a_subject_whose_iri_holds_a_line_separator_keeps_its_line(tmp_path: Path) -> None:
    # U+2028 may stand in an IRI; str.splitlines() would have cut the layout's line there.
    store = TripleStore.open(tmp_path / "store")
    try:
        odd = NamedNode("http://e.test/a\u2028b")
        p = NamedNode("http://e.test/p")
        quads = [Quad(odd, p, Literal(str(n)), GRAPH) for n in range(3)]
        quads += [Quad(NamedNode(f"http://e.test/s{n}"), p, Literal("x"), GRAPH) for n in range(3)]
        store.add(quads)
        made = store.layout(GRAPH, 2)
        assert made.path is not None and made.pages == 3
        read = [
            q
            for page in range(1, 4)
            for s, a, b in made.page(page)
            for q in list(store.quads(s, None, None, GRAPH))[a:b]
        ]
        assert sorted(map(str, read)) == sorted(map(str, quads))
    finally:
        store.close()

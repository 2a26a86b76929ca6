"""A large N-Triples file is bulk loaded in pieces at once, one loader per core (issue 41:
``kb load`` within 1.5 times ``oxigraph load``; one loader keeps about one core busy), and the
graph is the file's graph: pieces end at line ends, a file with blank nodes is loaded whole
(each parse names its blank nodes anew), a syntax error names its line in the file."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pyoxigraph import BlankNode, Dataset, NamedNode, RdfFormat

from store import formats
from store.errors import RdfSyntaxError
from store.formats import line_parts
from store.triplestore import TripleStore

GRAPH = NamedNode("http://qabench.test/graph/kb/pieces")


def _lines(count: int) -> list[str]:
    # statements of every shape a line can take: escaped line breaks and a '#' inside a
    # literal, a language tag, a datatype, a comment line, a blank line, CR LF endings
    out = []
    for n in range(count):
        s = f"<http://e.test/s{n // 5}>"
        shape = n % 5
        if shape == 0:
            out.append(f'{s} <http://e.test/text> "line one\\nline two # not a comment {n}" .\n')
        elif shape == 1:
            out.append(f'{s} <http://e.test/label> "Ding {n}"@de .\r\n')
        elif shape == 2:
            out.append(f'{s} <http://e.test/n> "{n}"^^<http://www.w3.org/2001/XMLSchema#int> .\n')
        elif shape == 3:
            out.append(f"# a comment line {n}\n\n{s} <http://e.test/o> <http://e.test/o{n}> .\n")
        else:
            out.append(f'{s} <http://e.test/é> "\\u00e9 {n}" . # trailing comment\n')
    return out


def _dataset(store: TripleStore) -> Dataset:
    return Dataset(store.quads(None, None, None, GRAPH))


def _whole(path: Path) -> Dataset:
    # what one loader makes of the whole file (the engine reads "1"^^xsd:int as an xsd:integer)
    store = TripleStore.in_memory()
    store.raw.bulk_load(path=path, format=RdfFormat.N_TRIPLES, to_graph=GRAPH)
    return _dataset(store)


def _store(tmp_path: Path, parts: int = 3) -> TripleStore:
    store = TripleStore.open(tmp_path / "store")
    store.bulk_parts, store.bulk_part_bytes = parts, 1000
    return store


def test_a_file_without_blank_nodes_loads_in_pieces_at_once_into_the_files_graph(
    tmp_path: Path,
) -> None:
    path = tmp_path / "kb.nt"
    path.write_text("".join(_lines(3000)), encoding="utf-8")
    cuts = line_parts(path, 3, 1000)
    data = path.read_bytes()
    assert len(cuts) == 3 and cuts[0][0] == 0 and cuts[-1][1] == len(data)
    assert all(data[end - 1 : end] == b"\n" for _start, end in cuts)
    store = _store(tmp_path)
    readers: set[str] = set()
    read: list[int] = []

    def _progress(size: int) -> None:
        readers.add(threading.current_thread().name)
        read.append(size)

    store.bulk_load(path, RdfFormat.N_TRIPLES, graph=GRAPH, progress=_progress)
    # three loaders read the file, each its own piece, and every byte once
    assert readers == {"bulk-load-0", "bulk-load-1", "bulk-load-2"}
    assert sum(read) == len(data)
    assert _dataset(store) == _whole(path) and len(_dataset(store)) == 3000
    assert store.layout(GRAPH).quads == 3000
    store.close()


def test_a_file_with_a_blank_node_is_loaded_in_one_piece_and_the_node_stays_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "kb.nt"
    lines = _lines(3000)
    lines[10] = '_:shared <http://e.test/p> "first" .\n'
    lines[2990] = '_:shared <http://e.test/p> "last" .\n'
    path.write_text("".join(lines), encoding="utf-8")
    assert line_parts(path, 3, 1000) == [(0, path.stat().st_size)]
    store = _store(tmp_path)
    readers: set[str] = set()
    store.bulk_load(
        path,
        RdfFormat.N_TRIPLES,
        graph=GRAPH,
        progress=lambda _size: readers.add(threading.current_thread().name),
    )
    blanks = {q.subject for q in store.quads(None, None, None, GRAPH)}
    blanks = {subject for subject in blanks if isinstance(subject, BlankNode)}
    assert len(blanks) == 1  # "first" and "last" describe one node
    assert readers == {"MainThread"} and len(_dataset(store)) == 3000
    store.close()


def test_a_syntax_error_in_a_later_piece_names_its_line_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "kb.nt"
    lines = [
        f"<http://e.test/s{n}> <http://e.test/p> <http://e.test/o{n}> .\n" for n in range(3000)
    ]
    lines[2499] = "<http://e.test/broken> <http://e.test/p> .\n"  # no object: line 2500
    path.write_text("".join(lines), encoding="utf-8")
    assert len(line_parts(path, 3, 1000)) == 3
    store = _store(tmp_path)
    with pytest.raises(RdfSyntaxError) as caught:
        store.bulk_load(path, RdfFormat.N_TRIPLES, graph=GRAPH)
    assert caught.value.line == 2500, str(caught.value)
    assert "line 2500" in str(caught.value)
    store.close()


def test_a_file_of_more_pieces_than_loaders_is_loaded_whole_each_loader_taking_its_turn(
    tmp_path: Path,
) -> None:
    path = tmp_path / "kb.nt"
    path.write_text("".join(_lines(3000)), encoding="utf-8")
    store = _store(tmp_path, parts=2)
    store.bulk_piece_bytes = path.stat().st_size // 6  # seven pieces for two loaders
    assert len(line_parts(path, 2, 1000, store.bulk_piece_bytes)) == 7
    sizes: dict[str, int] = {}

    def _progress(size: int) -> None:
        name = threading.current_thread().name
        sizes[name] = sizes.get(name, 0) + size

    store.bulk_load(path, RdfFormat.N_TRIPLES, graph=GRAPH, progress=_progress)
    assert set(sizes) == {"bulk-load-0", "bulk-load-1"}
    assert sum(sizes.values()) == path.stat().st_size
    assert _dataset(store) == _whole(path)
    store.close()


@pytest.mark.parametrize("chunk", [1, 2, 7, 1 << 20])
def test_the_scan_for_blank_nodes_finds_one_anywhere_across_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    # The scan decides whether a file may be cut (compared as numpy arrays since issue 41's
    # last round: bytes.find took 0.64 s of kb load at 2.6 M triples): a needle at any offset,
    # across any seam between two chunks read, keeps the file whole.
    monkeypatch.setattr(formats, "_CHUNK", chunk)
    path = tmp_path / "scan.nt"
    clean = b'<http://e.test/s> <http://e.test/p> "o_ : <" .\n' * 3
    path.write_bytes(clean)
    assert not formats._holds(path, formats._ONE_DOCUMENT_ONLY)  # near misses only
    cases = 0
    for needle in formats._ONE_DOCUMENT_ONLY:
        for at in range(len(clean) + 1):
            path.write_bytes(clean[:at] + needle + clean[at:])
            assert formats._holds(path, formats._ONE_DOCUMENT_ONLY), (needle, at)
            cases += 1
    assert cases == 2 * (len(clean) + 1)

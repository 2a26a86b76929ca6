"""Graph page layouts: which subjects each page of a graph's document holds, kept on disk.

A graph's document comes ``PAGE_QUADS`` quads a page (``server.linked_data.parts``), and a page
is read subject by subject through the store's index, so its cost grows with the page, not with
its number (skipping to page N read the N - 1 pages before it: page 53 of a 2.6 M-quad graph
took 22.8 s, page 1 0.5 s; issue 41). Which subjects a page holds, and how many of their quads,
is the graph's layout: the engine counts each subject's quads (one aggregate over the graph),
and pages are cut from those counts (a subject larger than what is left of a page continues
on the next).

A ``TripleStore`` with a directory keeps the layout it makes of a graph on disk beside the store
(``<store>.layouts/``, owner-only: it names the subjects of private graphs), stamped with the
change-journal entry it was made at. A layout whose graph a later write may have touched is
stale and made again when it is next asked for; a dropped graph's is removed. Writes never
make layouts: the server makes them in the background, one at a time, a knowledge base's
graph right after a start (``server.memory.GraphValues``; made in ``kb load`` it cost 6.4 s
of a 20 s load at 2.6 M quads: the load was 1.8 times ``oxigraph load``). A page reads only
its own lines of the file, so neither its time nor its memory grows with the graph. Stores
without a directory (in memory, remote, read-only copies) lay out in memory.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pyoxigraph import BlankNode, NamedNode, QueryResultsFormat, QuerySolutions

from store.changes import ChangeJournal
from store.errors import StoreError
from store.permissions import private_directory, private_file

log = logging.getLogger(__name__)

Subject = NamedNode | BlankNode
# Quads of one page of a graph's document.
PAGE_QUADS = 50_000
_FORMAT = "qabench-layout 1"


class _Queryable(Protocol):
    def query(self, sparql: str) -> object: ...


@dataclass(frozen=True, slots=True)
class GraphLayout:
    """Where each page of a graph starts: ``starts[n - 1]`` is page n's first row and how many
    quads of that row's subject earlier pages hold; ``end`` is the position after the last
    row. Rows are (subject, quad count) in ``rows`` (positions: indexes), or lines of the file
    ``path`` (positions: byte offsets after its header line, made at journal entry ``mark``)."""

    quads: int
    starts: tuple[tuple[int, int], ...]
    end: int
    rows: tuple[tuple[Subject, int], ...] | None = None
    path: Path | None = None
    mark: int = 0
    # which making of the file this is (a file made again has other offsets, even at one mark:
    # the engine's subject order is not fixed)
    made: str = ""

    @property
    def pages(self) -> int:
        """Return the number of pages (an empty graph has one, empty)."""
        return len(self.starts)

    def page(self, number: int) -> list[tuple[Subject, int, int]]:
        """Return what page ``number`` holds: (subject, first, end) ranges of each subject's
        quads in index order (empty past the last page).

        Raises:
            StoreError: if the layout's file is gone or was made again since this was read.
        """
        if not 1 <= number <= self.pages:
            return []
        first, skip = self.starts[number - 1]
        last, keep = self.starts[number] if number < self.pages else (self.end, 0)
        rows = self._rows(first, last, keep > 0)
        out: list[tuple[Subject, int, int]] = []
        for index, (subject, count) in enumerate(rows):
            begin = skip if index == 0 else 0
            end = keep if keep and index == len(rows) - 1 else count
            if end > begin:
                out.append((subject, begin, end))
        return out

    def _rows(self, first: int, last: int, partial: bool) -> Sequence[tuple[Subject, int]]:
        """Return the rows from position ``first`` up to ``last`` (and the one at ``last`` when
        ``partial``: a subject the next page continues)."""
        if self.rows is not None:
            return self.rows[first : last + (1 if partial else 0)]
        assert self.path is not None
        try:
            with self.path.open("rb") as fh:
                header = _header(fh.readline())
                if header.get("made") != self.made:
                    raise StoreError(f"The page layout {self.path.name} was made again")
                body = fh.tell()
                fh.seek(body + first)
                data = fh.read(last - first)
                if partial:
                    data += fh.readline()
        except OSError as exc:
            raise StoreError(f"Cannot read the page layout {self.path.name}: {exc}") from exc
        # split on newlines only: an IRI may hold U+2028, which str.splitlines() splits on
        return [_row(line.decode("utf-8")) for line in data.split(b"\n") if line]


def _starts(counts: Iterable[int], page_quads: int) -> list[tuple[int, int]]:
    """Return where each page starts: (row index, quads of that row on earlier pages).

    >>> _starts([3, 3, 3], 4)
    [(0, 0), (1, 1), (2, 2)]
    >>> _starts([10], 4), _starts([2, 2], 4), _starts([], 4)
    ([(0, 0), (0, 4), (0, 8)], [(0, 0)], [(0, 0)])
    """
    starts, used = [(0, 0)], 0
    for index, size in enumerate(counts):
        offset = 0
        while size - offset > page_quads - used:
            offset += page_quads - used
            starts.append((index, offset))
            used = 0
        used += size - offset
    return starts


def count_subjects(store: _Queryable, graph: NamedNode) -> list[tuple[bytes, int]]:
    """Return each subject of ``graph`` (as N-Triples writes it) with its number of quads,
    counted by the engine. The rows come as the engine writes them in TSV: no term objects
    are made (at 1 M quads that was a quarter of the layout's cost)."""
    # The graph is written through its term object (never pasted text): str() gives <iri>.
    result = store.query(
        f"SELECT ?s (COUNT(*) AS ?n) WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }} GROUP BY ?s"
    )
    if not isinstance(result, QuerySolutions):
        raise StoreError("Counting a graph's subjects gave no solutions")
    data = result.serialize(format=QueryResultsFormat.TSV) or b""
    rows: list[tuple[bytes, int]] = []
    for line in data.split(b"\n")[1:]:
        subject, _, count = line.partition(b"\t")
        if count and subject[:1] in (b"<", b"_"):  # an IRI or a blank node
            rows.append((subject, int(count)))
    return rows


def in_memory(rows: Sequence[tuple[bytes, int]], page_quads: int = PAGE_QUADS) -> GraphLayout:
    """Return the layout of a graph whose subjects (N-Triples) and counts are ``rows``."""
    counts = [count for _subject, count in rows]
    starts = tuple(_starts(counts, page_quads))
    terms = tuple((_term(subject.decode("utf-8")), count) for subject, count in rows)
    return GraphLayout(sum(counts), starts, len(rows), rows=terms)


def _term(text: str) -> Subject:
    return BlankNode(text[2:]) if text.startswith("_:") else NamedNode(text[1:-1])


def _row(line: str) -> tuple[Subject, int]:
    count, _, text = line.partition(" ")
    return _term(text), int(count)


def _header(line: bytes) -> dict[str, object]:
    try:
        header = json.loads(line)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != _FORMAT:
        raise StoreError("Not a qabench page layout")
    return header


class LayoutShelf:
    """The page layouts of one store directory's graphs, on disk (``<store>.layouts/``), each
    valid while the change journal names no write to its graph since it was made."""

    def __init__(self, directory: Path, journal: ChangeJournal) -> None:
        self.directory = directory
        self._journal = journal

    def _file(self, graph: NamedNode) -> Path:
        return self.directory / (hashlib.sha256(graph.value.encode()).hexdigest()[:32] + ".layout")

    def mark(self) -> int:
        """Return the journal entry a layout made from now on is current at."""
        return self._journal.last

    def read(self, graph: NamedNode, page_quads: int) -> GraphLayout | None:
        """Return the stored layout of ``graph`` for pages of ``page_quads`` quads, or None
        (none stored, another page size, or a write may have touched the graph since)."""
        path = self._file(graph)
        try:
            with path.open("rb") as fh:
                header = _header(fh.readline())
        except (OSError, StoreError):
            return None
        mark = header.get("mark")
        if (
            header.get("graph") != graph.value
            or header.get("page_quads") != page_quads
            or not isinstance(mark, int)
        ):
            return None
        span = self._journal.since(mark, str(header.get("epoch")))
        if span is None or span.everything or graph.value in span.graphs:
            self.forget([graph])
            return None
        starts = header.get("starts")
        quads, end = header.get("quads"), header.get("end")
        if not isinstance(starts, list) or not isinstance(quads, int) or not isinstance(end, int):
            return None
        made = str(header.get("made"))
        return GraphLayout(
            quads, tuple((a, b) for a, b in starts), end, path=path, mark=mark, made=made
        )

    def save(
        self, graph: NamedNode, rows: Sequence[tuple[bytes, int]], page_quads: int, mark: int
    ) -> GraphLayout:
        """Write the layout of ``graph`` (made from ``rows`` at journal entry ``mark``) and
        return it; on a write error (a full disk) the layout is returned in memory."""
        counts = [count for _subject, count in rows]
        index_starts = _starts(counts, page_quads)
        lines = [b"%d %s\n" % (count, subject) for subject, count in rows]
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line))
        starts = [(offsets[index], skip) for index, skip in index_starts]
        header = {
            "format": _FORMAT,
            "graph": graph.value,
            "epoch": self._journal.epoch,
            "mark": mark,
            "made": (made := secrets.token_hex(8)),
            "page_quads": page_quads,
            "quads": sum(counts),
            "starts": starts,
            "end": offsets[-1],
        }
        path = self._file(graph)
        # two readers may lay the same graph out at once: each writes a file of its own
        partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")
        try:
            private_directory(self.directory)
            with partial.open("wb") as fh:
                private_file(partial)
                fh.write(json.dumps(header).encode() + b"\n")
                fh.writelines(lines)
            os.replace(partial, path)
        except OSError as exc:
            log.warning("the page layout of %s could not be kept: %s", graph.value, exc)
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)
            return in_memory(rows, page_quads)
        return GraphLayout(sum(counts), tuple(starts), offsets[-1], path=path, mark=mark, made=made)

    def forget(self, graphs: Iterable[NamedNode]) -> None:
        """Remove the stored layouts of ``graphs`` (dropped, or changed)."""
        for graph in graphs:
            try:
                self._file(graph).unlink(missing_ok=True)
            except OSError as exc:
                log.warning("could not remove the page layout of %s: %s", graph.value, exc)

"""`TripleStore`: the one wrapper around ``pyoxigraph.Store``.

Every write of one logical operation goes through a single transactional call (``add`` uses
``Store.extend``; ``apply`` and ``update`` use one SPARQL update), so a failure leaves the store as
it was. The bulk writes (``bulk_load``, ``bulk_add``) skip the transaction for speed: callers write
them into a fresh graph that nothing reads until a small transactional write names it, and drop
that graph when the bulk write fails. A store given a ``ChangeLog`` records every committed write
in it (``store.changes``). A store opened read-write from a directory keeps a ``ChangeJournal``
beside it (``<directory>.journal``): before each write, the graphs it may change.
A graph's page layout, made by whoever first needs it (``layout``), is kept beside it too
(``<directory>.layouts``, ``store.layouts``). The engine's write-ahead log is kept to
``WAL_LIMIT_BYTES`` (``_bound_wal``).
``checkpoint`` makes a RocksDB checkpoint (hard links: its cost does not grow with the store)
that ``open_read_only`` opens in another process. pyoxigraph allows one read-write opener per
directory; a second opener gets ``StoreLockedError`` naming the directory
(see docs/architecture.md for the process model).
"""

from __future__ import annotations

import io
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

from pyoxigraph import (
    BlankNode,
    CanonicalizationAlgorithm,
    Dataset,
    DefaultGraph,
    Literal,
    NamedNode,
    Quad,
    QueryBoolean,
    QueryResultsFormat,
    QuerySolutions,
    QueryTriples,
    RdfFormat,
    Store,
    Triple,
    Variable,
)

from store.changes import Change, ChangeJournal, ChangeLog
from store.errors import (
    QuerySyntaxError,
    RdfSyntaxError,
    StoreError,
    StoreLockedError,
    UpdateRefusedError,
    write_error,
)
from store.formats import (
    FileRange,
    PartStopped,
    line_parts,
    lines_before,
    write_quads,
    xml_checked,
)
from store.layouts import PAGE_QUADS, GraphLayout, LayoutShelf, count_subjects, in_memory
from store.permissions import private_directory

Term = NamedNode | BlankNode | Literal
GraphName = NamedNode | DefaultGraph
QueryResult = QuerySolutions | QueryBoolean | QueryTriples

_LINE = re.compile(r"\bline (\d+)")
# "error at 2:13", "line 2 between columns 13 and 14", "at line 2 column 13" (pyoxigraph 0.5)
_POSITION = re.compile(r"(?:error at |line )(\d+)(?::(\d+)| between columns (\d+)| column (\d+))")
# Quads per SPARQL update statement when `apply` has to build one; keeps update strings small.
_UPDATE_CHUNK = 2000
# The write-ahead log is flushed into tables once it passes this many bytes (checked every
# WAL_CHECK_EVERY writes; a write itself may add more, so the bound is this plus a write).
WAL_LIMIT_BYTES = 64 << 20
WAL_CHECK_EVERY = 1
# At most this many pieces of one N-Triples file are bulk loaded at once (one per core: each
# loader holds up to about 1 GB at a time), each of at least BULK_PART_BYTES.
BULK_PARTS = 4
BULK_PART_BYTES = 16 << 20
# ... and of at most this many (a loader holds its piece in memory while it parses it).
BULK_PIECE_BYTES = 256 << 20

log = logging.getLogger(__name__)


def _position(message: str) -> tuple[int | None, int | None]:
    match = _POSITION.search(message)
    if not match:
        return None, None
    column = match.group(2) or match.group(3) or match.group(4)
    return int(match.group(1)), int(column) if column else None


def _has_blank(quad: Quad) -> bool:
    return isinstance(quad.subject, BlankNode) or isinstance(quad.object, BlankNode)


def _quad_text(quad: Quad) -> str:
    triple = f"{quad.subject} {quad.predicate} {quad.object} ."
    if isinstance(quad.graph_name, DefaultGraph):
        return triple
    return f"GRAPH {quad.graph_name} {{ {triple} }}"


class TripleStore:
    """A persistent (or in-memory) Oxigraph store with transactional writes."""

    def __init__(
        self,
        store: Store,
        path: Path | None,
        *,
        read_only: bool = False,
        journal: ChangeJournal | None = None,
    ) -> None:
        self._store: Store | None = store
        self.path = path
        self.read_only = read_only
        # Set by a follower (the server's public mirror) to learn of every committed write.
        self.changes: ChangeLog | None = None
        # The graphs each write may change, on disk (stores opened read-write from a path).
        self.journal = journal
        # The page layouts of its graphs, on disk beside it (``store.layouts``).
        self.layouts = (
            LayoutShelf(layouts_path(path), journal)
            if journal is not None and path is not None and not read_only
            else None
        )
        self._writes = 0
        # how many pieces of a file bulk_load loads at once (one per core), the smallest, the
        # largest
        self.bulk_parts = min(BULK_PARTS, len(os.sched_getaffinity(0)))
        self.bulk_part_bytes = BULK_PART_BYTES
        self.bulk_piece_bytes = BULK_PIECE_BYTES

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: Path, *, journaled: bool = True) -> TripleStore:
        """Open (creating if needed) the store directory ``path`` read-write.

        ``journaled`` keeps the change journal beside it (off for the server's own copies).

        Raises:
            StoreLockedError: if another process (or this one) already has it open.
            StoreError: if the directory cannot be created or read.
        """
        try:
            # The store holds private experiments and token hashes: owner-only.
            private_directory(path)
            opened = Store(str(path))
            journal = ChangeJournal(journal_path(path)) if journaled else None
            return cls(opened, path, journal=journal)
        except OSError as exc:
            if "lock" in str(exc).lower():
                raise StoreLockedError(
                    f"The store at {path} is in use by another process (pyoxigraph allows one "
                    "writer per directory). Stop the running `qabench serve`, or point this "
                    "command at another directory with --data-dir."
                ) from exc
            raise StoreError(f"Cannot open the store at {path}: {exc}") from exc

    @classmethod
    def open_read_only(cls, path: Path) -> TripleStore:
        """Open the store (typically a checkpoint) at ``path`` for reading only.

        Only safe when no process writes the directory, which holds for a checkpoint.

        Raises:
            StoreError: if the directory is not a readable store.
        """
        try:
            return cls(Store.read_only(str(path)), path, read_only=True)
        except OSError as exc:
            raise StoreError(f"Cannot open the store at {path} for reading: {exc}") from exc

    @classmethod
    def in_memory(cls) -> TripleStore:
        """Return a store that lives in memory only (replicas, tests)."""
        return cls(Store(), None)

    def close(self) -> None:
        """Flush and release the store (and its directory lock).

        The store is released even when the flush fails (a full disk): its writes are in the
        write-ahead log, and a store that cannot flush must still be closable to be reopened.

        Raises:
            StoreError: if the flush failed (the store is released anyway).
        """
        if self._store is None:
            return
        store, self._store = self._store, None
        failure: OSError | None = None
        if self.path is not None and not self.read_only:
            try:
                store.flush()
            except OSError as exc:
                failure = exc
        # The last reference goes now, not with this frame: a raised error's traceback keeps
        # the frame (in a cycle only the garbage collector breaks), and the engine's files --
        # their disk space too, after a rebuild deleted them -- with it.
        del store
        if failure is not None:
            raise StoreError(f"Flushing the store failed: {failure}") from failure

    def checkpoint(self, target: Path) -> None:
        """Write a consistent copy of the store to ``target`` (which must not exist yet).

        RocksDB hard-links the immutable table files and writes only what is not yet on disk,
        so the cost grows with the recent writes, not with the store. The copy is readable by
        the owner only (mode 0700), like the store it comes from.

        Raises:
            StoreError: if the store lives in memory or the checkpoint cannot be written.
        """
        if self.path is None:
            raise StoreError("An in-memory store has no checkpoints")
        try:
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self.raw.backup(str(target))
            target.chmod(0o700)
        except OSError as exc:
            raise StoreError(f"Cannot write a checkpoint to {target}: {exc}") from exc

    def _note(self, graphs: Iterable[Quad | NamedNode | DefaultGraph] | None) -> int:
        """Write the journal entry of a write about to happen to ``graphs`` (None: anything).

        Raises:
            StoreError: if the entry cannot be written; the write must not happen then.
        """
        if self.journal is None:
            return 0
        if graphs is None:
            return self.journal.note(None)
        names = set()
        for item in graphs:
            graph = item.graph_name if isinstance(item, Quad) else item
            if isinstance(graph, NamedNode):
                names.add(graph.value)
        return self.journal.note(names) if names else 0

    def _record(self, change: Change) -> None:
        if self.changes is not None:
            self.changes.record(change)
        self._bound_wal()

    def _bound_wal(self) -> None:
        """Flush the engine's memory tables once its write-ahead log passes ``WAL_LIMIT_BYTES``
        (after a write): RocksDB then reuses the log files instead of growing them. Left to
        itself the log grew to 1.16 GB over a server's life and filled a 700 MB disk (issue
        41). The check reads the sizes of the store directory's ``*.log`` files (a few)."""
        if self.path is None or self.read_only or self._store is None:
            return
        self._writes += 1
        if self._writes % WAL_CHECK_EVERY:
            return
        try:
            size = sum(e.stat().st_size for e in os.scandir(self.path) if e.name.endswith(".log"))
            if size > WAL_LIMIT_BYTES:
                self._store.flush()
        except OSError as exc:
            # a full disk among others: the next write reports it where it matters
            log.warning("could not bound the store's write-ahead log: %s", exc)

    @property
    def raw(self) -> Store:
        """Return the underlying pyoxigraph store (only for the store package's own helpers)."""
        if self._store is None:
            raise StoreError("The store has been closed")
        return self._store

    # ------------------------------------------------------------------ reading
    def query(
        self,
        sparql: str,
        *,
        substitutions: Mapping[str, Term] | None = None,
        default_graph: list[GraphName] | None = None,
        named_graphs: list[NamedNode] | None = None,
        union_default_graph: bool = False,
        base_iri: str | None = None,
        prefixes: Mapping[str, str] | None = None,
    ) -> QueryResult:
        """Evaluate a SPARQL query (``prefixes`` are predeclared prefixes).

        Raises:
            QuerySyntaxError: if the query does not parse (with line and column).
            StoreError: if evaluation fails.
        """
        subs: dict[Variable, Term | Triple] = {
            Variable(k): v for k, v in (substitutions or {}).items()
        }
        default: list[NamedNode | BlankNode | DefaultGraph] | None = (
            list(default_graph) if default_graph is not None else None
        )
        named: list[NamedNode | BlankNode] | None = (
            list(named_graphs) if named_graphs is not None else None
        )
        try:
            return self.raw.query(
                sparql,
                substitutions=subs or None,
                default_graph=default,
                named_graphs=named,
                use_default_graph_as_union=union_default_graph and default_graph is None,
                base_iri=base_iri,
                prefixes=dict(prefixes) if prefixes else None,
            )
        except SyntaxError as exc:
            line, column = _position(str(exc))
            raise QuerySyntaxError(f"Malformed SPARQL: {exc}", line, column) from exc
        except (OSError, RuntimeError) as exc:
            # pyoxigraph raises RuntimeError for queries it parses but cannot evaluate (a call
            # to an unknown function, say)
            raise StoreError(f"Query evaluation failed: {exc}") from exc

    def select(self, sparql: str, **substitutions: Term) -> list[dict[str, Term]]:
        """Run a SELECT over the union of all graphs and return rows as ``{var: term}``.

        Unbound variables are left out of a row.
        """
        result = self.query(sparql, substitutions=substitutions, union_default_graph=True)
        if not isinstance(result, QuerySolutions):
            raise StoreError("select() needs a SELECT query")
        names = [v.value for v in result.variables]
        rows: list[dict[str, Term]] = []
        for solution in result:
            row = {}
            for name in names:
                value = solution[name]
                if value is not None:
                    row[name] = value
            rows.append(row)
        return rows

    def ask(self, sparql: str, **substitutions: Term) -> bool:
        """Run an ASK over the union of all graphs."""
        result = self.query(sparql, substitutions=substitutions, union_default_graph=True)
        if not isinstance(result, QueryBoolean):
            raise StoreError("ask() needs an ASK query")
        return bool(result)

    def quads(
        self,
        subject: NamedNode | BlankNode | None = None,
        predicate: NamedNode | None = None,
        obj: Term | None = None,
        graph: GraphName | None = None,
    ) -> Iterator[Quad]:
        """Iterate the quads matching a pattern (``None`` is a wildcard)."""
        return iter(self.raw.quads_for_pattern(subject, predicate, obj, graph))

    def layout(self, graph: NamedNode, page_quads: int = PAGE_QUADS) -> GraphLayout:
        """Return the page layout of ``graph`` (``store.layouts``): the one kept on disk while
        no write touched the graph, else made now (and kept, for a store with a directory).

        Raises:
            StoreError: if the engine cannot count the graph's subjects.
        """
        shelf = self.layouts
        if shelf is None:
            return in_memory(count_subjects(self, graph), page_quads)
        found = shelf.read(graph, page_quads)
        if found is not None:
            return found
        mark = shelf.mark()  # before counting: a write while it counts makes it stale
        return shelf.save(graph, count_subjects(self, graph), page_quads, mark)

    def graphs(self) -> list[NamedNode]:
        """Return every named graph in the store."""
        return [g for g in self.raw.named_graphs() if isinstance(g, NamedNode)]

    def has_graph(self, graph: NamedNode) -> bool:
        """Return whether the named graph exists."""
        return bool(self.raw.contains_named_graph(graph))

    def __len__(self) -> int:
        return len(self.raw)

    # ------------------------------------------------------------------ writing
    def add(self, quads: Iterable[Quad]) -> None:
        """Add quads in one transaction (all or nothing).

        Raises:
            StoreError: if the write fails; nothing is written then.
        """
        batch = list(quads)
        entry = self._note(batch)
        try:
            self.raw.extend(batch)
        except OSError as exc:
            raise write_error("Writing to the store failed, nothing was written", exc) from exc
        self._record(Change(added=tuple(batch), journal=entry))

    def apply(self, remove: Iterable[Quad] = (), add: Iterable[Quad] = ()) -> None:
        """Remove then add quads in one transaction (one SPARQL update).

        Blank nodes cannot be removed this way; qabench never writes blank nodes.

        Raises:
            StoreError: if the update fails; nothing is written then.
        """
        removed, added = list(remove), list(add)
        parts: list[str] = []
        for keyword, quads in (("DELETE DATA", removed), ("INSERT DATA", added)):
            for start in range(0, len(quads), _UPDATE_CHUNK):
                body = "\n".join(_quad_text(q) for q in quads[start : start + _UPDATE_CHUNK])
                parts.append(f"{keyword} {{\n{body}\n}}")
        if parts:
            entry = self._note([*removed, *added])
            self._update(" ;\n".join(parts))
            if any(_has_blank(q) for q in added):
                # SPARQL gives blank nodes in the update text new identities: followers copy
                # the graphs instead of replaying these quads.
                touched = {q.graph_name for q in (*removed, *added)}
                named = tuple(g for g in touched if isinstance(g, NamedNode))
                self._record(Change(graphs=named, journal=entry))
            else:
                self._record(Change(added=tuple(added), removed=tuple(removed), journal=entry))

    def replace_graph(self, graph: NamedNode, quads: Iterable[Quad]) -> None:
        """Replace the content of ``graph`` with ``quads`` in one transaction."""
        new = [Quad(q.subject, q.predicate, q.object, graph) for q in quads]
        old = list(self.quads(graph=graph))
        self.apply(remove=old, add=new)

    def update(self, sparql_update: str) -> None:
        """Run a SPARQL update in one transaction.

        Raises:
            QuerySyntaxError: if the update does not parse.
            StoreError: if it fails; nothing is written then.
        """
        entry = self._note(None)
        self._update(sparql_update)
        self._record(Change(everything=True, journal=entry))

    def _update(self, sparql_update: str) -> None:
        try:
            self.raw.update(sparql_update)
        except SyntaxError as exc:
            line, column = _position(str(exc))
            raise QuerySyntaxError(f"Malformed SPARQL update: {exc}", line, column) from exc
        except OSError as exc:
            raise write_error("Update failed, nothing was written", exc) from exc
        except RuntimeError as exc:
            # Oxigraph's evaluation errors of an update (a graph that does not exist or
            # already does): what the update asked for cannot be done.
            raise UpdateRefusedError(f"The update was refused, nothing was written: {exc}") from exc

    def drop_graphs(self, graphs: Iterable[NamedNode]) -> None:
        """Remove whole named graphs in one transaction."""
        dropped = list(graphs)
        statements = [f"DROP SILENT GRAPH {g}" for g in dropped]
        if statements:
            entry = self._note(dropped)
            self._update(" ;\n".join(statements))
            self._record(Change(graphs=tuple(dropped), journal=entry))
            if self.layouts is not None:
                self.layouts.forget(dropped)

    def load(
        self,
        data: bytes | IO[bytes],
        rdf_format: RdfFormat,
        *,
        graph: NamedNode | None = None,
        base_iri: str | None = None,
    ) -> None:
        """Parse and add RDF in one transaction.

        Raises:
            RdfSyntaxError: if the input does not parse; nothing is written then.
        """
        if rdf_format == RdfFormat.RDF_XML:
            checked = xml_checked(data)
            assert not isinstance(checked, Path)
            data = checked
        entry = self._note(None if graph is None else [graph])
        try:
            self.raw.load(data, rdf_format, base_iri=base_iri, to_graph=graph)
        except SyntaxError as exc:
            line, column = _position(str(exc))
            raise RdfSyntaxError(f"Malformed RDF: {exc}", line, column) from exc
        except (OSError, ValueError) as exc:
            raise write_error("Loading RDF failed, nothing was written", exc) from exc
        if graph is not None:
            self._record(Change(graphs=(graph,), journal=entry))
        else:
            self._record(Change(everything=True, journal=entry))

    def bulk_load(
        self,
        source: Path | IO[bytes],
        rdf_format: RdfFormat,
        *,
        graph: NamedNode,
        base_iri: str | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        """Load a large RDF file into ``graph`` with Oxigraph's bulk loader (no transaction).

        Fast (it writes table files directly) but not atomic: on failure part of the file may
        be in ``graph``. Load into a fresh graph that nothing reads yet and drop it on failure.
        An N-Triples file without blank nodes is cut at line ends into ``bulk_parts`` pieces
        (one per core, up to ``BULK_PARTS``; of at least ``bulk_part_bytes``: ``line_parts``)
        and the pieces are loaded at once, each by a loader of its own: the engine's loader
        keeps about one core busy (a 1 M-triple file is one batch: parsed, then written), so
        two pieces on two cores take about half the time. ``progress`` is called with the
        bytes of a file read, as reading goes on.

        Raises:
            RdfSyntaxError: if the input does not parse (``graph`` may hold a part of it).
            StoreError: if writing fails (likewise).
        """
        if rdf_format == RdfFormat.RDF_XML:
            checked = xml_checked(source)
            assert not isinstance(checked, bytes)
            source = checked
        parts: list[tuple[int, int | None]] = [(0, None)]  # a pipe: read to its end
        if isinstance(source, Path) and source.is_file():
            if rdf_format == RdfFormat.N_TRIPLES and self.bulk_parts > 1:
                parts = [
                    *line_parts(
                        source, self.bulk_parts, self.bulk_part_bytes, self.bulk_piece_bytes
                    )
                ]
            else:
                parts = [(0, source.stat().st_size)]
        entry = self._note([graph])
        try:
            if isinstance(source, Path):
                self._load_parts(source, parts, rdf_format, graph, base_iri, progress)
            else:
                self.raw.bulk_load(source, rdf_format, base_iri=base_iri, to_graph=graph)
        except SyntaxError as exc:
            line, column = _position(str(exc))
            raise RdfSyntaxError(f"Malformed RDF: {exc}", line, column) from exc
        except (OSError, ValueError) as exc:
            raise write_error("Bulk loading failed", exc) from exc
        finally:
            self._record(Change(graphs=(graph,), journal=entry))

    def _load_parts(
        self,
        path: Path,
        parts: Sequence[tuple[int, int | None]],
        rdf_format: RdfFormat,
        graph: NamedNode,
        base_iri: str | None,
        progress: Callable[[int], None] | None,
    ) -> None:
        """Bulk load the byte ranges ``parts`` of ``path`` into ``graph``: one range through a
        reader; several by ``bulk_parts`` threads at once, each loading every n-th range (the
        engine's loader runs without the GIL). The first range to fail stops the others, and
        its error is raised (a syntax error with the line counted from the file's start)."""
        lock = threading.Lock()
        failed = threading.Event()
        failures: dict[int, BaseException] = {}

        def _counted(size: int) -> None:
            if progress is not None:
                with lock:
                    progress(size)

        if len(parts) == 1:  # one loader, reading the file as it goes
            try:
                with FileRange(path, *parts[0], progress=_counted) as raw:
                    reader = io.BufferedReader(raw, 1 << 20)
                    self.raw.bulk_load(reader, rdf_format, base_iri=base_iri, to_graph=graph)
            except BaseException as exc:  # raised again below
                failures[0] = exc

        def _loader(first: int, step: int) -> None:
            # pieces first, first + step, ...: each read whole, then given to the engine as
            # bytes (a loader reading through a Python file object needs the GIL for every
            # read, and two of them took turns: 8.8 s instead of 4.7 s for 1 M triples)
            for index in range(first, len(parts), step):
                start, end = parts[index]
                if failed.is_set():
                    failures.setdefault(index, PartStopped("another piece failed"))
                    return
                try:
                    with path.open("rb") as stream:
                        stream.seek(start)
                        data = stream.read((end or 0) - start)
                    _counted(len(data))
                    self.raw.bulk_load(data, rdf_format, base_iri=base_iri, to_graph=graph)
                except BaseException as exc:  # raised again below, in the caller
                    failures[index] = exc
                    failed.set()
                    return
                del data

        if len(parts) > 1:
            loaders = max(1, min(self.bulk_parts, len(parts)))
            threads = [
                threading.Thread(target=_loader, args=(n, loaders), name=f"bulk-load-{n}")
                for n in range(loaders)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        if not failures:
            return
        causes = [i for i in sorted(failures) if not isinstance(failures[i], PartStopped)]
        index = causes[0] if causes else min(failures)
        error = failures[index]
        if isinstance(error, SyntaxError) and parts[index][0] > 0:
            offset = lines_before(path, parts[index][0])
            message = _LINE.sub(lambda m: f"line {int(m.group(1)) + offset}", str(error))
            raise SyntaxError(message) from error
        raise error

    def bulk_add(self, quads: Iterable[Quad]) -> None:
        """Add many quads with Oxigraph's bulk writer (no transaction; see ``bulk_load``).

        Raises:
            StoreError: if writing fails (part of the quads may have been written).
        """
        touched: set[NamedNode] = set()
        entry = 0

        def _noting(items: Iterable[Quad]) -> Iterable[Quad]:
            nonlocal entry
            for quad in items:
                graph = quad.graph_name
                if isinstance(graph, NamedNode) and graph not in touched:
                    # journaled before the first quad of the graph is written
                    entry = self._note([graph])
                    touched.add(graph)
                yield quad

        try:
            self.raw.bulk_extend(_noting(quads))
        except OSError as exc:
            raise write_error("Bulk writing failed", exc) from exc
        finally:
            self._record(Change(graphs=tuple(sorted(touched, key=str)), journal=entry))

    # ------------------------------------------------------------------ dumping
    def dump(
        self,
        output: IO[bytes] | Path,
        rdf_format: RdfFormat = RdfFormat.N_QUADS,
        *,
        graphs: Iterable[NamedNode] | None = None,
    ) -> int:
        """Write the store (or only ``graphs``) and return the number of quads written."""
        return write_quads(self.snapshot(graphs), output, rdf_format)

    def snapshot(self, graphs: Iterable[NamedNode] | None = None) -> list[Quad]:
        """Return the store's quads (optionally only ``graphs``) in a canonical order."""
        if graphs is None:
            quads = list(self.quads())
        else:
            quads = [q for g in graphs for q in self.quads(graph=g)]
        return sorted(quads, key=str)

    def canonical(self) -> Dataset:
        """Return the whole store as a canonicalised ``Dataset`` (compare two with ``==``)."""

        dataset = Dataset(self.quads())
        dataset.canonicalize(CanonicalizationAlgorithm.UNSTABLE)
        return dataset

    def results(self, result: QueryResult, media: QueryResultsFormat) -> bytes:
        """Serialise SELECT/ASK results (helper for the server's endpoint)."""
        if isinstance(result, QueryTriples):
            raise StoreError("CONSTRUCT/DESCRIBE results are RDF, not a results format")
        data = result.serialize(format=media)
        return data if data is not None else b""


def journal_path(store_path: Path) -> Path:
    """Return where the change journal of the store directory ``store_path`` lives."""
    return store_path.with_name(store_path.name + ".journal")


def layouts_path(store_path: Path) -> Path:
    """Return where the page layouts of the store directory ``store_path`` live."""
    return store_path.with_name(store_path.name + ".layouts")


def literal_value(term: Term | None) -> str | None:
    """Return the lexical value of a literal (or an IRI's string), ``None`` for ``None``."""
    if term is None:
        return None
    return term.value

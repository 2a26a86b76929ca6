"""The Whoosh literature index: build, update, describe and search it.

The only module that imports ``whoosh`` (classic 2.7 API only, so ``whoosh3`` and
``whoosh-reloaded`` are interchangeable). Fields: ``pmid`` (ID, stored, unique), ``title``,
``abstract`` and ``mesh`` (TEXT with the English stemming analyzer, stored so snippets can be
cut), ``year`` (NUMERIC, stored). Ranking is BM25F (B=0.75, K1=1.2) over title and abstract.
An add either commits completely or leaves the index as it was. After each commit the new
segments' ``text`` postings are compiled (``rag.retrieval.compiled``): a query that is only
unfielded words OR-ed together is then scored with numpy over those copies, with the same
result as Whoosh's own search; any other query runs in Whoosh.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import mmap
import multiprocessing
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Container, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, cast

import whoosh.analysis
import whoosh.qparser
import whoosh.query
from tqdm import tqdm
from whoosh import fields, index, scoring
from whoosh.collectors import TimeLimitCollector
from whoosh.filedb.filestore import FileStorage
from whoosh.filedb.structfile import StructFile
from whoosh.index import IndexError as WhooshIndexError
from whoosh.index import LockError
from whoosh.reading import EmptyReader, IndexReader, MultiReader, SegmentReader
from whoosh.searching import Searcher, TimeLimit

from rag.corpus.article import Article, Deletion
from rag.errors import IndexMissingError, QuerySyntaxError, QueryTooBroadError, RagError
from rag.retrieval import compiled
from rag.retrieval.query import Atom, check_query, markers

# Unfielded query words search ``text`` (title and abstract as one field: one BM25 length
# normalisation and one saturation per term, measured better than BM25F over separate title and
# abstract fields, see docs/rag-retrieval.md). Indexes built before ``text`` existed search
# title and abstract as before.
SEARCH_FIELDS = ("text",)
LEGACY_SEARCH_FIELDS = ("title", "abstract")
QUERY_FIELDS = ("pmid", "title", "abstract", "text", "mesh", "year")
# Whoosh's parser, analysis and query classes are untyped; they are used through these aliases.
analysis: Any = whoosh.analysis
qparser: Any = whoosh.qparser
wquery: Any = whoosh.query
_FileStorage: Any = FileStorage
_StructFile: Any = StructFile
STOP_WORD_LIST = frozenset(analysis.STOP_WORDS)
_MESH_SEPARATOR = "; "
# Memory for a writer's posting buffer (per process): with 256 MB a 30,000-citation PubMed file
# spilled sorted runs to disk and merged them, 900 docs/s on 2 processes; 1024 MB, 1,360 docs/s.
WRITER_MB = 1024
# BM25 parameters (Lucene's defaults; measured: other values moved MAP by less than 0.01)
B, K1 = 0.75, 1.2
# What the wildcards, fuzzy terms and ranges of one query may cost: the index terms they expand
# to (Lucene's classic limit on a query's clauses), and the index terms (summed over segments)
# they may examine to find them, in Python: a leading wildcard tests every term of every
# segment, a fuzzy term computes an edit distance per term under its prefix (at 1 M abstracts:
# 100,000 examined in 0.4 s for a wildcard, 2 s for a fuzzy term).
MAX_EXPANDED_TERMS = 1024
MAX_EXAMINED_TERMS = 100_000
# The longest a query may run in Whoosh (any query but plain words, which the compiled postings
# score in milliseconds): at 1 M abstracts a range over common title words ran 324 s.
SEARCH_SECONDS = 10.0
# Operators must stand alone between spaces, parentheses or quotes, exactly as rag.retrieval.query
# lexes them (Whoosh's defaults differ slightly, e.g. "NOT(x)" would silently be a plain word).
_BEFORE, _AFTER = r"(?:^|(?<=[\s()\"]))", r"(?=[\s()\"]|$)"
# "+"/"-" only at the start of a term: the default "-" would turn "H2-receptor" into NOT receptor.
_PLUS, _MINUS = r"(?:^|(?<=[\s(]))\+(?=[^\s)])", r"(?:^|(?<=[\s(]))-(?=[^\s)])"


@dataclass(frozen=True, slots=True)
class IndexInfo:
    """What ``qabench index info`` reports."""

    directory: Path
    documents: int
    fields: tuple[str, ...]
    size_bytes: int
    last_modified: datetime | None
    # segments with compiled postings, of all segments (a search is fast when they are equal)
    compiled_segments: int = 0
    segments: int = 0


@dataclass(frozen=True, slots=True)
class IndexLabel:
    """Which literature index answered: its name, its size, whether it is the demo index."""

    name: str
    documents: int
    demo: bool = False


# The index's own description (name, demo), written next to Whoosh's files.
MANIFEST = "qabench-index.json"


def write_manifest(directory: Path, name: str, *, demo: bool = False) -> None:
    """Record an index's name and whether it is the demo index (replacing the file whole)."""
    scratch = directory / f".{MANIFEST}.partial"
    scratch.write_text(json.dumps({"name": name, "demo": demo}), "utf-8")
    scratch.replace(directory / MANIFEST)


def read_manifest(directory: Path) -> tuple[str, bool]:
    """Return an index's recorded name and demo flag (the directory's name, not the demo,
    when nothing is recorded or the file is unreadable)."""
    try:
        value = json.loads((directory / MANIFEST).read_text("utf-8"))
    except (OSError, ValueError):
        return directory.name, False
    if not isinstance(value, dict):
        return directory.name, False
    name = value.get("name")
    return (name if isinstance(name, str) and name else directory.name), value.get("demo") is True


@dataclass(frozen=True, slots=True)
class BuildReport:
    """The outcome of one committed add."""

    added: int
    replaced: int
    duplicates: int
    documents: int
    seconds: float
    # citations withdrawn by PubMed (DeleteCitation) that were removed; those not indexed
    deleted: int = 0


@dataclass(frozen=True, slots=True)
class Hit:
    """One search hit: the stored article and its BM25F score."""

    article: Article
    score: float


class _LuceneIdfScorer(scoring.BM25FScorer):
    """BM25 with Lucene's idf, ``ln(1 + (N - df + 0.5) / (df + 0.5))``.

    Whoosh's own idf, ``ln(N / (df + 1)) + 1``, never drops below 1, so a word found in most
    abstracts still weighs as much as a rare one; measured on the BioASQ 2013 questions this
    alone cost 0.02 documents MAP against Lucene-style BM25 (docs/rag-retrieval.md).
    """

    def __init__(
        self, searcher: Any, fieldname: str, text: str, B: float, K1: float, qf: int = 1
    ) -> None:
        super().__init__(searcher, fieldname, text, B, K1, qf=qf)
        parent = searcher.get_parent()
        count = parent.doc_count_all()
        frequency = parent.doc_frequency(fieldname, text)
        self.idf = math.log(1 + (count - frequency + 0.5) / (frequency + 0.5))
        # the parent computed the term's best possible score with its own (larger) idf; the
        # search skips documents that cannot reach the top k by this bound, so make it exact
        if hasattr(self, "_maxquality"):
            info = searcher.term_info(fieldname, text)
            self._maxquality = self._score(info.max_weight(), info.min_length())


class LuceneBM25(scoring.BM25F):
    """Whoosh's BM25F with Lucene's idf (see ``_LuceneIdfScorer``)."""

    def scorer(self, searcher: Any, fieldname: str, text: str, qf: int = 1) -> Any:
        if not searcher.schema[fieldname].scorable:
            return scoring.WeightScorer.for_(searcher, fieldname, text)
        b = self._field_B.get(fieldname, self.B)
        return _LuceneIdfScorer(searcher, fieldname, text, b, self.K1, qf=qf)


def make_tokenizer() -> Callable[[str], list[str]]:
    """Return the index's analyzer as a function (lowercase, stop words, Porter stemming)."""
    analyzer = analysis.StemmingAnalyzer()
    return lambda text: [token.text for token in analyzer(text)]


def open_index(directory: Path, *, create: bool = False) -> LiteratureIndex:
    """Open the literature index in ``directory``.

    Args:
        directory: the index directory (``Config.index_dir``).
        create: create an empty index when there is none (for builds).

    Returns:
        The open index; close it (or use it as a context manager) when done.

    Raises:
        IndexMissingError: when there is no index and ``create`` is false.
        RagError: when the directory cannot be created or holds an unreadable index.
    """
    try:
        if index.exists_in(str(directory)):
            return LiteratureIndex(directory, _storage(directory).open_index())
        if not create:
            raise IndexMissingError(
                f"no literature index in {directory}; build one with "
                "'qabench index build SOURCE...' (or pass --data-dir)"
            )
        directory.mkdir(parents=True, exist_ok=True)
        return LiteratureIndex(directory, _storage(directory).create_index(_schema()))
    except (OSError, WhooshIndexError) as exc:
        raise RagError(f"cannot open the index in {directory}: {exc}") from exc


def has_index(directory: Path) -> bool:
    """Return whether ``directory`` holds a literature index (without opening it)."""
    try:
        return bool(index.exists_in(str(directory)))
    except (OSError, WhooshIndexError):
        return False


def _storage(directory: Path | str) -> Any:
    """Return the index's file storage: files read through memory maps, never copied whole.

    Whoosh's own memory-mapped reading copies each file of a segment into private memory: at a
    million abstracts, opening a searcher took 3.2 s and 1.8 GB (2.5 GB after 100 questions),
    for every opened index. Here each file is mapped and read like a file, piece by piece: the
    searcher opens in 0.06 s and the process stays at 50 MB of private memory (the mapped pages
    are the page cache, shared). Reading through plain file handles also avoids the copy, but
    queries that Whoosh runs took about 1.4 times as long (measured at 1 M; docs/rag-retrieval.md).
    """
    return _MappedFileStorage(str(directory), supports_mmap=False)


class _MappedFileStorage(_FileStorage):  # type: ignore[misc]  # whoosh storage: untyped base
    """A folder whose files are opened as read-only memory maps wrapped as files."""

    def open_file(self, name: str, **kwargs: Any) -> Any:
        path = Path(self.folder) / name
        with path.open("rb") as handle:
            try:
                mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:  # an empty file cannot be mapped
                return _StructFile(path.open("rb"), name=name, **kwargs)
        return _StructFile(mapped, name=name, **kwargs)


def _schema() -> fields.Schema:
    analyzer = analysis.StemmingAnalyzer()
    return fields.Schema(
        pmid=fields.ID(stored=True, unique=True),
        title=fields.TEXT(analyzer=analyzer, stored=True),
        # stored for snippets; searched through ``text`` (``abstract:`` is an alias of it)
        abstract=fields.STORED(),
        text=fields.TEXT(analyzer=analyzer),
        mesh=fields.TEXT(analyzer=analyzer, stored=True),
        year=fields.NUMERIC(int, stored=True),
    )


class LiteratureIndex:
    """An open Whoosh index of articles. Not shared between threads: open one per worker."""

    def __init__(self, directory: Path, ix: Any) -> None:  # Any: whoosh.index.FileIndex
        self.directory = directory
        self._ix = ix
        self._parser = _query_parser(ix.schema)
        self._analyzer = ix.schema["text" if "text" in ix.schema else "abstract"].analyzer
        # the searcher kept open (opening one reads every segment's tables), in a holder the
        # finalizer shares: an index dropped without close() still closes its files
        self._held: list[Any] = [None]
        self._release = weakref.finalize(self, _release, self._held, ix)

    @property
    def _searcher(self) -> Any:
        return self._held[0]

    @_searcher.setter
    def _searcher(self, searcher: Any) -> None:
        self._held[0] = searcher

    def __enter__(self) -> LiteratureIndex:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release the index files."""
        self._release()

    def _current_searcher(self) -> Any:
        """Return the kept searcher, moved to the newest commit when the index changed.

        Opening a searcher reads the tables of every segment (about 1.5 s at a million
        abstracts in 70 segments), so a new commit reopens only the segments that are new or
        have new deletions. (Whoosh's own ``refresh`` keeps readers of segments a merge
        removed and of segments whose deletions changed, so it is not used.)
        """
        if self._searcher is not None and self._searcher.up_to_date():
            return self._searcher
        toc = _read_toc(self._ix)
        kept: dict[str, Any] = {}
        if self._searcher is not None:
            kept = {leaf.segment().segment_id(): leaf for leaf, _ in self._leaves()}
        readers = []
        for segment in toc.segments:
            old = kept.pop(segment.segment_id(), None)
            # a segment's deletions only grow, so an equal count means the same deletions
            if old is not None and old.segment().deleted_count() == segment.deleted_count():
                readers.append(old)
                continue
            if old is not None:
                old.close()
            readers.append(
                SegmentReader(self._ix.storage, toc.schema, segment, generation=toc.generation)
            )
        for unused in kept.values():
            unused.close()
        if not readers:
            reader: Any = EmptyReader(toc.schema)
        elif len(readers) == 1:
            reader = readers[0]
        else:
            reader = MultiReader(readers, generation=toc.generation)
        self._searcher = Searcher(reader, weighting=LuceneBM25(B=B, K1=K1), fromindex=self._ix)
        return self._searcher

    def _leaves(self) -> list[tuple[Any, int]]:
        reader = self._searcher.reader() if self._searcher is not None else None
        if reader is None or reader.segments() is None:  # an empty reader has no segments
            return []
        return list(reader.leaf_readers())

    def add(
        self,
        articles: Iterable[Article | Deletion],
        *,
        progress: bool = False,
        procs: int = 1,
    ) -> BuildReport:
        """Add or replace (by PMID) articles, and remove deleted citations, in one transaction.

        A PMID repeated within ``articles`` is indexed once (its first occurrence); a PMID
        already in the index is replaced; a ``Deletion`` removes its PMID (also one added
        earlier in the same call). If reading ``articles`` raises, nothing is written.

        Args:
            articles: the articles, typically a lazy ``read_corpus`` iterator.
            progress: show a tqdm progress bar on stderr.
            procs: indexing processes (Whoosh's multi-process writer; each writes its own
                segment, which are kept rather than merged, so large builds do not pay a merge).

        Returns:
            Counts and timing of the committed add.

        Raises:
            RagError: when another process holds the index's write lock.
            CorpusFormatError: re-raised from the reader; the index is unchanged.
        """
        started = time.perf_counter()
        try:
            if procs > 1:
                writer = self._ix.writer(procs=procs, limitmb=WRITER_MB, multisegment=True)
            else:
                writer = self._ix.writer(limitmb=WRITER_MB)
        except LockError as exc:
            raise RagError(f"the index in {self.directory} is locked by another build") from exc
        committed = False
        try:
            added, replaced, duplicates, deleted, late = _write(
                writer,
                self._indexed_pmids(self._current_searcher()),
                tqdm(articles, disable=not progress, unit="doc", desc="indexing"),
            )
            # MERGE_SMALL, Whoosh's default, would merge the small segments on every commit:
            # single-threaded, and at PubMed scale (one commit per file) minutes per file
            writer.commit(merge=procs <= 1)
            committed = True
        finally:
            if not committed:
                _abandon(writer)
        if late:
            # deleted in the same call that added them: Whoosh deletes committed documents only
            with self._ix.writer() as cleaner:
                for pmid in late:
                    cleaner.delete_by_term("pmid", pmid)
        self.compile(procs=procs)
        return BuildReport(
            added=added,
            replaced=replaced,
            duplicates=duplicates,
            documents=self._ix.doc_count(),
            seconds=time.perf_counter() - started,
            deleted=deleted + len(late),
        )

    def _indexed_pmids(self, searcher: Any) -> Container[str]:
        """Return the PMIDs in the index: from the compiled copies, or Whoosh's lookups."""
        found = compiled.live_pmids(self.directory, searcher.reader())
        if found is not None:
            return compiled.PmidSet(*found)
        return _WhooshPmids(searcher)

    def compile(self, *, procs: int = 1) -> int:
        """Compile the postings of every segment that has no copy yet; drop stale copies.

        Args:
            procs: processes compiling segments in parallel.

        Returns:
            The number of segments compiled.
        """
        reader = self._current_searcher().reader()
        segments = [
            leaf.segment().segment_id() for leaf, _ in reader.leaf_readers() if leaf.doc_count_all()
        ]
        compiled.prune(self.directory, segments)
        missing = [s for s in segments if not compiled.has_copy(self.directory, s)]
        if procs <= 1 or len(missing) <= 1:
            for leaf, _ in reader.leaf_readers():
                if leaf.segment().segment_id() in missing:
                    compiled.compile_segment(self.directory, leaf)
            return len(missing)
        # forked like Whoosh's own indexing processes (spawning would re-run a caller's script)
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(min(procs, len(missing)), mp_context=context) as pool:
            list(pool.map(_compile_job, [str(self.directory)] * len(missing), missing))
        return len(missing)

    def info(self) -> IndexInfo:
        """Return the document count, fields, size on disk and last modification time."""
        files = [p for p in self.directory.iterdir() if p.is_file()]
        newest = max((p.stat().st_mtime for p in files), default=None)
        reader = self._current_searcher().reader()
        segments = [
            leaf.segment().segment_id() for leaf, _ in reader.leaf_readers() if leaf.doc_count_all()
        ]
        return IndexInfo(
            directory=self.directory,
            documents=self._ix.doc_count(),
            fields=tuple(self._ix.schema.names()),
            size_bytes=sum(p.stat().st_size for p in files),
            last_modified=datetime.fromtimestamp(newest, UTC) if newest is not None else None,
            compiled_segments=sum(compiled.has_copy(self.directory, s) for s in segments),
            segments=len(segments),
        )

    def label(self) -> IndexLabel:
        """Return the index's name, document count and whether it is the demo index."""
        name, demo = read_manifest(self.directory)
        return IndexLabel(name, self._ix.doc_count(), demo)

    def tokenize(self, text: str) -> list[str]:
        """Return the terms the index makes of ``text`` (title/abstract analyzer)."""
        return [token.text for token in self._analyzer(text)]

    def search(
        self,
        query: str,
        k: int,
        *,
        compiled_postings: bool = True,
        time_limit: float | None = SEARCH_SECONDS,
    ) -> tuple[Hit, ...]:
        """Run a query in the query language and return the top ``k`` hits by BM25F score.

        Args:
            query: the query (see ``docs/rag-retrieval.md`` for the syntax).
            k: the number of hits wanted (at least 1).
            compiled_postings: score a query of OR-ed words over the compiled postings when
                every segment has them (same hits and scores); false: always in Whoosh (for
                comparisons).
            time_limit: the seconds a search in Whoosh may take (None: no limit, for
                benchmarks); the compiled postings' searches are not timed.

        Returns:
            Up to ``k`` hits, best first (ties keep index order).

        Raises:
            QuerySyntaxError: when the query is malformed (with the position).
            QueryTooBroadError: when its wildcards, fuzzy terms or ranges expand too far, or
                it runs longer than ``time_limit``.
        """
        atoms = check_query(query, QUERY_FIELDS)
        try:
            tree = self._parser.process(query)
            parsed = tree.query(self._parser) or wquery.NullQuery
        except NotImplementedError as exc:
            # Whoosh cannot combine +/- markers with AND/OR/NOT in one group.
            first = next(markers(atoms), None)
            raise QuerySyntaxError(
                "'+'/'-' cannot be mixed with AND, OR or NOT in the same group; "
                "write 'a AND NOT b' instead of '+a -b'",
                query=query,
                position=first.start if first else 0,
            ) from exc
        _raise_error_nodes(tree, self._parser, query)
        parsed = _prohibit(parsed.normalize())
        searcher = self._current_searcher()
        terms = bag_of_words(parsed) if compiled_postings else None
        if terms is not None:
            ranked = compiled.search(self.directory, searcher.reader(), terms, k, b=B, k1=K1)
            if ranked is not None:
                return tuple(
                    Hit(_article(searcher.stored_fields(docnum)), score) for docnum, score in ranked
                )
        parsed = _expand_within_bounds(parsed, searcher.reader(), query, atoms)
        collector = searcher.collector(limit=k)
        if time_limit is not None:
            # a timer thread flags the collector, which stops at its next document (no signal:
            # searches run on worker threads)
            collector = TimeLimitCollector(collector, timelimit=time_limit, use_alarm=False)
        try:
            searcher.search_with_collector(parsed, collector)
        except TimeLimit:
            raise QueryTooBroadError(
                f"the query ran longer than {time_limit:g} s over the {searcher.doc_count():,} "
                "indexed articles; narrow it (fewer or longer wildcards, fewer words, a field "
                "or a phrase instead of a range)",
                query=query,
                position=0,
            ) from None
        finally:
            if isinstance(collector, TimeLimitCollector) and collector.timer is not None:
                collector.timer.cancel()  # stopped early: the timer would linger
        return tuple(Hit(_article(hit.fields()), float(hit.score)) for hit in collector.results())

    def articles(self) -> Iterator[Article]:
        """Yield every stored article (in index order; for embedding and exports)."""
        with self._ix.reader() as reader:
            for stored in reader.all_stored_fields():
                yield _article(stored)

    def document(self, pmid: str) -> Article | None:
        """Return the stored article with this PMID, or ``None``."""
        stored = self._current_searcher().document(pmid=pmid)
        return _article(stored) if stored else None


def _abandon(writer: Any) -> None:
    """Give up a writer that did not commit: cancel it, and close every file it still holds.

    A commit that fails (a full disk) marks Whoosh's writer closed and releases its lock, but
    leaves its segment files (terms, postings) and its posting pool's run files open: the
    cancel that followed raised, and the files stayed open until the garbage collector found
    them (issue 41). They are found by following the writer's attributes (a few levels), and
    the locals of the frames the failure came through, to their file objects. Best effort:
    the failure that got here is the one to report.
    """
    if not writer.is_closed:
        with contextlib.suppress(Exception):
            writer.cancel()
    # the frames the failure came through hold the files they were writing, too
    roots: list[object] = [writer]
    trace = sys.exc_info()[2]
    while trace is not None:
        roots.append(dict(trace.tb_frame.f_locals))
        trace = trace.tb_next
    for handle in _files_of(roots):
        with contextlib.suppress(Exception):
            handle.close()  # a buffered file whose flush fails still closes its descriptor


def _files_of(root: object, depth: int = 6) -> list[io.IOBase]:
    """Return the open file objects reachable from ``root`` through attributes, lists and
    dictionaries, at most ``depth`` steps away."""
    found: list[io.IOBase] = []
    seen: set[int] = set()
    # breadth first: an object is met first by its shortest path, so its files are in reach
    todo: deque[tuple[object, int]] = deque([(root, 0)])
    while todo:
        item, level = todo.popleft()
        if id(item) in seen or level > depth:
            continue
        seen.add(id(item))
        if isinstance(item, io.IOBase):
            if not item.closed:
                found.append(item)
            continue
        if isinstance(item, dict):
            todo += [(value, level + 1) for value in item.values()]
        elif isinstance(item, list | tuple | set):
            todo += [(value, level + 1) for value in item]
        elif hasattr(item, "__dict__") and not isinstance(item, type):
            todo += [(value, level + 1) for value in vars(item).values()]
    return found


def _release(held: list[Any], ix: Any) -> None:
    """Close an index's kept searcher and the index (once, by close() or when dropped)."""
    if held[0] is not None:
        held[0].close()
        held[0] = None
    ix.close()


def _read_toc(ix: Any) -> Any:
    """Read the index's newest table of contents (retrying while a commit replaces it)."""
    for attempt in range(10):
        try:
            return ix._read_toc()
        except (OSError, EOFError):
            if attempt == 9:
                raise
            time.sleep(0.05)
    raise AssertionError("unreachable")


class IndexPool:
    """Open indexes kept for reuse between runs, one per concurrent user.

    Opening an index reads the tables of every segment, which at PubMed scale costs more than
    the search; a pool keeps up to ``keep`` opened indexes (each with its searcher) and hands
    each checkout one that no other thread holds.
    """

    def __init__(self, directory: Path, keep: int = 4) -> None:
        self.directory = directory
        self._keep = keep
        self._idle: list[LiteratureIndex] = []
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def checkout(self) -> Iterator[LiteratureIndex]:
        """Lend an open index for one run (opened now if none is idle).

        Raises:
            IndexMissingError: when there is no index.
        """
        with self._lock:
            lent = self._idle.pop() if self._idle else None
        if lent is None:
            lent = open_index(self.directory)
        try:
            yield lent
        finally:
            with self._lock:
                kept = len(self._idle) < self._keep
                if kept:
                    self._idle.append(lent)
            if not kept:
                lent.close()

    def close(self) -> None:
        """Close the idle indexes."""
        with self._lock:
            idle, self._idle = self._idle, []
        for opened in idle:
            opened.close()


def bag_of_words(parsed: Any) -> list[tuple[str, float]] | None:
    """Return the (term, boost) pairs of a query that is only ``text`` words OR-ed, else ``None``.

    Such a query (one word, or an OR of words, each possibly boosted as in ``h2^0.4``, no
    field, phrase, wildcard, fuzzy term, range or operator) is what the compiled postings can
    score; a boost multiplies its word's score, as Whoosh's does.
    """
    parts = parsed.subqueries if type(parsed) is wquery.Or else [parsed]
    if type(parsed) is wquery.Or and (parsed.boost != 1 or parsed.scale or parsed.minmatch):
        return None
    terms = []
    for part in parts:
        if type(part) is not wquery.Term or part.fieldname != "text":
            return None
        text = part.text if isinstance(part.text, str) else part.text.decode("utf-8")
        terms.append((text, float(part.boost)))
    return terms


def _compile_job(directory: str, segment: str) -> None:
    """Compile one segment in a worker process (``LiteratureIndex.compile``)."""
    ix: Any = _storage(directory).open_index()
    try:
        for found in ix._segments():  # open this segment only, not the whole index
            if found.segment_id() == segment:
                with SegmentReader(ix.storage, ix.schema, found) as leaf:
                    compiled.compile_segment(Path(directory), leaf)
    finally:
        ix.close()


class _WhooshPmids:
    """PMID membership asked of Whoosh (an index whose segments are not all compiled)."""

    def __init__(self, searcher: Any) -> None:
        self._searcher = searcher
        self._empty = searcher.doc_count_all() == 0

    def __contains__(self, pmid: object) -> bool:
        return not self._empty and self._searcher.document_number(pmid=pmid) is not None


def _query_parser(schema: Any) -> Any:  # Any: whoosh schema and parser objects
    combined = "text" in schema
    default = SEARCH_FIELDS if combined else LEGACY_SEARCH_FIELDS
    parser = qparser.MultifieldParser(list(default), schema, group=qparser.OrGroup)
    if combined:
        # the abstract is searched as part of the article text (title and abstract)
        parser.add_plugin(qparser.FieldAliasPlugin({"text": ["abstract"]}))
    parser.replace_plugin(
        qparser.OperatorsPlugin(
            And=_BEFORE + "AND" + _AFTER,
            Or=_BEFORE + "OR" + _AFTER,
            AndNot=_BEFORE + "ANDNOT" + _AFTER,
            AndMaybe=_BEFORE + "ANDMAYBE" + _AFTER,
            Not=_BEFORE + "NOT" + _AFTER,
            Require=None,
        )
    )
    parser.add_plugin(qparser.PlusMinusPlugin(plusexpr=_PLUS, minusexpr=_MINUS))
    parser.add_plugin(qparser.FuzzyTermPlugin())
    return parser


def _raise_error_nodes(node: Any, parser: Any, query: str) -> None:
    """Raise ``QuerySyntaxError`` for an error Whoosh left in its syntax tree.

    Whoosh records problems such as ``year:abc`` as an ``error`` on an empty query instead of
    raising; the syntax node still knows where it came from.
    """
    if isinstance(node, qparser.ErrorNode):
        start = getattr(node.node, "startchar", None) if node.node is not None else None
        raise QuerySyntaxError(str(node.message), query=query, position=start or 0)
    if isinstance(node, qparser.GroupNode):
        for child in node:
            _raise_error_nodes(child, parser, query)
        return
    error = getattr(node.query(parser), "error", None)
    if error:
        raise QuerySyntaxError(str(error), query=query, position=node.startchar or 0)


class _Exhausted(Exception):
    """A query's expansions examined more index terms than they may."""


class _CountingReader:
    """A segment's reader whose term listings count what they yield against one budget.

    Whoosh's multi-term queries find their terms through these listings (``lexicon``,
    ``expand_prefix``, ``terms_from``; a fuzzy term through ``terms_within``, here Whoosh's
    generic scan of the terms under its prefix, so that it is counted too); everything else is
    the segment reader's own.
    """

    def __init__(self, reader: Any, budget: list[int]) -> None:
        self._reader = reader
        self._budget = budget  # one shared counter: [terms left]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)

    def __contains__(self, term: object) -> bool:
        return term in self._reader

    def _counted(self, items: Iterable[Any]) -> Iterator[Any]:
        for item in items:
            self._budget[0] -= 1
            if self._budget[0] < 0:
                raise _Exhausted
            yield item

    def lexicon(self, fieldname: str) -> Iterator[Any]:
        return self._counted(self._reader.lexicon(fieldname))

    def expand_prefix(self, fieldname: str, prefix: Any) -> Iterator[Any]:
        return self._counted(self._reader.expand_prefix(fieldname, prefix))

    def terms_from(self, fieldname: str, prefix: Any) -> Iterator[Any]:
        return self._counted(self._reader.terms_from(fieldname, prefix))

    def terms_within(self, fieldname: str, text: str, maxdist: int, prefix: int = 0) -> Any:
        return IndexReader.terms_within(cast(IndexReader, self), fieldname, text, maxdist, prefix)


def _expand_within_bounds(parsed: Any, reader: Any, query: str, atoms: Iterable[Atom]) -> Any:
    """Expand a query's wildcards, fuzzy terms and ranges once, within bounds.

    Each such part is expanded segment by segment against the open reader (a scan of a merged
    lexicon costs a heap step per term and segment), counting every index term examined:
    together the parts may match at most ``MAX_EXPANDED_TERMS`` distinct terms and examine at
    most ``MAX_EXAMINED_TERMS``. The parts are then pinned to the terms found, so Whoosh's
    search looks each one up per segment instead of expanding it again. Decided on the parsed
    query; a refused query costs at most the budget, whatever the index size.

    Returns:
        The query with its multi-term parts pinned (the same matches and scores).

    Raises:
        QueryTooBroadError: naming the part that went over, with its position.
    """
    budget = [MAX_EXAMINED_TERMS]
    expanded = 0
    pinned: dict[int, Any] = {}
    segments = [leaf for leaf, _ in reader.leaf_readers()] if reader.segments() else []
    leaves = [parsed] if parsed.is_leaf() else list(parsed.leaves())
    for leaf in leaves:
        if not isinstance(leaf, wquery.MultiTerm) or id(leaf) in pinned:
            continue
        found: set[bytes] = set()
        try:
            for segment in segments:
                for term in leaf._btexts(_CountingReader(segment, budget)):
                    if term in found:
                        continue
                    found.add(term)
                    expanded += 1
                    if expanded > MAX_EXPANDED_TERMS:
                        part, position = _written(leaf, atoms)
                        raise QueryTooBroadError(
                            f"{part} matches too many index terms (the query's wildcards, fuzzy "
                            f"terms and ranges may match {MAX_EXPANDED_TERMS} together); write "
                            "a longer prefix or fewer of them",
                            query=query,
                            position=position,
                        )
        except _Exhausted:
            part, position = _written(leaf, atoms)
            raise QueryTooBroadError(
                f"{part} needs more than {MAX_EXAMINED_TERMS:,} index terms examined to find "
                "its matches; start a wildcard with a few letters, give a fuzzy term a prefix "
                "(name~2/3) or narrow the range",
                query=query,
                position=position,
            ) from None
        pinned[id(leaf)] = _pin(leaf, sorted(found))
    return _replace_leaves(parsed, pinned) if pinned else parsed


def _pin(leaf: Any, terms: list[bytes]) -> Any:
    """Return a copy of a multi-term query that matches exactly ``terms`` (where present)."""
    field = leaf.fieldname
    copied = copy.copy(leaf)
    # an instance attribute shadows the class's expansion: a lookup per term and segment
    copied._btexts = lambda reader: [t for t in terms if (field, t) in reader]
    return copied


def _replace_leaves(q: Any, pinned: dict[int, Any]) -> Any:
    if id(q) in pinned:
        return pinned[id(q)]
    if q.is_leaf():
        return q
    return q.apply(lambda child: _replace_leaves(child, pinned))


def _written(leaf: Any, atoms: Iterable[Atom]) -> tuple[str, int]:
    """Return a multi-term leaf as the user wrote it, and where it starts.

    Whoosh's positions of such parts point into them (at the ``*`` of a prefix, past the
    ``field:``), so the part is the innermost written term or range that holds that position.
    """
    at = getattr(leaf, "startchar", None) or 0
    found = _atom_at(at, atoms)
    if found is None:
        return repr(str(leaf).removeprefix(f"{SEARCH_FIELDS[0]}:")), at
    return repr(found.text), found.start


def _atom_at(at: int, atoms: Iterable[Atom]) -> Atom | None:
    for atom in atoms:
        if atom.kind == "group":
            inner = _atom_at(at, atom.children)
            if inner is not None:
                return inner
        elif atom.kind in ("term", "range") and atom.start <= at < atom.start + len(atom.text):
            return atom
    return None


def _prohibit(q: Any) -> Any:
    """Give NOT inside an OR group Lucene's meaning: exclude from the group's matches.

    Whoosh reads ``a NOT b`` under the OR default as ``a OR (everything but b)``; Elasticsearch
    (whose query_string syntax BioRAGent's queries use) reads it as ``a``, excluding ``b``.
    """
    if q.children():
        q = q.apply(_prohibit)
    if isinstance(q, wquery.Or):
        nots = [c for c in q.subqueries if isinstance(c, wquery.Not)]
        keep = [c for c in q.subqueries if not isinstance(c, wquery.Not)]
        if nots and keep:
            return wquery.AndNot(wquery.Or(keep), wquery.Or([n.query for n in nots]))
    return q


def _write(
    writer: Any, indexed: Container[str], articles: Iterable[Article | Deletion]
) -> tuple[int, int, int, int, list[str]]:
    """Buffer the articles in the writer.

    Args:
        writer: the open Whoosh writer.
        indexed: the PMIDs in the index before this add (only those are replaced or deleted,
            so adding a new article never searches the existing segments).
        articles: what to add and delete.

    Returns:
        (added, replaced, skipped duplicates, deleted, PMIDs added and then deleted here).
    """
    seen: set[str] = set()
    replaced = duplicates = deleted = 0
    late: list[str] = []
    combined = "text" in writer.schema
    for article in articles:
        if isinstance(article, Deletion):
            if article.pmid in seen:
                late.append(article.pmid)
            elif article.pmid in indexed:
                writer.delete_by_term("pmid", article.pmid)
                deleted += 1
            continue
        if article.pmid in seen:
            duplicates += 1
            continue
        seen.add(article.pmid)
        if article.pmid in indexed:
            replaced += 1
            writer.update_document(**_fields(article, combined))
        else:
            writer.add_document(**_fields(article, combined))
    return len(seen) - replaced - len(late), replaced, duplicates, deleted, late


def _fields(article: Article, combined: bool = True) -> dict[str, object]:
    values: dict[str, object] = {
        "pmid": article.pmid,
        "title": article.title,
        "abstract": article.abstract,
        "mesh": _MESH_SEPARATOR.join(article.mesh),
    }
    if combined:
        values["text"] = f"{article.title}\n{article.abstract}"
    if article.year is not None:
        values["year"] = article.year
    return values


def _article(stored: dict[str, Any]) -> Article:
    mesh = stored.get("mesh") or ""
    return Article(
        pmid=stored["pmid"],
        title=stored.get("title", ""),
        abstract=stored.get("abstract", ""),
        mesh=tuple(mesh.split(_MESH_SEPARATOR)) if mesh else (),
        year=stored.get("year"),
    )

"""The Whoosh literature index: build, update, describe and search it.

The only module that imports ``whoosh`` (classic 2.7 API only, so ``whoosh3`` and
``whoosh-reloaded`` are interchangeable). Fields: ``pmid`` (ID, stored, unique), ``title``,
``abstract`` and ``mesh`` (TEXT with the English stemming analyzer, stored so snippets can be
cut), ``year`` (NUMERIC, stored). Ranking is BM25F (B=0.75, K1=1.2) over title and abstract.
An add either commits completely or leaves the index as it was.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import whoosh.analysis
import whoosh.qparser
import whoosh.query
from tqdm import tqdm
from whoosh import fields, index, scoring
from whoosh.index import IndexError as WhooshIndexError
from whoosh.index import LockError

from rag.corpus.article import Article, Deletion
from rag.errors import IndexMissingError, QuerySyntaxError, RagError
from rag.retrieval.query import check_query, markers

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
STOP_WORD_LIST = frozenset(analysis.STOP_WORDS)
_MESH_SEPARATOR = "; "
# BM25 parameters (Lucene's defaults; measured: other values moved MAP by less than 0.01)
B, K1 = 0.75, 1.2
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
            return LiteratureIndex(directory, index.open_dir(str(directory)))
        if not create:
            raise IndexMissingError(
                f"no literature index in {directory}; build one with "
                "'qabench index build SOURCE...' (or pass --data-dir)"
            )
        directory.mkdir(parents=True, exist_ok=True)
        return LiteratureIndex(directory, index.create_in(str(directory), _schema()))
    except (OSError, WhooshIndexError) as exc:
        raise RagError(f"cannot open the index in {directory}: {exc}") from exc


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

    def __enter__(self) -> LiteratureIndex:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release the index files."""
        self._ix.close()

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
                writer = self._ix.writer(procs=procs, limitmb=256, multisegment=True)
            else:
                writer = self._ix.writer(limitmb=256)
        except LockError as exc:
            raise RagError(f"the index in {self.directory} is locked by another build") from exc
        committed = False
        try:
            with self._ix.searcher() as searcher:
                added, replaced, duplicates, deleted, late = _write(
                    writer,
                    searcher,
                    tqdm(articles, disable=not progress, unit="doc", desc="indexing"),
                )
            # MERGE_SMALL, Whoosh's default, would merge the small segments on every commit:
            # single-threaded, and at PubMed scale (one commit per file) minutes per file
            writer.commit(merge=procs <= 1)
            committed = True
        finally:
            if not committed:
                writer.cancel()
        if late:
            # deleted in the same call that added them: Whoosh deletes committed documents only
            with self._ix.writer() as cleaner:
                for pmid in late:
                    cleaner.delete_by_term("pmid", pmid)
        return BuildReport(
            added=added,
            replaced=replaced,
            duplicates=duplicates,
            documents=self._ix.doc_count(),
            seconds=time.perf_counter() - started,
            deleted=deleted + len(late),
        )

    def info(self) -> IndexInfo:
        """Return the document count, fields, size on disk and last modification time."""
        files = [p for p in self.directory.iterdir() if p.is_file()]
        newest = max((p.stat().st_mtime for p in files), default=None)
        return IndexInfo(
            directory=self.directory,
            documents=self._ix.doc_count(),
            fields=tuple(self._ix.schema.names()),
            size_bytes=sum(p.stat().st_size for p in files),
            last_modified=datetime.fromtimestamp(newest, UTC) if newest is not None else None,
        )

    def tokenize(self, text: str) -> list[str]:
        """Return the terms the index makes of ``text`` (title/abstract analyzer)."""
        return [token.text for token in self._analyzer(text)]

    def search(self, query: str, k: int) -> tuple[Hit, ...]:
        """Run a query in the query language and return the top ``k`` hits by BM25F score.

        Args:
            query: the query (see ``docs/rag-retrieval.md`` for the syntax).
            k: the number of hits wanted (at least 1).

        Returns:
            Up to ``k`` hits, best first (ties keep index order).

        Raises:
            QuerySyntaxError: when the query is malformed (with the position).
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
        with self._ix.searcher(weighting=LuceneBM25(B=B, K1=K1)) as searcher:
            results = searcher.search(parsed, limit=k)
            return tuple(Hit(_article(hit.fields()), float(hit.score)) for hit in results)

    def articles(self) -> Iterator[Article]:
        """Yield every stored article (in index order; for embedding and exports)."""
        with self._ix.reader() as reader:
            for stored in reader.all_stored_fields():
                yield _article(stored)

    def document(self, pmid: str) -> Article | None:
        """Return the stored article with this PMID, or ``None``."""
        with self._ix.searcher() as searcher:
            stored = searcher.document(pmid=pmid)
            return _article(stored) if stored else None


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
    writer: Any, searcher: Any, articles: Iterable[Article | Deletion]
) -> tuple[int, int, int, int, list[str]]:
    """Buffer the articles in the writer.

    Returns:
        (added, replaced, skipped duplicates, deleted, PMIDs added and then deleted here).
    """
    seen: set[str] = set()
    replaced = duplicates = deleted = 0
    late: list[str] = []
    fresh = searcher.doc_count_all() == 0  # nothing to look up or delete in a fresh index
    combined = "text" in writer.schema
    for article in articles:
        if isinstance(article, Deletion):
            if article.pmid in seen:
                late.append(article.pmid)
            elif not fresh and searcher.document_number(pmid=article.pmid) is not None:
                writer.delete_by_term("pmid", article.pmid)
                deleted += 1
            continue
        if article.pmid in seen:
            duplicates += 1
            continue
        seen.add(article.pmid)
        if fresh:
            writer.add_document(**_fields(article, combined))
            continue
        replaced += searcher.document_number(pmid=article.pmid) is not None
        writer.update_document(**_fields(article, combined))
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

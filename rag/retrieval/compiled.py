"""Compiled postings: numpy copies of the Whoosh index's ``text`` postings, one per segment.

Whoosh scores a query in Python, posting by posting: over a million abstracts a question's OR of
content words takes more than a second. A query that is nothing but unfielded words OR-ed
together (what ``question_query`` makes, so every question nobody edited) is scored here
instead, with numpy, over arrays copied from Whoosh's own segments: the same term weights, the
same quantised document lengths, document numbers, deletions, document frequencies, BM25
formula and Lucene idf. The ranking is therefore Whoosh's (the tests compare the two), only
computed per term with array arithmetic instead of per posting in Python. Every other query,
and every query while some segment has no copy yet, runs in Whoosh.

A Whoosh segment never changes once written (its deletions are kept beside it), so each segment
is copied once, after the commit that wrote it (``compile_segment``, driven by
``rag.retrieval.index``), and the copies of segments a merge removed are deleted. A copy is a
folder ``<index>/compiled/<segment id>/`` of ``.npy`` arrays (memory-mapped when read) and a
``meta.json``; it is written under a scratch name and renamed into place, so a reader sees a
whole copy or none. The copy also holds each document's PMID, which lets a build tell new PMIDs
from indexed ones without asking every segment once per article.

Arrays of one segment (``T`` terms, ``P`` postings, ``D`` documents):

- ``terms`` (uint8, the sorted UTF-8 terms concatenated) and ``term_offsets`` (int64, ``T + 1``)
- ``indptr`` (int64, ``T + 1``): term ``t``'s postings are ``docs[indptr[t]:indptr[t + 1]]``
- ``docs`` (uint32, ``P``, segment document numbers) and ``weights`` (float32, ``P``, term counts)
- ``lengths`` (float32, ``D``): Whoosh's stored (quantised) ``text`` length of each document
- ``pmids`` (int64, ``D``): the numeric PMID, or -1 (the others are in ``meta.json``)
"""

from __future__ import annotations

import bisect
import json
import math
import shutil
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

COMPILED = "compiled"
FIELD = "text"
FORMAT = 1
_ARRAYS = ("terms", "term_offsets", "indptr", "docs", "weights", "lengths", "pmids")
_META = "meta.json"
_PARTIAL = ".partial-"  # scratch folders: .<segment id>.partial-<random>


@dataclass(frozen=True, slots=True)
class SegmentPostings:
    """The compiled copy of one Whoosh segment (arrays memory-mapped)."""

    segment: str
    documents: int  # documents in the segment, deleted or not (Whoosh's doc_count_all)
    field_length: int  # total ``text`` length of those documents (Whoosh's field_length)
    terms: bytes
    term_offsets: npt.NDArray[np.int64]
    indptr: npt.NDArray[np.int64]
    docs: npt.NDArray[np.uint32]
    weights: npt.NDArray[np.float32]
    lengths: npt.NDArray[np.float32]
    pmids: npt.NDArray[np.int64]
    other_pmids: dict[int, str]

    def find(self, term: bytes) -> tuple[int, int]:
        """Return where ``term``'s postings lie in ``docs``/``weights`` (empty if absent)."""
        view = _TermView(self.terms, self.term_offsets)
        at = bisect.bisect_left(view, term)
        if at < len(view) and view[at] == term:
            return int(self.indptr[at]), int(self.indptr[at + 1])
        return 0, 0


class _TermView(Sequence[bytes]):
    """The sorted terms of a segment as a sequence ``bisect`` can search."""

    def __init__(self, blob: bytes, offsets: npt.NDArray[np.int64]) -> None:
        self._blob = blob
        self._offsets = offsets

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, index: Any) -> Any:  # Sequence's overloads; ints only here
        return self._blob[int(self._offsets[index]) : int(self._offsets[index + 1])]


def compiled_dir(index_dir: Path) -> Path:
    """Return the folder of the compiled copies of an index in ``index_dir``."""
    return index_dir / COMPILED


def compile_segment(index_dir: Path, leaf: Any) -> Path:
    """Copy one segment's ``text`` postings, lengths and PMIDs into ``compiled/<segment id>``.

    Args:
        index_dir: the index directory.
        leaf: the Whoosh reader of one segment (a ``SegmentReader``).

    Returns:
        The folder written (left as it was when it already existed).
    """
    segment = str(leaf.segment().segment_id())
    root = compiled_dir(index_dir)
    target = root / segment
    if (target / _META).is_file():
        return target
    documents = int(leaf.doc_count_all())
    terms: list[bytes] = []
    indptr = [0]
    docs: list[npt.NDArray[np.uint32]] = []
    weights: list[npt.NDArray[np.float32]] = []
    for term in leaf.lexicon(FIELD):
        ids, values = _raw_postings(leaf, FIELD, term)
        terms.append(term)
        docs.append(ids)
        weights.append(values)
        indptr.append(indptr[-1] + len(ids))
    lengths = np.fromiter(
        (leaf.doc_field_length(n, FIELD, 0) or 0 for n in range(documents)),
        dtype=np.float32,
        count=documents,
    )
    pmids = np.full(documents, -1, dtype=np.int64)
    other: dict[int, str] = {}
    for term in leaf.lexicon("pmid"):
        ids, _ = _raw_postings(leaf, "pmid", term)
        text = term.decode("utf-8")
        number = _number(text)
        for docnum in ids.tolist():
            if number is None:
                other[docnum] = text
            else:
                pmids[docnum] = number
    offsets = np.zeros(len(terms) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(t) for t in terms], dtype=np.int64)
    arrays: dict[str, npt.NDArray[Any]] = {
        "terms": np.frombuffer(b"".join(terms), dtype=np.uint8),
        "term_offsets": offsets,
        "indptr": np.asarray(indptr, dtype=np.int64),
        "docs": np.concatenate(docs) if docs else np.zeros(0, np.uint32),
        "weights": np.concatenate(weights) if weights else np.zeros(0, np.float32),
        "lengths": lengths,
        "pmids": pmids,
    }
    meta = {
        "format": FORMAT,
        "segment": segment,
        "documents": documents,
        "field_length": int(leaf.segment()._fieldlengths.get(FIELD, 0)),
        "other_pmids": {str(k): v for k, v in other.items()},
    }
    root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{segment}{_PARTIAL}", dir=root))
    for name, array in arrays.items():
        np.save(scratch / f"{name}.npy", array)
    (scratch / _META).write_text(json.dumps(meta), "utf-8")
    try:
        scratch.rename(target)
    except OSError:
        # another process compiled the same segment meanwhile; its copy is identical
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def _number(pmid: str) -> int | None:
    """Return a PMID as a number when it is one, written canonically (no sign, no leading 0)."""
    if pmid.isascii() and pmid.isdigit() and len(pmid) < 19 and (pmid == "0" or pmid[0] != "0"):
        return int(pmid)
    return None


def _raw_postings(
    leaf: Any, field: str, term: bytes
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.float32]]:
    """Return a term's postings in one segment, deleted documents included (as Whoosh counts)."""
    matcher = leaf._terms.matcher(field, term, leaf.schema[field].format)
    ids: list[npt.NDArray[np.uint32]] = []
    values: list[npt.NDArray[np.float32]] = []
    if hasattr(matcher, "_read_ids"):  # postings on disk, block by block
        while matcher.is_active():
            matcher._read_ids()
            matcher._read_weights()
            ids.append(np.asarray(matcher._ids, dtype=np.uint32))
            values.append(np.asarray(matcher._weights, dtype=np.float32))
            matcher._next_block()
    else:  # postings inlined in the term's entry
        one_ids, one_values = [], []
        while matcher.is_active():
            one_ids.append(matcher.id())
            one_values.append(matcher.weight())
            matcher.next()
        ids.append(np.asarray(one_ids, dtype=np.uint32))
        values.append(np.asarray(one_values, dtype=np.float32))
    return np.concatenate(ids), np.concatenate(values)


def prune(index_dir: Path, segments: Iterable[str]) -> int:
    """Delete the copies of segments that are gone from the index; return how many.

    A copy is kept while its segment is in ``segments`` or its files are still in the index
    directory (a newer commit than the caller's view may have written it); a scratch folder
    is deleted only once its segment is gone too (another process may be writing it).
    """
    root = compiled_dir(index_dir)
    if not root.is_dir():
        return 0
    keep = set(segments)
    removed = 0
    for folder in root.iterdir():
        segment = folder.name.lstrip(".").split(_PARTIAL)[0]
        if segment in keep or any(index_dir.glob(f"{segment}.*")):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    _forget_others(index_dir, keep)
    return removed


_CACHE: dict[tuple[str, str], SegmentPostings] = {}
_DELETED: dict[tuple[str, str, int], npt.NDArray[np.int64]] = {}
_LOCK = threading.Lock()


def has_copy(index_dir: Path, segment: str) -> bool:
    """Return whether a segment's compiled copy is on disk (whatever this process cached)."""
    return (compiled_dir(index_dir) / segment / _META).is_file()


def load_segment(index_dir: Path, segment: str) -> SegmentPostings | None:
    """Return the compiled copy of a segment (cached per process), or ``None`` if it has none."""
    key = (str(index_dir), segment)
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is not None:
        return cached
    folder = compiled_dir(index_dir) / segment
    try:
        meta = json.loads((folder / _META).read_text("utf-8"))
        if meta.get("format") != FORMAT:
            return None
        arrays = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in _ARRAYS}
    except (OSError, ValueError):
        return None
    loaded = SegmentPostings(
        segment=segment,
        documents=int(meta["documents"]),
        field_length=int(meta["field_length"]),
        terms=bytes(arrays["terms"]),
        term_offsets=arrays["term_offsets"],
        indptr=arrays["indptr"],
        docs=arrays["docs"],
        weights=arrays["weights"],
        lengths=arrays["lengths"],
        pmids=arrays["pmids"],
        other_pmids={int(k): str(v) for k, v in meta["other_pmids"].items()},
    )
    with _LOCK:
        _CACHE[key] = loaded
    return loaded


def _forget_others(index_dir: Path, segments: set[str]) -> None:
    """Drop cached copies and deletion lists of this index's segments not in ``segments``."""
    with _LOCK:
        for key in [k for k in _CACHE if k[0] == str(index_dir) and k[1] not in segments]:
            del _CACHE[key]
        for gone in [k for k in _DELETED if k[0] == str(index_dir) and k[1] not in segments]:
            del _DELETED[gone]


def _segments(index_dir: Path, reader: Any) -> list[tuple[Any, int, SegmentPostings]] | None:
    """Pair every segment of an open reader with its copy; ``None`` if one has no copy."""
    paired = []
    loaded = False
    for leaf, offset in reader.leaf_readers():
        if leaf.doc_count_all() == 0:
            continue
        segment = leaf.segment().segment_id()
        loaded = loaded or (str(index_dir), segment) not in _CACHE
        postings = load_segment(index_dir, segment)
        if postings is None or postings.documents != leaf.doc_count_all():
            return None
        paired.append((leaf, offset, postings))
    if loaded:  # the index changed: let go of the copies of segments it no longer has
        _forget_others(index_dir, {postings.segment for _, _, postings in paired})
    return paired


def _deleted(index_dir: Path, leaf: Any, segment: str) -> npt.NDArray[np.int64]:
    """Return the deleted document numbers of a segment as the open reader sees them."""
    if not leaf.has_deletions():
        return np.zeros(0, dtype=np.int64)
    count = int(leaf.segment().deleted_count())
    key = (str(index_dir), segment, count)
    with _LOCK:
        cached = _DELETED.get(key)
    if cached is None:
        cached = np.fromiter(sorted(leaf.deleted_docs_set), dtype=np.int64)
        with _LOCK:
            for older in [k for k in _DELETED if k[:2] == key[:2]]:
                del _DELETED[older]  # a segment's deletions only grow: older lists are stale
            _DELETED[key] = cached
    return cached


def search(
    index_dir: Path,
    reader: Any,
    terms: Sequence[str | tuple[str, float]],
    k: int,
    *,
    b: float,
    k1: float,
) -> list[tuple[int, float]] | None:
    """Score an OR of ``text`` terms with BM25 (Lucene idf) exactly as the Whoosh search does.

    Args:
        index_dir: the index directory.
        reader: the open Whoosh reader of the searcher (its segments and deletions count).
        terms: the analysed terms, each alone or with its boost (a factor of its score, as
            ``term^0.4`` in Whoosh); a term given twice counts twice, as in Whoosh's OR.
        k: the number of hits wanted.
        b: BM25's length normalisation.
        k1: BM25's term-frequency saturation.

    Returns:
        Up to ``k`` (index document number, score) pairs, best first, ties by document number;
        ``None`` when a segment has no compiled copy (the caller searches with Whoosh).
    """
    segments = _segments(index_dir, reader)
    if segments is None:
        return None
    pairs = [(t, 1.0) if isinstance(t, str) else t for t in terms]
    keys = [term.encode("utf-8") for term, _ in pairs]
    boosts = [boost for _, boost in pairs]
    ranges = [[postings.find(key) for key in keys] for _, _, postings in segments]
    total = sum(postings.documents for _, _, postings in segments)
    length = sum(postings.field_length for _, _, postings in segments)
    average = (length / (total or 1)) or 1.0
    frequencies = [sum(hi - lo for lo, hi in column) for column in zip(*ranges, strict=True)]
    idfs = [
        boost * math.log(1 + (total - df + 0.5) / (df + 0.5))
        for df, boost in zip(frequencies, boosts, strict=True)
    ]
    found_docs: list[npt.NDArray[np.int64]] = []
    found_scores: list[npt.NDArray[np.float64]] = []
    for (leaf, offset, postings), spans in zip(segments, ranges, strict=True):
        docs_parts: list[npt.NDArray[np.uint32]] = []
        score_parts: list[npt.NDArray[np.float64]] = []
        for (lo, hi), idf in zip(spans, idfs, strict=True):
            if lo == hi:
                continue
            docs = postings.docs[lo:hi]
            tf = postings.weights[lo:hi].astype(np.float64)
            norm = k1 * ((1 - b) + b * postings.lengths[docs].astype(np.float64) / average)
            docs_parts.append(docs)
            score_parts.append(idf * (tf * (k1 + 1)) / (tf + norm))
        if not docs_parts:
            continue
        # one pass sums every term's contribution per document (terms in query order)
        scores = np.bincount(
            np.concatenate(docs_parts),
            weights=np.concatenate(score_parts),
            minlength=postings.documents,
        )
        scores[_deleted(index_dir, leaf, postings.segment)] = 0.0
        hits = np.flatnonzero(scores > 0)
        if len(hits) > k:
            # every document scoring at least the k-th best score (so ties are all kept)
            kth = np.partition(scores[hits], len(hits) - k)[len(hits) - k]
            hits = hits[scores[hits] >= kth]
        found_docs.append(hits.astype(np.int64) + offset)
        found_scores.append(scores[hits].astype(np.float64))
    if not found_docs:
        return []
    docs_all = np.concatenate(found_docs)
    scores_all = np.concatenate(found_scores)
    order = np.lexsort((docs_all, -scores_all))[:k]
    return [(int(docs_all[i]), float(scores_all[i])) for i in order]


def live_pmids(index_dir: Path, reader: Any) -> tuple[npt.NDArray[np.int64], set[str]] | None:
    """Return the PMIDs of the index's undeleted documents (numeric sorted, and the others).

    ``None`` when a segment has no compiled copy (the caller asks Whoosh per PMID instead).
    """
    segments = _segments(index_dir, reader)
    if segments is None:
        return None
    numeric: list[npt.NDArray[np.int64]] = []
    other: set[str] = set()
    for leaf, _, postings in segments:
        live = np.ones(postings.documents, dtype=bool)
        live[_deleted(index_dir, leaf, postings.segment)] = False
        values = postings.pmids[live]
        numeric.append(values[values >= 0])
        other.update(p for n, p in postings.other_pmids.items() if live[n])
    merged = np.unique(np.concatenate(numeric)) if numeric else np.zeros(0, np.int64)
    return merged, other


class PmidSet:
    """Membership of PMIDs in an index: its live PMIDs when a build starts."""

    def __init__(self, numeric: npt.NDArray[np.int64], other: set[str]) -> None:
        self._numeric = numeric
        self._other = other

    def __contains__(self, pmid: object) -> bool:
        if not isinstance(pmid, str):
            return False
        number = _number(pmid)
        if number is None:
            return pmid in self._other
        at = int(np.searchsorted(self._numeric, number))
        return at < len(self._numeric) and int(self._numeric[at]) == number

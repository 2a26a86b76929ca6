"""Dense document vectors next to the Whoosh index, and their fusion with BM25 (hybrid retrieval).

``qabench index embed`` encodes every indexed article (title and abstract) with the packaged
MiniLM model and stores the normalised vectors under ``<index_dir>/vectors/`` in chunks: each
chunk is ``NNNNNN.npy`` (float16, one row per article) with ``NNNNNN.ids`` (its PMIDs, one per
line), written to a scratch name and renamed, so an interrupted run loses at most the chunk it
was writing and the next run embeds only the articles still missing (resumable). An article
replaced in the index after it was embedded keeps its old vector until ``--rebuild``.

At query time only the question is encoded; ``fuse`` re-ranks the BM25 candidates by
``(1 - w) * bm25 / best_bm25 + w * max(0, cosine)`` (weight and depth measured on the BioASQ
2013 questions, docs/rag-retrieval.md). A candidate without a vector keeps its lexical part only.
Never downloads anything; the encoder comes from ``rag.models.dense``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from rag.corpus.article import Article
from rag.retrieval.retrievers import RankedDocument

VECTORS = "vectors"
CHUNK = 4096
Matrix = npt.NDArray[np.float32]


class TextEncoder(Protocol):
    """Encodes texts into normalised vectors (``rag.models.dense.DenseScorer``)."""

    def encode(self, texts: Sequence[str]) -> Matrix:
        """Return one L2-normalised row per text."""
        ...


@dataclass(frozen=True, slots=True)
class EmbedReport:
    """What one ``embed_articles`` call did."""

    embedded: int
    already: int
    vectors: int


def vectors_dir(index_dir: Path) -> Path:
    """Return where the document vectors of an index live."""
    return index_dir / VECTORS


def article_text(article: Article) -> str:
    """Return the text that is embedded for an article (title and abstract)."""
    return " ".join(f"{article.title} {article.abstract}".split())


class DocumentVectors:
    """The stored document vectors of one index, loaded into memory (read-only)."""

    def __init__(self, ids: dict[str, int], matrix: npt.NDArray[np.float16]) -> None:
        self._ids = ids
        self._matrix = matrix

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, pmid: object) -> bool:
        return pmid in self._ids

    def similarities(self, query: Matrix, pmids: Sequence[str]) -> list[float | None]:
        """Return the cosine of ``query`` (a normalised vector) with each PMID's vector."""
        rows = [self._ids.get(p) for p in pmids]
        known = [r for r in rows if r is not None]
        values = iter(
            (self._matrix[known].astype(np.float32) @ query.reshape(-1)).tolist() if known else []
        )
        return [float(next(values)) if r is not None else None for r in rows]


def load_vectors(index_dir: Path) -> DocumentVectors | None:
    """Load the document vectors of an index, or ``None`` when it has none."""
    order: list[str] = []
    parts: list[npt.NDArray[np.float16]] = []
    for matrix_file, pmids in _chunks(vectors_dir(index_dir)):
        matrix = np.load(matrix_file)
        if matrix.shape[0] != len(pmids):
            continue  # a damaged chunk: its articles are embedded again by the next run
        order.extend(pmids)
        parts.append(matrix)
    if not parts:
        return None
    # a PMID stored twice uses its last row
    return DocumentVectors({pmid: row for row, pmid in enumerate(order)}, np.concatenate(parts))


def embed_articles(
    index_dir: Path,
    articles: Iterable[Article],
    encoder: TextEncoder,
    *,
    rebuild: bool = False,
    batch: int = CHUNK,
    progress: Callable[[int], None] | None = None,
) -> EmbedReport:
    """Encode the articles that have no vector yet and store them in chunks.

    Args:
        index_dir: the index directory (vectors go to its ``vectors/`` folder).
        articles: every article of the index.
        encoder: the text encoder.
        rebuild: drop the existing vectors first (after articles were replaced).
        batch: articles per stored chunk.
        progress: called with the number of articles handled after every chunk.

    Returns:
        How many articles were embedded now, how many had vectors, how many vectors exist.
    """
    directory = vectors_dir(index_dir)
    directory.mkdir(parents=True, exist_ok=True)
    if rebuild:
        for path in directory.iterdir():
            path.unlink()
    done = set(_all_ids(directory))
    embedded = already = 0
    number = max((int(p.stem) for p, _ in _chunks(directory)), default=0)
    for group in _batches(articles, batch):
        fresh = [a for a in group if a.pmid not in done]
        already += len(group) - len(fresh)
        if fresh:
            number += 1
            _write_chunk(directory, number, fresh, encoder.encode([article_text(a) for a in fresh]))
            done.update(a.pmid for a in fresh)
            embedded += len(fresh)
        if progress is not None:
            progress(len(group))
    return EmbedReport(embedded, already, len(done))


def fuse(
    documents: Sequence[RankedDocument],
    similarities: Sequence[float | None],
    weight: float,
) -> tuple[RankedDocument, ...]:
    """Re-rank BM25 candidates by the weighted sum of normalised BM25 and dense cosine.

    >>> from rag.corpus.article import Article
    >>> docs = [RankedDocument(1, 10.0, Article("a", "", "")),
    ...         RankedDocument(2, 8.0, Article("b", "", ""))]
    >>> [(d.rank, d.pmid, round(d.score, 2)) for d in fuse(docs, [0.1, 0.9], 0.5)]
    [(1, 'b', 0.85), (2, 'a', 0.55)]
    """
    if not documents:
        return ()
    best = max(d.score for d in documents) or 1.0
    scored = [
        ((1 - weight) * d.score / best + weight * max(0.0, sim or 0.0), -d.rank, d)
        for d, sim in zip(documents, similarities, strict=True)
    ]
    scored.sort(key=lambda item: (-item[0], -item[1]))
    return tuple(
        replace(d, rank=rank, score=score) for rank, (score, _, d) in enumerate(scored, start=1)
    )


def _batches(articles: Iterable[Article], size: int) -> Iterator[list[Article]]:
    group: list[Article] = []
    for article in articles:
        group.append(article)
        if len(group) >= size:
            yield group
            group = []
    if group:
        yield group


def _chunks(directory: Path) -> list[tuple[Path, list[str]]]:
    if not directory.is_dir():
        return []
    found = []
    for matrix_file in sorted(directory.glob("[0-9][0-9][0-9][0-9][0-9][0-9].npy")):
        ids_file = matrix_file.with_suffix(".ids")
        if ids_file.is_file():
            found.append((matrix_file, ids_file.read_text("utf-8").split("\n")))
    return found


def _all_ids(directory: Path) -> Iterator[str]:
    for matrix_file, pmids in _chunks(directory):
        if np.load(matrix_file, mmap_mode="r").shape[0] == len(pmids):
            yield from pmids


def _write_chunk(directory: Path, number: int, articles: list[Article], matrix: Matrix) -> None:
    stem = f"{number:06d}"
    scratch = directory / f".{stem}.partial"
    with scratch.with_suffix(".npy").open("wb") as handle:
        np.save(handle, matrix.astype(np.float16))
    scratch.with_suffix(".ids").write_text("\n".join(a.pmid for a in articles), "utf-8")
    # ids first: a chunk counts once its matrix is in place, and then both files are
    os.replace(scratch.with_suffix(".ids"), directory / f"{stem}.ids")
    os.replace(scratch.with_suffix(".npy"), directory / f"{stem}.npy")


class Hybrid:
    """Dense fusion of the BM25 candidates with stored document vectors."""

    def __init__(
        self, vectors: DocumentVectors, encoder: TextEncoder, weight: float, depth: int
    ) -> None:
        self.vectors = vectors
        self.encoder = encoder
        self.weight = weight
        self.depth = depth

    def rerank(
        self, question: str, documents: Sequence[RankedDocument]
    ) -> tuple[tuple[RankedDocument, ...], str]:
        """Return the documents re-ranked by fusion, and a note on what was done."""
        head, rest = list(documents[: self.depth]), list(documents[self.depth :])
        if not head:
            return tuple(documents), ""
        query = self.encoder.encode([question])[0]
        sims = self.vectors.similarities(query, [d.pmid for d in head])
        missing = sum(s is None for s in sims)
        fused = fuse(head, sims, self.weight)
        tail = tuple(replace(d, rank=len(fused) + n) for n, d in enumerate(rest, start=1))
        note = f"BM25 + MiniLM fusion of the top {len(head)} (dense weight {self.weight:g})"
        if missing:
            note += f"; {missing} without a vector (run qabench index embed)"
        return fused + tail, note

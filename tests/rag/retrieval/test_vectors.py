"""Stored document vectors (resumable embedding) and their fusion with BM25 (hybrid retrieval).

The encoder is a small deterministic stand-in for the MiniLM model (a hashed bag of words), as
the style guide asks for large models; the real model goes through the same ``encode`` call.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rag.corpus.article import Article
from rag.models.generators import ExtractiveGenerator
from rag.pipeline import RagSystem
from rag.retrieval.index import LiteratureIndex, make_tokenizer, open_index
from rag.retrieval.retrievers import RankedDocument, WhooshRetriever
from rag.retrieval.vectors import (
    Hybrid,
    embed_articles,
    fuse,
    load_vectors,
    vectors_dir,
)
from rag.run import RagSettings
from tests.plugins.rag import CORPUS_SIZE, retriever_opener

TOKENIZE = make_tokenizer()


class HashingEncoder:
    """Bag of stemmed words hashed into 64 dimensions, L2-normalised."""

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += len(texts)
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in TOKENIZE(text):
                out[row, hashlib.sha256(term.encode()).digest()[0] % 64] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


def test_embedding_is_resumable_and_only_adds_what_is_missing(
    rag_writable_index: LiteratureIndex,
) -> None:
    directory = rag_writable_index.directory
    encoder = HashingEncoder()
    report = embed_articles(directory, rag_writable_index.articles(), encoder, batch=64)
    assert (report.embedded, report.already, report.vectors) == (CORPUS_SIZE, 0, CORPUS_SIZE)
    again = embed_articles(directory, rag_writable_index.articles(), encoder, batch=64)
    assert (again.embedded, again.already) == (0, CORPUS_SIZE)
    # an interrupted run: the last chunk never made it; only its articles are embedded again
    chunks = sorted(vectors_dir(directory).glob("*.npy"))
    assert len(chunks) == 4
    chunks[-1].unlink()
    resumed = embed_articles(directory, rag_writable_index.articles(), encoder, batch=64)
    assert resumed.embedded == CORPUS_SIZE - 3 * 64 and resumed.vectors == CORPUS_SIZE
    vectors = load_vectors(directory)
    assert vectors is not None and len(vectors) == CORPUS_SIZE
    rebuilt = embed_articles(directory, rag_writable_index.articles(), encoder, rebuild=True)
    assert rebuilt.embedded == CORPUS_SIZE


def test_fusion_reorders_by_meaning_and_keeps_the_lexical_part() -> None:
    docs = [
        Article("a", "", "aspirin"),
        Article("b", "", "aspirin infarction"),
    ]

    ranked = [RankedDocument(1, 9.0, docs[0]), RankedDocument(2, 8.0, docs[1])]
    assert [d.pmid for d in fuse(ranked, [0.0, 0.9], 0.7)] == ["b", "a"]
    assert [d.pmid for d in fuse(ranked, [0.0, 0.9], 0.0)] == ["a", "b"]
    # a document without a vector keeps its BM25 share only
    assert [d.pmid for d in fuse(ranked, [None, 0.01], 0.7)] == ["a", "b"]


def test_a_run_with_hybrid_retrieval_says_so(tmp_path: Path, rag_index_dir: Path) -> None:
    directory = tmp_path / "index"
    shutil.copytree(rag_index_dir, directory)
    encoder = HashingEncoder()
    with open_index(directory) as index:
        embed_articles(directory, index.articles(), encoder)
    vectors = load_vectors(directory)
    assert vectors is not None
    hybrid = Hybrid(vectors, encoder, weight=0.7, depth=50)
    system = RagSystem(
        retriever_opener(directory), ExtractiveGenerator(), RagSettings(), hybrid=hybrid
    )
    run = system.ask("Does famotidine cause delirium in older adults?")
    retrieve = next(t for t in run.timings if t.stage == "retrieve")
    assert "BM25 + MiniLM fusion of the top" in retrieve.note
    assert run.documents[0].pmid == "1000005"
    assert dict(run.settings)["dense_fusion"] == "on"
    with open_index(directory) as index:
        plain = WhooshRetriever(index).search("famotidine delirium older adults")
    assert {d.pmid for d in plain.documents} == {d.pmid for d in run.documents}
    off = RagSystem(retriever_opener(directory), ExtractiveGenerator(), RagSettings())
    assert (
        "dense fusion off"
        in next(t for t in off.ask("famotidine?").timings if t.stage == "retrieve").note
    )

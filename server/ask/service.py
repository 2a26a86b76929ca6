"""``RagService``: the built-in RAG system wired from the configuration, for the CLI and the app.

It turns ``[rag]`` into a ``RagSystem`` per generator (a model loads once, on first use, and is
then shared), opens the literature index in ``Config.index_dir`` per run (the demo index in
``Config.demo_index_dir`` while there is no real one and the demo is on), reads the OpenAI API
key from the environment variable ``rag.openai_api_key_env`` names (the only place that does),
and writes runs to the rag graph. Nothing here is module-level state: the app keeps one service
on ``app.extensions["rag"]``; a CLI command builds its own.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

from pyoxigraph import NamedNode

from rag.errors import ModelUnavailableError
from rag.models.dense import DenseScorer
from rag.models.generators import (
    EXTRACTIVE,
    GENERATOR_NAMES,
    OPENAI_HTTP,
    ExtractiveGenerator,
    Generator,
    TransformersGenerator,
    local_model_missing,
)
from rag.models.model_files import LocalModelSettings
from rag.models.openai_http import OpenAIGenerator, OpenAISettings, check_settings
from rag.models.reader import YesNoReader, has_reader
from rag.pipeline import RagSystem
from rag.provenance import run_quads
from rag.retrieval.index import IndexPool, has_index
from rag.retrieval.retrievers import Retriever, WhooshRetriever
from rag.retrieval.vectors import DocumentVectors, Hybrid, load_vectors, vectors_dir
from rag.run import RagRun, RagSettings
from server.config import Config
from store.protocol import RdfStore
from vocab import iris

log = logging.getLogger(__name__)

# The local model's intra-op threads (the reference machine has 2 cores; see docs).
LOCAL_THREADS = 2


class UnknownGeneratorError(ValueError):
    """A generator name that is not one of ``GENERATOR_NAMES``."""


def rag_settings(config: Config) -> RagSettings:
    """Return the pipeline limits of a configuration."""
    rag = config.rag
    return RagSettings(
        top_k=rag.top_k,
        snippets=rag.snippets,
        max_question_chars=rag.max_question_chars,
        llm_documents=rag.llm_documents,
        llm_workers=rag.llm_workers,
        extract_tokens=rag.extract_tokens,
        answer_tokens=rag.answer_tokens,
        support_threshold=rag.support_threshold,
        snippet_document_weight=rag.snippet_document_weight,
        query_feedback=rag.query_feedback,
    )


class RagService:
    """Builds and caches the configured RAG systems; stores their runs."""

    def __init__(self, config: Config, *, environ: dict[str, str] | None = None) -> None:
        self.config = config
        self._environ = dict(os.environ if environ is None else environ)
        self._lock = threading.Lock()
        self._generators: dict[str, Generator] = {}
        self._dense: DenseScorer | None = None
        self._dense_error: str | None = None
        self._reader: YesNoReader | None = None
        self._reader_error: str | None = None
        # the index's document vectors, with the chunk files they were loaded from
        self._vectors: tuple[tuple[str, ...], DocumentVectors | None] | None = None
        # opened indexes kept between runs (opening one reads every segment's tables): the
        # real literature index, and the demo index while there is no real one
        self._indexes = IndexPool(config.index_dir)
        self._demo_indexes = IndexPool(config.demo_index_dir)

    @property
    def default_generator(self) -> str:
        """Return the configured generator name (``rag.generator``)."""
        return self.config.rag.generator

    def generator(self, name: str | None = None) -> Generator:
        """Return the named generator (default: the configured one), loading it once.

        Raises:
            UnknownGeneratorError: for a name that is not a generator.
            ModelUnavailableError: when its model or endpoint settings are missing.
        """
        name = name or self.default_generator
        if name not in GENERATOR_NAMES:
            raise UnknownGeneratorError(
                f"unknown generator {name!r}; expected one of: {', '.join(GENERATOR_NAMES)}"
            )
        with self._lock:
            if name not in self._generators:
                self._generators[name] = self._build(name)
            return self._generators[name]

    def unavailable(self, name: str) -> str | None:
        """Return why generator ``name`` cannot run on this server, or ``None`` if it can.

        Nothing is loaded or contacted: the local model's packages and files are looked up,
        the endpoint's settings checked.
        """
        if name == EXTRACTIVE:
            return None
        with self._lock:
            if name in self._generators:
                return None
        try:
            if name == OPENAI_HTTP:
                check_settings(self._openai_settings())
                return None
        except ModelUnavailableError as exc:
            return str(exc)
        return local_model_missing(self._local_settings())

    def _openai_settings(self) -> OpenAISettings:
        rag = self.config.rag
        key = self._environ.get(rag.openai_api_key_env, "") or None
        return OpenAISettings(
            rag.openai_base_url, rag.openai_model, key, rag.generator_timeout_seconds
        )

    def _local_settings(self) -> LocalModelSettings:
        rag = self.config.rag
        model_path = rag.model_path.strip()
        return LocalModelSettings(
            cache_dir=self.config.cache_dir,
            model_path=_resolve(self.config, model_path) if model_path else None,
            threads=LOCAL_THREADS,
            timeout_seconds=rag.generator_timeout_seconds,
        )

    def _build(self, name: str) -> Generator:
        if name == EXTRACTIVE:
            return ExtractiveGenerator()
        if name == OPENAI_HTTP:
            return OpenAIGenerator(self._openai_settings())
        return TransformersGenerator.load(self._local_settings())

    def _dense_scorer(self) -> DenseScorer | None:
        if not self.config.rag.dense_rerank:
            return None
        with self._lock:
            if self._dense is None:
                self._dense = DenseScorer.load()
            return self._dense

    def meaning(self) -> tuple[DenseScorer | None, str]:
        """Return the sentence model that weighs whether the evidence is close to the question
        in meaning, or ``None`` and why not (``rag.meaning_check`` off, or the model missing:
        the word rules then decide alone, and every run says so)."""
        if not self.config.rag.meaning_check:
            return None, "off (rag.meaning_check = false)"
        return self._loaded_scorer()

    def _loaded_scorer(self) -> tuple[DenseScorer | None, str]:
        """The MiniLM model, loaded once (its failure remembered, not retried per run)."""
        with self._lock:
            if self._dense is None and self._dense_error is None:
                try:
                    self._dense = DenseScorer.load()
                except ModelUnavailableError as exc:
                    self._dense_error = str(exc)
            if self._dense is None:
                return None, f"off: {self._dense_error}"
            return self._dense, "on"

    def reader(self) -> tuple[YesNoReader | None, str]:
        """Return the yes/no reader model, or ``None`` and why not (``rag.reader_check`` off,
        none trained in ``rag.yesno_reader``, or the libraries missing: the word rules then
        decide yes/no alone, and every yes/no run says so). Loaded once per service."""
        if not self.config.rag.reader_check:
            return None, "off (rag.reader_check = false)"
        with self._lock:
            if self._reader is None and self._reader_error is None:
                folder = self.config.yesno_reader_dir
                try:
                    self._reader = YesNoReader.load(folder)
                except ModelUnavailableError as exc:
                    # runs are shown to anyone: the reason names no path of this machine
                    log.warning("yes/no reader not used: %s", exc)
                    self._reader_error = (
                        "none trained in rag.yesno_reader (make one with: qabench train-reader)"
                        if not has_reader(folder)
                        else "it did not load (the server log says why)"
                    )
            if self._reader is None:
                return None, f"off: {self._reader_error}"
            return self._reader, "on"

    def hybrid(self) -> tuple[Hybrid | None, str]:
        """Return the dense fusion stage, or ``None`` and why it is off.

        The vectors are reloaded when ``qabench index embed`` has written new chunks; the
        MiniLM model loads once. Without vectors or without the model, fusion is off (the
        run says why) rather than failing the question.
        """
        rag = self.config.rag
        if not rag.dense_fusion:
            return None, "off (rag.dense_fusion = false)"
        folder = vectors_dir(self.config.index_dir)
        signature = tuple(sorted(p.name for p in folder.glob("*.npy"))) if folder.is_dir() else ()
        with self._lock:
            if self._vectors is None or self._vectors[0] != signature:
                self._vectors = (signature, load_vectors(self.config.index_dir))
            vectors = self._vectors[1]
            if vectors is None:
                return None, "off: the index has no document vectors (run qabench index embed)"
        dense, why = self._loaded_scorer()
        if dense is None:
            return None, why
        return Hybrid(vectors, dense, rag.dense_weight, rag.dense_depth), "on"

    def index_pool(self) -> IndexPool:
        """Return the pool of the index that answers: the real literature index when there is
        one; otherwise, with the demo on (``server.demo``), the demo index, which says so."""
        demo = self.config.server.demo and has_index(self.config.demo_index_dir)
        if demo and not has_index(self.config.index_dir):
            return self._demo_indexes
        return self._indexes

    @contextlib.contextmanager
    def _retriever(self) -> Iterator[Retriever]:
        with self.index_pool().checkout() as index:
            yield WhooshRetriever(index)

    def open_retriever(self) -> AbstractContextManager[Retriever]:
        """Open the literature index for one run (an open index is not shared by threads)."""
        return self._retriever()

    def system(self, generator: str | None = None) -> RagSystem:
        """Return a RAG system with the named generator (default: the configured one).

        Raises:
            UnknownGeneratorError: for an unknown generator name.
            ModelUnavailableError: when the generator's model cannot be loaded.
        """
        hybrid, why = self.hybrid()
        meaning, meaning_off = self.meaning()
        reader, reader_off = self.reader()
        return RagSystem(
            self.open_retriever,
            self.generator(generator),
            rag_settings(self.config),
            dense=self._dense_scorer(),
            hybrid=hybrid,
            hybrid_off=why,
            meaning=meaning,
            meaning_off=meaning_off,
            reader=reader,
            reader_off=reader_off,
        )

    def run_iri(self, run: RagRun) -> NamedNode:
        """Return the IRI of a run."""
        return iris.rag_run_iri(self.config.base_iri, run.run_id)

    def store_run(self, store: RdfStore, run: RagRun) -> NamedNode:
        """Write a run's provenance into the rag graph (one transaction) and return its IRI."""
        store.add(run_quads(self.config.base_iri, run))
        return self.run_iri(run)

    def close(self) -> None:
        """Release generator resources (HTTP connection pools)."""
        with self._lock:
            for generator in self._generators.values():
                if isinstance(generator, OpenAIGenerator):
                    generator.close()
            self._generators.clear()
        self._indexes.close()
        self._demo_indexes.close()


def _resolve(config: Config, path: str) -> Path:
    # rag.model_path is a plain string (it may be empty); relative to the config file like paths
    candidate = Path(path).expanduser()
    if not candidate.is_absolute() and config.source is not None:
        candidate = config.source.parent / candidate
    return candidate

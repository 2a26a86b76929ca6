"""Fixtures for RAG answering: pipelines over the 200-article index, apps with that index.

``make_rag_system(generator)`` builds a ``RagSystem`` over the shared fixture index (read-only);
``rag_config`` is a server configuration whose ``rag.index_dir`` is that index; ``rag_app`` and
``rag_client`` are the Flask app and test client over it; ``rag_server_config`` makes variants
(e.g. ``rag.openai_base_url`` pointing at an LLM stub).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rag.models.generators import Generator
from rag.pipeline import RagSystem, Stages
from rag.retrieval.index import open_index
from rag.retrieval.retrievers import Retriever, WhooshRetriever
from rag.run import RagSettings
from server.app import create_app
from server.config import Config, config_from_dict
from tests import REPO

# Plugins must not import each other (pytest rewrites them in alphabetical order).
BASE = "http://qabench.test"


def retriever_opener(index_dir: Path) -> Callable[[], contextlib.AbstractContextManager[Retriever]]:
    """Return a function that opens the index at ``index_dir`` for one run."""

    @contextlib.contextmanager
    def opener() -> Iterator[Retriever]:
        with open_index(index_dir) as index:
            yield WhooshRetriever(index)

    return opener


@pytest.fixture
def make_rag_system(rag_index_dir: Path) -> Callable[..., RagSystem]:
    """Return ``make(generator, settings=None, stages=None)`` over the fixture index."""

    def make(
        generator: Generator, settings: RagSettings | None = None, stages: Stages | None = None
    ) -> RagSystem:
        return RagSystem(
            retriever_opener(rag_index_dir), generator, settings or RagSettings(), stages=stages
        )

    return make


def rag_server_config(tmp: Path, index_dir: Path, **rag: Any) -> Config:
    """Return a server configuration over ``index_dir`` with extra ``[rag]`` keys."""
    return config_from_dict(
        {
            "server": {"base_iri": BASE, "demo": False, "query_workers": 1},
            "store": {"data_dir": str(tmp / "data")},
            "rag": {"index_dir": str(index_dir), **rag},
        },
        source=REPO / "config.toml",
    )


@pytest.fixture
def rag_config(tmp_path: Path, rag_index_dir: Path) -> Config:
    """Return a configuration whose literature index is the 200-article fixture index."""
    return rag_server_config(tmp_path, rag_index_dir)


@pytest.fixture
def rag_app(rag_config: Config) -> Iterator[Any]:
    """Return the app over an empty store and the fixture index."""
    application = create_app(rag_config)
    yield application
    application.extensions["rag"].close()
    application.extensions["services"].close()


@pytest.fixture
def rag_client(rag_app: Any) -> Any:
    """Return the Flask test client of ``rag_app``."""
    return rag_app.test_client()

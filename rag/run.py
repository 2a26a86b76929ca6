"""The values a RAG run produces: settings, stage timings, retrieved documents, the run itself.

Plain frozen data shared by ``rag.pipeline`` (which makes runs), ``rag.provenance`` (which maps
them to RDF) and the server (which renders them). No behaviour beyond small derived values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import datetime

from rag.answering.citations import CitedAnswer
from rag.answering.exact import ExactAnswer
from rag.answering.snippets import Snippet
from rag.models.generators import GeneratorInfo
from rag.retrieval.index import IndexLabel


@dataclass(frozen=True, slots=True)
class RagSettings:
    """Limits of a run (from ``[rag]`` in the configuration)."""

    top_k: int = 50
    snippets: int = 10
    max_question_chars: int = 2000
    # documents whose snippets a language model extracts (the rest are not read by it)
    llm_documents: int = 50
    expansion_shots: int = 3
    # language-model calls at once, and token budgets of one extraction and one answer call
    llm_workers: int = 10
    extract_tokens: int = 256
    answer_tokens: int = 256
    # a cited sentence is supported when its support score reaches this
    support_threshold: float = 0.25
    # share of a sentence's document score in its extractive snippet score
    snippet_document_weight: float = 0.7
    # without a model's query: expand the question's words by pseudo-relevance feedback (RM3)
    query_feedback: bool = False

    def as_pairs(self) -> tuple[tuple[str, str], ...]:
        """Return the settings as (name, value) strings for provenance."""
        return tuple((f.name, str(getattr(self, f.name))) for f in fields(self))


@dataclass(frozen=True, slots=True)
class StageTiming:
    """How long a stage took and what it did, in a few words."""

    stage: str
    millis: float
    note: str = ""


@dataclass(frozen=True, slots=True)
class RetrievedDocument:
    """A retrieved article as a run reports it."""

    rank: int
    pmid: str
    score: float
    title: str = ""


@dataclass(frozen=True, slots=True)
class RagRun:
    """Everything one run of the pipeline did."""

    run_id: str
    question: str
    language: str
    question_type: str
    expanded_query: str
    query_edited: bool
    query_run: str
    fallback: str  # the retrieval fallback step: none | broadened | content-words
    documents: tuple[RetrievedDocument, ...]
    snippets: tuple[Snippet, ...]
    short_answer: str
    cited_answer: CitedAnswer
    exact_answer: ExactAnswer
    generator: GeneratorInfo
    settings: tuple[tuple[str, str], ...]
    timings: tuple[StageTiming, ...]
    warnings: tuple[str, ...]
    started: datetime
    finished: datetime
    # False when the evidence does not address the question; ``abstention`` then says why
    answered: bool = True
    abstention: str = ""
    index: IndexLabel | None = None

    @property
    def total_millis(self) -> float:
        """Return the summed stage time."""
        return sum(t.millis for t in self.timings)


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """A stage started or finished; or (``part``) the model wrote more of an answer."""

    stage: str
    state: str  # started | finished | writing
    millis: float | None = None
    detail: str = ""
    part: str = ""
    text: str = ""


Progress = Callable[[ProgressEvent], None]

"""The stages of the answering pipeline, replaceable one by one, and how a run times them.

``Stages`` holds one callable per stage except retrieval (``default_stages`` picks the model
or extractive variant from the generator; tests and benchmarks put their own in).
``StageClock`` times each stage of a run, records a note with it and reports it to the run's
``Progress``; the ``*_note`` functions write those notes. ``check_question`` bounds what a
run accepts, and ``new_run_id`` names a run. ``rag.pipeline.RagSystem`` runs the stages.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from rag.answering.answers import Answers, PartCallback, compose_answers
from rag.answering.extraction import StageOutput, llm_rerank, llm_snippets, score_rerank
from rag.answering.snippets import SimilarityScorer, Snippet, extract_snippets
from rag.answering.yesno import NoReader
from rag.errors import QuestionError
from rag.models.generators import Generator
from rag.retrieval.expansion import Expansion, expand_query
from rag.retrieval.retrievers import RankedDocument
from rag.run import Progress, ProgressEvent, RagSettings, StageTiming

T = TypeVar("T")
STAGES = ("expand", "retrieve", "extract", "rerank", "answer")
Tokenize = Callable[[str], list[str]]


@dataclass(frozen=True, slots=True)
class Stages:
    """The replaceable stages (retrieval aside)."""

    expand: Callable[[str], Expansion]
    extract: Callable[[str, Sequence[RankedDocument], Tokenize], StageOutput]
    rerank: Callable[[str, Sequence[Snippet], int], StageOutput]
    answer: Callable[[str, str, Sequence[Snippet], PartCallback | None], Answers]


def default_stages(
    generator: Generator,
    settings: RagSettings,
    *,
    dense: SimilarityScorer | None = None,
    meaning: SimilarityScorer | None = None,
    reader: NoReader | None = None,
) -> Stages:
    """Return the stages for ``generator``: model stages with a model, extractive ones without
    (``dense`` reranks snippets; ``meaning`` helps choose the answers' sentences; ``reader``
    reads yes/no questions beside the word rules)."""

    def extractive(question: str, docs: Sequence[RankedDocument], tok: Tokenize) -> StageOutput:
        found = extract_snippets(
            question,
            docs,
            tokenize=tok,
            limit=settings.snippets * 2,
            dense=dense,
            document_weight=settings.snippet_document_weight,
        )
        return StageOutput(found)

    def extract(question: str, docs: Sequence[RankedDocument], tok: Tokenize) -> StageOutput:
        if not generator.uses_llm or not docs:
            return extractive(question, docs, tok)
        found = llm_snippets(
            question,
            docs[: settings.llm_documents],
            generator,
            tokenize=tok,
            workers=settings.llm_workers,
            max_tokens=settings.extract_tokens,
        )
        if found.snippets:
            return found
        note = (
            "snippet extraction: the model gave no verbatim snippet; used the extractive snippets"
        )
        return StageOutput(extractive(question, docs, tok).snippets, (*found.warnings, note))

    def rerank(question: str, snippets: Sequence[Snippet], limit: int) -> StageOutput:
        if generator.uses_llm:
            return llm_rerank(question, snippets, generator, limit)
        return score_rerank(snippets, limit)

    def answer(
        question: str, kind: str, snippets: Sequence[Snippet], on_text: PartCallback | None
    ) -> Answers:
        return compose_answers(
            question,
            kind,
            snippets,
            generator,
            on_text=on_text,
            max_tokens=settings.answer_tokens,
            meaning=meaning,
            reader=reader,
        )

    return Stages(
        expand=lambda q: expand_query(q, generator, shots=settings.expansion_shots),
        extract=extract,
        rerank=rerank,
        answer=answer,
    )


def check_question(question: str, max_chars: int) -> str:
    """Return the question stripped, if it is acceptable.

    Raises:
        QuestionError: when it is empty or longer than ``max_chars``.
    """
    text = question.strip()
    if not text:
        raise QuestionError("the question is empty; type a question")
    if len(text) > max_chars:
        raise QuestionError(
            f"the question has {len(text)} characters; at most {max_chars} are accepted "
            "(rag.max_question_chars)"
        )
    return text


def new_run_id(now: datetime) -> str:
    """Return a fresh run id: the UTC time and six random hex digits."""
    return f"{now:%Y%m%d%H%M%S}-{secrets.token_hex(3)}"


class StageClock:
    """Times the stages of one run and reports them to its ``Progress`` (if any)."""

    def __init__(self, progress: Progress | None) -> None:
        self.timings: list[StageTiming] = []
        self._progress = progress

    def emit(self, event: ProgressEvent) -> None:
        """Send ``event`` to the run's progress."""
        if self._progress is not None:
            self._progress(event)

    def run(self, stage: str, work: Callable[[], T], note: Callable[[T], str]) -> T:
        """Run ``stage`` (``work``), record its time and ``note``; return its value."""
        self.emit(ProgressEvent(stage, "started"))
        started = time.perf_counter()
        value = work()
        millis = (time.perf_counter() - started) * 1000.0
        self.timings.append(StageTiming(stage, millis, note(value)))
        self.emit(ProgressEvent(stage, "finished", millis, note(value)))
        return value

    def skip(self, stage: str, note: str) -> None:
        """Record ``stage`` as skipped, for the reason ``note``."""
        self.timings.append(StageTiming(stage, 0.0, note))
        self.emit(ProgressEvent(stage, "finished", 0.0, note))


def answer_note(answers: Answers) -> str:
    """Return the answer stage's note: its sentences, and how many citations were supported."""
    sentences = answers.cited.sentences
    scored = [s for s in sentences if s.supported is not None]
    note = count(len(sentences), "answer sentence")
    if scored:
        good = sum(bool(s.supported) for s in scored)
        note += f"; citations checked: {good} of {len(scored)} supported"
    return note


def expansion_note(expansion: Expansion) -> str:
    """Return the expand stage's note: where the query came from."""
    return {
        "identity": "the question's words",
        "model": "the model's query",
        "feedback": "the question's words and words of its best hits (pseudo-relevance feedback)",
    }.get(expansion.source, "fallback to the question's words")


def fallback_note(fallback: str) -> str:
    """Return what the retrieve stage's note adds for a fallback query ('' for none)."""
    return "" if fallback == "none" else f" (fallback: {fallback})"


def count(n: int, noun: str) -> str:
    """Return ``n`` and ``noun``, plural unless ``n`` is 1.

    >>> count(1, "snippet"), count(3, "snippet")
    ('1 snippet', '3 snippets')
    """
    return f"{n} {noun}{'' if n == 1 else 's'}"

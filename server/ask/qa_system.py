"""The RAG system as a built-in system of the experiments runner (``evaluators`` never imports rag).

``RagQASystem`` satisfies ``evaluators.systems.protocol.QASystem`` structurally: it asks the
pipeline the question (with the BioASQ type when the gold question has one) and returns a
``Question`` with QALD answers (``server.ask.payloads.answer_terms``) and the BioASQ parts
(documents, snippets, exact and ideal answer), so both QALD-style and BioASQ scoring can read it.
``register_rag`` adds it to a registry as ``rag`` (the configured generator) and, when that is not
the extractive one, also as ``rag-extractive``.
"""

from __future__ import annotations

from dataclasses import replace

from pyoxigraph import Literal, NamedNode

from evaluators.model import AnswerSet, BioasqGold, Question, QuestionText, Snippet
from evaluators.systems.protocol import in_gold_sections
from evaluators.systems.registry import SystemRegistry, builtin_registry
from rag.answering.snippets import Snippet as RagSnippet
from rag.answering.snippets import document_url
from rag.models.generators import EXTRACTIVE
from rag.run import RagRun
from server.ask.payloads import BIOASQ_LIMIT, answer_terms
from server.ask.service import RagService
from store.protocol import RdfStore

RAG_SYSTEM = "rag"
RAG_EXTRACTIVE_SYSTEM = "rag-extractive"


def answer_question(run: RagRun, question_id: str) -> Question:
    """Return a run as the system answer to question ``question_id``."""
    values, boolean = answer_terms(run)
    if boolean is not None:
        answer = AnswerSet(boolean=boolean)
    else:
        answer = AnswerSet(
            values=tuple(NamedNode(v.value) if v.is_iri else Literal(v.value) for v in values),
            variables=("answer",),
        )
    exact = run.exact_answer
    bioasq = BioasqGold(
        question_type=run.question_type,
        documents=tuple(document_url(d.pmid) for d in run.documents[:BIOASQ_LIMIT]),
        snippets=tuple(
            Snippet(
                s.document, s.text, s.begin_section, s.end_section, s.offset_begin, s.offset_end
            )
            for s in run.snippets[:BIOASQ_LIMIT]
        ),
        yesno=exact.yesno,
        entities=exact.entities,
        ideal_answers=(run.short_answer,) if run.short_answer else (),
    )
    return Question(
        id=question_id,
        texts=(QuestionText(run.language, run.question),),
        answers=(answer,),
        bioasq=bioasq,
    )


def given_snippets(question: Question) -> tuple[RagSnippet, ...]:
    """Return a gold question's snippets as the pipeline's snippets (phase B input)."""
    if question.bioasq is None:
        return ()
    out = []
    for sn in question.bioasq.snippets:
        pmid = sn.document.rstrip("/").rsplit("/", 1)[-1]
        out.append(
            RagSnippet(
                sn.document,
                sn.text,
                sn.begin_section,
                sn.end_section,
                sn.offset_begin,
                sn.offset_end,
                pmid,
                0,
                0.0,
                0.0,
            )
        )
    return tuple(out)


def phase_b_answer(answer: Question) -> Question:
    """Keep only a phase B response's parts: exact and ideal answers (no documents, snippets).

    Echoing the given snippets back would score them against themselves.
    """
    if answer.bioasq is None:
        return answer
    return replace(answer, bioasq=replace(answer.bioasq, documents=(), snippets=()))


class RagQASystem:
    """The RAG pipeline behind the experiments runner's ``QASystem`` role."""

    def __init__(
        self,
        service: RagService,
        generator: str | None = None,
        store: RdfStore | None = None,
        *,
        phase: str = "a",
    ) -> None:
        self._service = service
        self._generator = generator
        self._store = store
        # "b": answer from the gold question's own snippets (BioASQ phase B)
        self._phase = phase

    def answer(self, question: Question, language: str) -> Question:
        """Answer a gold question (any error counts as this question's failure).

        Raises:
            QuestionError: when the question has no text in ``language``.
            RagError: when the index or the model is unavailable.
        """
        text = question.text(language) or ""
        kind = question.bioasq.question_type if question.bioasq else None
        if kind is None and question.choices is not None:
            # options yes/no (and maybe, as in PubMedQA): a yes/no question, whatever its words
            options = {t.strip().casefold() for _, t in question.choices.options}
            kind = "yesno" if options and options <= {"yes", "no", "maybe"} else None
        system = self._service.system(self._generator)
        if self._phase == "b":
            given = given_snippets(question)
            run = system.answer_given(text, given, kind=kind, language=language)
            if self._store is not None:
                self._service.store_run(self._store, run)
            return phase_b_answer(answer_question(run, question.id))
        run = system.ask(text, kind=kind, language=language)
        if self._store is not None:
            self._service.store_run(self._store, run)
        return in_gold_sections(answer_question(run, question.id), question)


def register_rag(
    registry: SystemRegistry, service: RagService, store: RdfStore | None = None
) -> None:
    """Add ``rag`` (configured generator) and ``rag-extractive`` to ``registry``.

    Args:
        registry: the experiments runner's registry.
        service: the RAG service (index, generators).
        store: where to keep each answer's provenance (None: not kept).
    """
    configured = service.default_generator
    registry.register(
        RAG_SYSTEM,
        lambda: RagQASystem(service, None, store),
        description=f"qabench's built-in RAG system (generator: {configured}).",
        concurrency=1 if configured != EXTRACTIVE else 2,
    )
    if configured != EXTRACTIVE:
        registry.register(
            RAG_EXTRACTIVE_SYSTEM,
            lambda: RagQASystem(service, EXTRACTIVE, store),
            description="qabench's built-in RAG system with the extractive generator.",
            concurrency=2,
        )


def system_registry(service: RagService, store: RdfStore | None = None) -> SystemRegistry:
    """Return the registry of every built-in system: ``gold`` plus the RAG system."""
    registry = builtin_registry()
    register_rag(registry, service, store)
    return registry

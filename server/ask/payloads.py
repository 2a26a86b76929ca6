"""The JSON shapes of a RAG run: ``qabench ask --json``/the ask API, QALD-JSON and BioASQ JSON.

* ``run_json``: everything a run did (question, queries, documents with scores, snippets with
  sections and offsets, short, cited and exact answers, timings, generator, warnings, run IRI).
* ``qald_json``: the GERBIL QA web-service reply: one question whose answer is a boolean (yes/no
  questions), the exact-answer entities (factoid, list) or the short answer (summary) as
  literals; when the index holds knowledge-base abstracts (document ids are IRIs), factoid and
  list answers are the IRIs of the best documents instead.
* ``bioasq_json``: a BioASQ task-b response with one question (documents, snippets, exact and
  ideal answer).

``answer_terms`` is the one place deciding what the answer values are; the built-in experiments
system reuses it. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.answering.snippets import bioasq_snippet, document_url
from rag.answering.support import support_rate
from rag.run import RagRun

# BioASQ responses list at most ten documents and ten snippets per question.
BIOASQ_LIMIT = 10
LIST_ANSWERS = 5
Json = dict[str, object]


@dataclass(frozen=True, slots=True)
class AnswerTerm:
    """One answer value: an IRI (``is_iri``) or a plain literal."""

    value: str
    is_iri: bool = False


def is_kb_run(run: RagRun) -> bool:
    """Return whether the documents are knowledge-base resources (IRIs) rather than PMIDs."""
    return bool(run.documents) and all(":" in d.pmid for d in run.documents)


def answer_terms(run: RagRun) -> tuple[tuple[AnswerTerm, ...], bool | None]:
    """Return the run's answer as QALD values, or the boolean of a yes/no question.

    Returns:
        ``(values, boolean)``: a yes/no question gives ``((), True/False)``; any other gives the
        values and ``None``.
    """
    exact = run.exact_answer
    if run.question_type == "yesno":
        return (), exact.yesno == "yes" if exact.yesno else None
    if run.question_type in ("factoid", "list"):
        if is_kb_run(run):
            count = 1 if run.question_type == "factoid" else LIST_ANSWERS
            best = list(dict.fromkeys(s.pmid for s in run.snippets)) or [
                d.pmid for d in run.documents
            ]
            return tuple(AnswerTerm(p, True) for p in best[:count]), None
        return tuple(AnswerTerm(name) for name in exact.values()), None
    return ((AnswerTerm(run.short_answer),) if run.short_answer else ()), None


def qald_json(run: RagRun, question_id: str = "1") -> Json:
    """Return the QALD-JSON reply of the GERBIL QA web-service protocol for a run."""
    values, boolean = answer_terms(run)
    answers: list[Json] = []
    if boolean is not None:
        answers.append({"head": {}, "boolean": boolean})
    else:
        bindings = [
            {"answer": {"type": "uri" if v.is_iri else "literal", "value": v.value}} for v in values
        ]
        answers.append({"head": {"vars": ["answer"]}, "results": {"bindings": bindings}})
    return {
        "questions": [
            {
                "id": question_id,
                "question": [{"language": run.language, "string": run.question}],
                "answers": answers,
            }
        ]
    }


def bioasq_question(run: RagRun, question_id: str) -> Json:
    """Return one question of a BioASQ task-b response for a run."""
    entry: Json = {
        "id": question_id,
        "body": run.question,
        "type": run.question_type,
        "documents": [document_url(d.pmid) for d in run.documents[:BIOASQ_LIMIT]],
        "snippets": [bioasq_snippet(s) for s in run.snippets[:BIOASQ_LIMIT]],
        "ideal_answer": run.short_answer,
    }
    exact = run.exact_answer
    if run.question_type == "yesno" and exact.yesno:
        entry["exact_answer"] = exact.yesno
    elif run.question_type in ("factoid", "list"):
        entry["exact_answer"] = [list(names) for names in exact.entities]
    return entry


def bioasq_json(run: RagRun, question_id: str = "1") -> Json:
    """Return a BioASQ task-b response holding one question."""
    return {"questions": [bioasq_question(run, question_id)]}


def run_json(run: RagRun, run_iri: str | None) -> Json:
    """Return everything a run did, as ``qabench ask --json`` prints it."""
    exact = run.exact_answer
    exact_value: object = (
        exact.yesno if exact.yesno is not None else [list(e) for e in exact.entities] or None
    )
    timings: dict[str, float] = {t.stage: round(t.millis, 3) for t in run.timings}
    timings["total"] = round(run.total_millis, 3)
    return {
        "run": run_iri,
        "question": run.question,
        "language": run.language,
        "question_type": run.question_type,
        "expanded_query": run.expanded_query,
        "query_edited": run.query_edited,
        "query_run": run.query_run,
        "fallback": run.fallback,
        "documents": [
            {"rank": d.rank, "pmid": d.pmid, "score": round(d.score, 6), "title": d.title}
            for d in run.documents
        ],
        "snippets": [
            {
                "pmid": s.pmid,
                "text": s.text,
                "section": s.begin_section,
                **bioasq_snippet(s),
                "score": round(s.score, 6),
            }
            for s in run.snippets
        ],
        "answered": run.answered,
        "abstention": run.abstention,
        "index": (
            {"name": run.index.name, "documents": run.index.documents, "demo": run.index.demo}
            if run.index is not None
            else None
        ),
        "short_answer": run.short_answer,
        "cited_answer": run.cited_answer.text,
        "cited_sentences": [
            {
                "text": s.text,
                "pmids": list(s.citations),
                "removed": list(s.removed),
                "flagged": s.flagged,
                "support": s.support,
                "supported": s.supported,
                "problems": list(s.problems),
            }
            for s in run.cited_answer.sentences
        ],
        "exact_answer": exact_value,
        "timings": timings,
        "stages": [
            {"stage": t.stage, "millis": round(t.millis, 3), "note": t.note} for t in run.timings
        ],
        "generator": {
            "name": run.generator.name,
            "model": run.generator.model,
            "settings": dict(run.generator.settings),
        },
        "settings": dict(run.settings),
        "citation_support": support_rate([run.cited_answer]),
        "warnings": list(run.warnings),
    }

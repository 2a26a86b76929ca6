"""Write a ``Dataset`` as QALD-JSON (the format GERBIL QA and QALD-6 … QALD-10 use).

Used for refreshed gold answers (``qabench datasets refresh``), for answers files produced by
qabench's own systems, and for downloads. Pure: returns bytes.
"""

from __future__ import annotations

import json
from typing import Any

from pyoxigraph import NamedNode

from evaluators.model import AnswerSet, Dataset, Question
from vocab.standard import XSD


def _binding(value: NamedNode | Any) -> dict[str, str]:
    if isinstance(value, NamedNode):
        return {"type": "uri", "value": value.value}
    if value.language:
        return {"type": "literal", "value": value.value, "xml:lang": value.language}
    if value.datatype == XSD.anyURI:
        # an answer the source marked as a URI but that is not a valid IRI
        return {"type": "uri", "value": value.value}
    if value.datatype != XSD.string:
        return {"type": "literal", "value": value.value, "datatype": value.datatype.value}
    return {"type": "literal", "value": value.value}


def answer_json(answer: AnswerSet) -> dict[str, Any]:
    """Return one answer set as a SPARQL 1.1 JSON result document.

    What the source said is kept: a boolean next to bindings, and an empty ``bindings`` list.
    """
    if answer.boolean is not None and not answer.values and not answer.has_bindings:
        return {"head": {}, "boolean": answer.boolean}
    var = answer.variables[0] if len(answer.variables) == 1 else "value"
    doc: dict[str, Any] = {
        "head": {"vars": [var]},
        "results": {"bindings": [{var: _binding(v)} for v in answer.values]},
    }
    if answer.boolean is not None:
        doc["boolean"] = answer.boolean
    return doc


def question_json(q: Question) -> dict[str, Any]:
    """Return one question as a QALD-JSON question object."""
    doc: dict[str, Any] = {"id": q.id}
    if q.answer_type is not None:
        doc["answertype"] = q.answer_type.value
    for key, flag in (
        ("aggregation", q.aggregation),
        ("onlydbo", q.only_dbo),
        ("hybrid", q.hybrid),
    ):
        if flag is not None:
            doc[key] = flag
    doc["question"] = [
        {"language": t.language, "string": t.text, "keywords": ", ".join(t.keywords)}
        for t in q.texts
    ]
    query: dict[str, str] = {}
    if q.sparql is not None:
        query["sparql"] = q.sparql
    if q.pseudo_query is not None:
        query["pseudo"] = q.pseudo_query
    if query:
        doc["query"] = query
    if q.answers is not None:
        doc["answers"] = [answer_json(a) for a in q.answers]
    return doc


def dataset_json(dataset: Dataset, dataset_id: str | None = None) -> bytes:
    """Return the dataset as QALD-JSON bytes (UTF-8, stable key order)."""
    doc = {
        "dataset": {"id": dataset_id or dataset.source_id or "qabench"},
        "questions": [question_json(q) for q in dataset.questions],
    }
    return json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8")

"""Write a ``Dataset`` as BioASQ task-b JSON (gold files and system responses share the shape).

Used by ``qabench answer`` for the responses of qabench's own systems. Pure: returns bytes.
"""

from __future__ import annotations

import json
from typing import Any

from evaluators.model import BioasqGold, Dataset, Question


def _exact(part: BioasqGold) -> Any:
    if part.question_type == "yesno":
        return part.yesno or ""
    if part.question_type in ("factoid", "list"):
        return [list(entity) for entity in part.entities]
    return None


def question_json(q: Question) -> dict[str, Any]:
    """Return one question as a BioASQ task-b question object."""
    part = q.bioasq or BioasqGold(question_type="")
    doc: dict[str, Any] = {
        "id": q.id,
        "body": q.text("en") or (q.texts[0].text if q.texts else ""),
        "type": part.question_type,
        "documents": list(part.documents),
        "snippets": [
            {
                "document": s.document,
                "text": s.text,
                "beginSection": s.begin_section,
                "endSection": s.end_section,
                "offsetInBeginSection": s.offset_begin,
                "offsetInEndSection": s.offset_end,
            }
            for s in part.snippets
        ],
    }
    if part.concepts:
        doc["concepts"] = list(part.concepts)
    exact = _exact(part)
    if exact is not None:
        doc["exact_answer"] = exact
    if part.ideal_answers:
        doc["ideal_answer"] = list(part.ideal_answers)
    return doc


def dataset_json(dataset: Dataset) -> bytes:
    """Return the dataset as BioASQ task-b JSON bytes (UTF-8)."""
    doc = {"questions": [question_json(q) for q in dataset.questions]}
    return json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8")

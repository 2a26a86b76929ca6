"""Write answers in the TEXT2SPARQL client's shapes: its answers file and its result sets.

``answers_document`` gives what ``text2sparql ask`` writes (one entry per question asked, with
the query the system returned), so that the official client can run and score a qabench run.
``result_set`` flattens one answer the way the client's result-set step does (``{value: 1}``
for every value of every variable, ``{"true": 1|0}`` for an ASK answer). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evaluators.model import AnswerSet, Question


@dataclass(frozen=True, slots=True)
class AskedQuestion:
    """One question as asked (gold side) and the query the system answered with (if any)."""

    gold: Question
    query: str | None
    endpoint: str = ""


def answers_document(asked: Iterable[AskedQuestion]) -> list[dict[str, str]]:
    """Return the client's answers list: ``dataset``, ``question``, ``query``, ``endpoint``,
    ``qname``, ``uri`` per question whose system returned a query.

    >>> from evaluators.model import QuestionText, Text2SparqlQuestion
    >>> q = Question("ck25:1-en", (QuestionText("en", "Who?"),),
    ...              text2sparql=Text2SparqlQuestion("https://e.org/c/", "ck25"))
    >>> answers_document([AskedQuestion(q, "ASK {}", "http://sys/")])[0]["uri"]
    'https://e.org/c/1-en'
    """
    out: list[dict[str, str]] = []
    for entry in asked:
        parts = entry.gold.text2sparql
        if entry.query is None or parts is None:
            continue
        language = entry.gold.languages[0] if entry.gold.languages else ""
        out.append(
            {
                "dataset": parts.dataset,
                "question": entry.gold.text(language) or "",
                "query": entry.query,
                "endpoint": entry.endpoint,
                "qname": entry.gold.id,
                "uri": parts.uri(entry.gold.id),
            }
        )
    return out


def result_set(answers: Sequence[AnswerSet]) -> dict[str, int]:
    """Return the client's flat result set of an answer: lexical values, or the ASK answer.

    >>> from pyoxigraph import Literal, NamedNode
    >>> result_set([AnswerSet((NamedNode("http://e/a"), Literal("http://e/a")))])
    {'http://e/a': 1}
    >>> result_set([AnswerSet(boolean=False)])
    {'true': 0}
    """
    items: dict[str, int] = {}
    for answer in answers:
        if answer.boolean is not None and not answer.values:
            items["true"] = 1 if answer.boolean else 0
        for value in answer.values:
            items.setdefault(value.value, 1)
    return items

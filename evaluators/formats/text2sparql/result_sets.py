"""Read the TEXT2SPARQL client's answers files and result-set files into answers ``Dataset``s.

**Answers** (``text2sparql ask`` output): a JSON list of ``{"dataset", "question", "query",
"endpoint", "qname", "uri"}``. Each entry becomes the answer to question ``qname``: its query
and no answer set, i.e. a SPARQL-only answer that is run on the knowledge base when scored.
An entry without a query is an empty answer (the client gets no results for it either).

**Result sets** (``text2sparql query`` output, also the published reference result sets): a
JSON object ``qname -> {value: relevance}``. The client keeps only each value's lexical form,
so the answer set is marked ``lexical`` (IRI or literal, datatype and language are unknown);
the values keep the file's order (the client writes them in the order the query returned
them). ``{"true": 1}`` and ``{"true": 0}`` alone are the answers of an ASK query (true, false).
Relevances are 1 (0 only for a false ASK answer): other values the client never writes are
refused. A member ``order_required`` (the client's list of ordered questions) is ignored: the
questions file's features say which answers are ordered.
"""

from __future__ import annotations

from pyoxigraph import Literal

from evaluators.formats.parsing.diagnostics import Diagnostics, quote
from evaluators.formats.parsing.jsonfield import (
    check_keys,
    child,
    describe,
    expect_list,
    expect_object,
    item,
    required,
)
from evaluators.formats.parsing.question_fields import warn_duplicate_ids
from evaluators.model import AnswerSet, Dataset, Question, SourceFormat

_ANSWER_KEYS = frozenset({"dataset", "question", "query", "endpoint", "qname", "uri"})
ORDER_REQUIRED = "order_required"


def looks_like_result_sets(doc: dict[str, object]) -> bool:
    """Return whether a JSON object is a result-set file (qnames mapped to objects).

    >>> looks_like_result_sets({"ck25:1-en": {"http://x/a": 1}, "order_required": []})
    True
    >>> looks_like_result_sets({"questions": []}), looks_like_result_sets({})
    (False, False)
    """
    entries = [(k, v) for k, v in doc.items() if k != ORDER_REQUIRED]
    return bool(entries) and all(":" in k and isinstance(v, dict) for k, v in entries)


def parse_answers(doc: object, diag: Diagnostics) -> Dataset:
    """Parse a decoded answers file (a JSON list of the client's ``ask`` entries).

    Raises:
        DatasetFormatError: an entry is not an object, has no ``qname``, or a query that is
            not a string; the message gives its JSON path.
    """
    questions = []
    for i, entry in enumerate(expect_list(doc, "$", diag)):
        where = item("$", i)
        obj = expect_object(entry, where, diag)
        check_keys(obj, _ANSWER_KEYS, "answers entry", where, diag)
        qname = required(obj, "qname", where, diag)
        if not isinstance(qname, str) or not qname.strip():
            raise diag.error(f"expected a qname such as 'ck25:1-en', found {describe(qname)}",
                             path=child(where, "qname"))  # fmt: skip
        query = obj.get("query")
        if query is not None and not isinstance(query, str):
            raise diag.error(f"expected a SPARQL query string, found {describe(query)}",
                             path=child(where, "query"))  # fmt: skip
        if query is None or not query.strip():
            diag.warn("answers without a query are empty answers", question_id=qname,
                      key=("t2s-no-query",))  # fmt: skip
            questions.append(Question(id=qname.strip(), answers=(AnswerSet(has_bindings=True),)))
        else:
            questions.append(Question(id=qname.strip(), sparql=query))
    result = tuple(questions)
    warn_duplicate_ids(result, diag)
    return Dataset(SourceFormat.TEXT2SPARQL_ANSWERS, result, warnings=diag.warnings())


def parse_result_sets(doc: object, diag: Diagnostics) -> Dataset:
    """Parse a decoded result-set file (``qname -> {value: relevance}``).

    Raises:
        DatasetFormatError: it is not an object of objects, or a relevance is not 1 (0 for a
            false ASK answer); the message names the qname and the value.
    """
    obj = expect_object(doc, "$", diag)
    questions = []
    for qname, values in obj.items():
        if qname == ORDER_REQUIRED:
            diag.warn("ignored 'order_required': the questions' features say which answers "
                      "are ordered")  # fmt: skip
            continue
        where = child("$", qname)
        questions.append(Question(id=qname, answers=(_answer(values, where, qname, diag),)))
    return Dataset(SourceFormat.TEXT2SPARQL_RESULTS, tuple(questions), warnings=diag.warnings())


def _relevance(value: object, path: str, diag: Diagnostics) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value not in (0, 1):
        raise diag.error(f"expected the relevance 1 (or 0 for a false ASK answer), found "
                         f"{describe(value)}", path=path)  # fmt: skip
    return int(value)


def _answer(values: object, where: str, qname: str, diag: Diagnostics) -> AnswerSet:
    items = expect_object(values, where, diag)
    if list(items) == ["true"]:
        return AnswerSet(boolean=_relevance(items["true"], child(where, "true"), diag) == 1,
                         lexical=True)  # fmt: skip
    kept: list[Literal] = []
    for value, relevance in items.items():
        if _relevance(relevance, child(where, value), diag) != 1:
            raise diag.error(
                f"question {quote(qname)}: value {quote(value)} has relevance 0, "
                "which the client writes only for a false ASK answer",
                path=where,
            )
        kept.append(Literal(value))
    return AnswerSet(tuple(kept), has_bindings=True, lexical=True)

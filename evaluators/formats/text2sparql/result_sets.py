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
refused. The member ``order_required`` (the 2026 reference result sets: the qnames whose
answers are ordered, on which the official evaluation computes ``ndcg``) is kept on every
question of the file: a question it lists carries TEXT2SPARQL parts with the feature
``RESULT_ORDER_MATTERS``, the others parts without it (``order_listed``); a file without the
member leaves the parts unset, and the questions file's features decide. A name it lists that
the file has no entry for, or twice, is refused.
"""

from __future__ import annotations

from dataclasses import replace

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
from evaluators.model import (
    ORDER_MATTERS,
    AnswerSet,
    Dataset,
    Question,
    SourceFormat,
    Text2SparqlQuestion,
)

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
    """Parse a decoded result-set file (``qname -> {value: relevance}``, maybe ``order_required``).

    Raises:
        DatasetFormatError: it is not an object of objects, a relevance is not 1 (0 for a
            false ASK answer), or ``order_required`` is not a list of the file's qnames; the
            message names the qname and the value.
    """
    obj = expect_object(doc, "$", diag)
    questions = []
    for qname, values in obj.items():
        if qname == ORDER_REQUIRED:
            continue
        where = child("$", qname)
        questions.append(Question(id=qname, answers=(_answer(values, where, qname, diag),)))
    if ORDER_REQUIRED in obj:
        ordered = _order_required(obj[ORDER_REQUIRED], {q.id for q in questions}, diag)
        questions = [_with_order(q, q.id in ordered) for q in questions]
    return Dataset(SourceFormat.TEXT2SPARQL_RESULTS, tuple(questions), warnings=diag.warnings())


def _order_required(value: object, qnames: set[str], diag: Diagnostics) -> frozenset[str]:
    where = child("$", ORDER_REQUIRED)
    names = expect_list(value, where, diag)
    seen: set[str] = set()
    for i, name in enumerate(names):
        if not isinstance(name, str):
            raise diag.error(f"expected a qname, found {describe(name)}", path=item(where, i))
        if name not in qnames:
            raise diag.error(f"{quote(name)} is listed as ordered but has no result in the file",
                             path=item(where, i))  # fmt: skip
        if name in seen:
            raise diag.error(f"{quote(name)} is listed twice", path=item(where, i))
        seen.add(name)
    return frozenset(seen)


def _with_order(question: Question, ordered: bool) -> Question:
    """Return a result-set question marked ordered or not (``order_listed`` reads it back)."""
    prefix = question.id.split(":", 1)[0]
    features = (ORDER_MATTERS,) if ordered else ()
    return replace(question, text2sparql=Text2SparqlQuestion("", prefix, features=features))


def order_listed(question: Question) -> bool | None:
    """Return whether a result-set question is listed in ``order_required`` (``None``: the file
    has no such member).

    >>> order_listed(Question("x:1-en")), order_listed(_with_order(Question("x:1-en"), True))
    (None, True)
    """
    parts = question.text2sparql
    return None if parts is None else parts.order_matters


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

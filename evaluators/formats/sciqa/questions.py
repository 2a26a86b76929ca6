"""SciQA's files: ``questions.json`` and the gold results of its queries, ``answers.json``.

``questions.json`` is ``{"questions": [...]}``; an entry has ``id`` (``AQ1475``, ``HQ0003``),
``question.string``, ``query.sparql`` and descriptive fields (``query_type``, ``template_id``,
``auto_generated``, ``query_shape``, ``query_class``, ``number_of_patterns``,
``paraphrased_question``), which are not kept. ``answers.json`` is ``{"answers": [{"id",
"answer": SPARQL 1.1 JSON results}]}``: the results of each gold query on the ORKG when the
dataset was made (2023, a Virtuoso endpoint). ``with_answers`` gives the questions those
results twice: as answer sets (every profile reads them) and as a recorded execution, the table
in SPARQL 1.1 TSV that the ``execution-em`` profile compares row by row
(``execution_table``). Pure.
"""

from __future__ import annotations

from dataclasses import replace

from evaluators.formats.parsing.diagnostics import Diagnostics
from evaluators.formats.parsing.jsonfield import (
    child,
    expect_list,
    expect_object,
    expect_str,
    identifier,
    item,
    required,
)
from evaluators.formats.parsing.question_fields import warn_duplicate_ids
from evaluators.formats.parsing.source import decode_text, load_json
from evaluators.formats.parsing.sparql_results import result_set
from evaluators.model import SUCCESS, Dataset, Execution, Question, QuestionText, SourceFormat

SOURCE_ID = "sciqa"
# SciQA's descriptive fields: known, not kept
_KNOWN = frozenset(
    {
        "id", "query_type", "question", "paraphrased_question", "query", "template_id",
        "auto_generated", "query_shape", "query_class", "number_of_patterns",
    }
)  # fmt: skip


def looks_like_questions(doc: dict[str, object]) -> bool:
    """Return whether a JSON object with ``questions`` is SciQA's (``question.string``, no
    language, and a ``query``).

    >>> looks_like_questions({"questions": [{"id": "AQ1", "question": {"string": "Which?"},
    ...                                      "query": {"sparql": "SELECT"}}]})
    True
    >>> looks_like_questions({"questions": [{"id": "1", "question": [{"language": "en"}]}]})
    False
    """
    entries = doc.get("questions")
    first = entries[0] if isinstance(entries, list) and entries else None
    return (
        isinstance(first, dict)
        and isinstance(first.get("question"), dict)
        and "string" in first["question"]
        and "language" not in first["question"]
        and "query" in first
    )


def parse(doc: object, diag: Diagnostics) -> Dataset:
    """Parse a decoded ``questions.json`` (questions and queries; no answers).

    Raises:
        DatasetFormatError: an entry without an id, a question string or a query; the message
            gives the JSON path.
    """
    top = expect_object(doc, "$", diag)
    path = child("$", "questions")
    questions = []
    for i, entry in enumerate(expect_list(required(top, "questions", "$", diag), path, diag)):
        where = item(path, i)
        obj = expect_object(entry, where, diag)
        qid = identifier(required(obj, "id", where, diag), child(where, "id"), diag)
        for key in obj.keys() - _KNOWN:
            diag.unknown_field(key, "question", where)
        text_path = child(where, "question")
        text = expect_object(required(obj, "question", where, diag), text_path, diag)
        string = expect_str(
            required(text, "string", text_path, diag), child(text_path, "string"), diag
        )
        query_path = child(where, "query")
        query = expect_object(required(obj, "query", where, diag), query_path, diag)
        sparql = query.get("sparql")
        questions.append(
            Question(
                qid,
                (QuestionText("en", string),),
                sparql=expect_str(sparql, child(query_path, "sparql"), diag) if sparql else None,
            )
        )
    warn_duplicate_ids(tuple(questions), diag)
    return Dataset(
        SourceFormat.SCIQA, tuple(questions), source_id=SOURCE_ID, warnings=diag.warnings()
    )


def _escaped(text: str) -> str:
    return (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )


def _cell(term: object) -> str:
    """Return one SPARQL JSON term in SPARQL 1.1 TSV (N-Triples) form; '' when unbound."""
    if not isinstance(term, dict):
        return ""
    value, kind = str(term.get("value", "")), term.get("type")
    if kind in ("uri", "iri", "resource"):
        return f"<{value}>"
    if kind == "bnode":
        return f"_:{value}"
    literal = f'"{_escaped(value)}"'
    if term.get("xml:lang"):
        return f"{literal}@{term['xml:lang']}"
    if term.get("datatype"):
        return f"{literal}^^<{term['datatype']}>"
    return literal


def execution_table(result: dict[str, object]) -> Execution:
    """Return a SPARQL JSON result (already checked) as a recorded execution: its table in
    SPARQL 1.1 TSV, or ``true``/``false`` for a boolean result.

    >>> execution_table({"head": {"vars": ["p", "l"]}, "results": {"bindings": [
    ...     {"p": {"type": "uri", "value": "http://o/R1"},
    ...      "l": {"type": "literal", "value": 'a "b"', "xml:lang": "en"}}]}}).result
    '?p\\t?l\\n<http://o/R1>\\t"a \\\\"b\\\\""@en'
    """
    if "boolean" in result and "results" not in result:
        return Execution(SUCCESS, "true" if result["boolean"] is True else "false")
    head = result.get("head")
    names = head.get("vars", []) if isinstance(head, dict) else []
    variables = [str(v) for v in names] if isinstance(names, list) else []
    results = result.get("results")
    bindings = results.get("bindings", []) if isinstance(results, dict) else []
    lines = ["\t".join(f"?{v}" for v in variables)]
    for binding in bindings if isinstance(bindings, list) else []:
        row = binding if isinstance(binding, dict) else {}
        lines.append("\t".join(_cell(row.get(v)) for v in variables))
    return Execution(SUCCESS, "\n".join(lines))


def with_answers(questions: Dataset, data: bytes, *, source: str) -> Dataset:
    """Give SciQA questions the gold results of ``answers.json`` (its bytes).

    A question the file has no result for keeps no answers (and a warning says so); an id the
    questions lack is refused.

    Raises:
        DatasetFormatError: the file is not ``{"answers": [{"id", "answer"}]}`` with SPARQL
            JSON results, or names a question the questions file lacks.
    """
    diag = Diagnostics(source)
    top = expect_object(load_json(decode_text(data, source), diag), "$", diag)
    path = child("$", "answers")
    found: dict[str, Question] = {}
    known = questions.by_id()
    for i, entry in enumerate(expect_list(required(top, "answers", "$", diag), path, diag)):
        where = item(path, i)
        obj = expect_object(entry, where, diag)
        qid = identifier(required(obj, "id", where, diag), child(where, "id"), diag)
        if qid not in known:
            raise diag.error(f"question {qid!r} is not in the questions file", path=where)
        raw = required(obj, "answer", where, diag)
        answer = result_set(raw, child(where, "answer"), diag, qid)
        table = execution_table(expect_object(raw, child(where, "answer"), diag))
        found[qid] = replace(known[qid], answers=(answer,), execution=table)
    for qid in known.keys() - found.keys():
        diag.warn("no gold result in the answers file", question_id=qid)
    merged = tuple(found.get(q.id, q) for q in questions.questions)
    return replace(questions, questions=merged, warnings=(*questions.warnings, *diag.warnings()))

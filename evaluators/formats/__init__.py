"""Benchmark and answer file parsers: bytes in, ``evaluators.model.Dataset`` out.

One module per format (``qald_xml``, ``qald_json``, ``eqald``, ``nlq``, ``lcquad`` (1.0 and
2.0), ``bioasq``, ``simple_answers``, the ``text2sparql`` folder: questions YAML, answers and
result sets) plus shared readers (``source``, ``xml_document``,
``jsonfield``, ``values``, ``sparql_results``, ``question_fields``). Everything is pure: no
store, no logging, no clock. Every problem with the input becomes a ``DatasetFormatError`` (or
``DatasetTooLargeError``) naming the file, the position or JSON path, and what was expected;
what a parser ignored or repaired is listed in ``Dataset.warnings``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evaluators import defaults
from evaluators.formats import bioasq, eqald, lcquad, nlq, qald_json, qald_xml, simple_answers
from evaluators.formats.mirage import benchmark as mirage_benchmark
from evaluators.formats.mirage import predictions as mirage_predictions
from evaluators.formats.parsing.diagnostics import Diagnostics, quote
from evaluators.formats.parsing.jsonfield import child, describe, expect_list, item
from evaluators.formats.parsing.source import (
    decode_text,
    first_significant_char,
    load_json,
    read_file,
    split_bom,
)
from evaluators.formats.parsing.xml_document import decode_xml, local_name, root_name
from evaluators.formats.sciqa import firesparql
from evaluators.formats.sciqa import questions as sciqa_questions
from evaluators.formats.text2sparql import questions as t2s_questions
from evaluators.formats.text2sparql import result_sets as t2s_results
from evaluators.model import Dataset, Question, SourceFormat

__all__ = ["detect_format", "parse_bytes", "parse_file", "parse_system_response"]

DEFAULT_MAX_BYTES = defaults.MAX_FILE_BYTES
_JSON_PARSERS: dict[SourceFormat, Callable[[object, Diagnostics], Dataset]] = {
    SourceFormat.QALD_JSON: qald_json.parse,
    SourceFormat.EQALD: eqald.parse,
    SourceFormat.NLQ: nlq.parse,
    SourceFormat.LCQUAD: lcquad.parse,
    SourceFormat.LCQUAD2: lcquad.parse_2,
    SourceFormat.ANSWERS_JSON: simple_answers.parse_json,
    SourceFormat.BIOASQ: bioasq.parse,
    SourceFormat.TEXT2SPARQL_ANSWERS: t2s_results.parse_answers,
    SourceFormat.TEXT2SPARQL_RESULTS: t2s_results.parse_result_sets,
    # issue 39
    SourceFormat.MIRAGE: mirage_benchmark.parse,
    SourceFormat.MIRAGE_PREDICTIONS: mirage_predictions.parse,
    SourceFormat.SCIQA: sciqa_questions.parse,
}
_EXPECTED = (
    "expected QALD XML (root <dataset>), a JSON object with 'questions' (QALD JSON, extended "
    "QALD JSON, BioASQ), a JSON array of NLQ, LC-QuAD, LC-QuAD 2.0 or answer entries, "
    "id<TAB>answer lines, a TEXT2SPARQL questions file (YAML) or result set (qname -> values), "
    "MIRAGE's benchmark.json or its packed predictions, SciQA questions, a FIRESPARQL run"
)
# Fields only BioASQ questions carry.
_BIOASQ_KEYS = frozenset(
    {"body", "documents", "snippets", "concepts", "exact_answer", "ideal_answer", "triples"}
)


def detect_format(data: bytes, source: str) -> SourceFormat:
    """Tell which benchmark format a file is in, from its content.

    XML with root ``<dataset>`` is QALD XML. A JSON array of objects with ``_id`` and
    ``corrected_question`` is LC-QuAD, with ``uid`` and ``sparql_wikidata`` LC-QuAD 2.0, with
    ``id``, ``lang`` and ``question`` NLQ. A JSON
    object with ``questions`` is extended QALD when its questions nest ``question.language``,
    BioASQ when they carry ``body`` text (or only BioASQ fields), else QALD JSON.

    Args:
        data: the file's bytes.
        source: the file name or URL, for messages.

    Returns:
        The format.

    Raises:
        DatasetFormatError: the content fits none of the formats; the message says what it
            looks like and what was expected.
    """
    diag = Diagnostics(source)
    if _is_xml(data, source):
        _check_xml_root(decode_xml(data, source), diag)
        return SourceFormat.QALD_XML
    text = decode_text(data, source)
    if t2s_questions.looks_like_questions(text):
        return SourceFormat.TEXT2SPARQL
    if firesparql.looks_like_run(text):
        return SourceFormat.FIRESPARQL_RUN
    return _classify(load_json(text, diag), diag)


def parse_bytes(data: bytes, *, source: str, format: SourceFormat | None = None) -> Dataset:
    """Parse a benchmark or answers file from its bytes.

    Args:
        data: the file's bytes (UTF-8, optionally with a byte order mark, or UTF-16 with one).
        source: the file name or URL, for messages.
        format: force a parser instead of detecting the format.

    Returns:
        The dataset, with warnings about ignored or repaired content.

    Raises:
        DatasetFormatError: the file cannot be parsed (position and expectation in the message).
    """
    diag = Diagnostics(source)
    try:
        if format is SourceFormat.QALD_XML or (format is None and _is_xml(data, source)):
            return qald_xml.parse(data, diag)
        text = decode_text(data, source)
        if format is SourceFormat.TEXT2SPARQL or (
            format is None and t2s_questions.looks_like_questions(text)
        ):
            return t2s_questions.parse(text, diag)
        if format is SourceFormat.FIRESPARQL_RUN or (
            format is None and firesparql.looks_like_run(text)
        ):
            return firesparql.parse_run(text, source).answers
        if format is SourceFormat.ANSWERS_TSV or (
            format is None and simple_answers.looks_like_tsv(text)
        ):
            return simple_answers.parse_tsv(data, source)
        doc = load_json(text, diag)
        return _JSON_PARSERS[format or _classify(doc, diag)](doc, diag)
    except RecursionError as exc:
        raise diag.error("the document nests too deeply; expected a benchmark file") from exc


def parse_file(
    path: Path, *, format: SourceFormat | None = None, max_bytes: int = DEFAULT_MAX_BYTES
) -> Dataset:
    """Parse a benchmark or answers file, refusing files larger than ``max_bytes``.

    Args:
        path: the file.
        format: force a parser instead of detecting the format.
        max_bytes: the size limit, checked before the content is read.

    Returns:
        The dataset.

    Raises:
        DatasetTooLargeError: the file is larger than ``max_bytes``.
        DatasetFormatError: the file cannot be read or parsed.
    """
    return parse_bytes(read_file(path, max_bytes), source=str(path), format=format)


def parse_system_response(data: bytes, *, source: str) -> Question:
    """Parse a QA web service's reply (GERBIL QA protocol) into the answered question.

    The reply is extended QALD JSON, QALD JSON or (for BioASQ questions) BioASQ task-b JSON,
    told apart by the first question's keys; as in GERBIL, the first question is used and its
    id may be missing (it is then ``""``).

    Args:
        data: the response body.
        source: the system's URL or name, for messages.

    Returns:
        The first question of the reply, with its answers.

    Raises:
        DatasetFormatError: the body is not a QALD JSON document with at least one question.
    """
    diag = Diagnostics(source)
    doc = load_json(decode_text(data, source), diag)
    if not isinstance(doc, dict) or "questions" not in doc:
        raise diag.error(
            f"the reply is {describe(doc)}; expected a QALD JSON object with a 'questions' list"
        )
    path = child("$", "questions")
    entries = expect_list(doc["questions"], path, diag)
    if not entries:
        raise diag.error("the reply has no question; expected one answered question", path=path)
    try:
        if isinstance(entries[0], dict) and _BIOASQ_KEYS & entries[0].keys():
            return bioasq.parse_entry(entries[0], item(path, 0), diag, require_id=False)
        if _nests_language(entries[0]):
            return eqald.parse_entry(entries[0], item(path, 0), diag, require_id=False)
        return qald_json.parse_question(entries[0], item(path, 0), diag, require_id=False)
    except RecursionError as exc:
        raise diag.error("the reply nests too deeply; expected QALD or BioASQ JSON") from exc


def _is_xml(data: bytes, source: str) -> bool:
    encoding, body = split_bom(data)
    if encoding in (None, "utf-8"):
        return body.lstrip()[:1] == b"<"
    return first_significant_char(decode_text(data, source)) == "<"


def _check_xml_root(text: str, diag: Diagnostics) -> None:
    name = root_name(text, diag)
    if name is None:
        raise diag.error(f"the XML has no root element; {_EXPECTED}", line=1)
    if local_name(name) != "dataset":
        raise diag.error(f"the XML root element is <{name}>; {_EXPECTED}")


def _nests_language(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("question"), dict)
        and "language" in entry["question"]
    )


def _classify(doc: object, diag: Diagnostics) -> SourceFormat:
    if isinstance(doc, list):
        first = next((e for e in doc if isinstance(e, dict)), None)
        if first is not None and {"_id", "corrected_question"} <= first.keys():
            return SourceFormat.LCQUAD
        if first is not None and {"uid", "sparql_wikidata"} <= first.keys():
            return SourceFormat.LCQUAD2
        if first is not None and {"qname", "query"} <= first.keys():
            return SourceFormat.TEXT2SPARQL_ANSWERS
        if first is not None and {"id", "lang", "question"} <= first.keys():
            return SourceFormat.NLQ
        if first is not None and "id" in first and first.keys() & {"answers", "sparql", "query"}:
            return SourceFormat.ANSWERS_JSON
        found = describe(first) if first is not None else describe(doc)
        raise diag.error(
            f"a JSON array whose first entry is {found}; expected NLQ entries "
            "(id, lang, question), LC-QuAD entries (_id, corrected_question), LC-QuAD 2.0 "
            "entries (uid, sparql_wikidata) or answers (id, answers)"
        )
    if not isinstance(doc, dict):
        raise diag.error(f"the JSON document is {describe(doc)}; {_EXPECTED}")
    if "questions" not in doc and t2s_results.looks_like_result_sets(doc):
        return SourceFormat.TEXT2SPARQL_RESULTS
    if mirage_benchmark.looks_like_benchmark(doc):
        return SourceFormat.MIRAGE
    if mirage_predictions.looks_like_predictions(doc):
        return SourceFormat.MIRAGE_PREDICTIONS
    if "questions" not in doc:
        keys = ", ".join(quote(k, 20) for k in list(doc)[:8]) or "none"
        raise diag.error(f"a JSON object without 'questions' (its keys: {keys}); {_EXPECTED}")
    entries = doc["questions"]
    if not isinstance(entries, list):
        raise diag.error(
            f"expected a list of questions, found {describe(entries)}", path="$.questions"
        )
    first = next((e for e in entries if isinstance(e, dict)), None)
    if first is None:
        return SourceFormat.QALD_JSON
    if _nests_language(first):
        return SourceFormat.EQALD
    if sciqa_questions.looks_like_questions(doc):
        return SourceFormat.SCIQA
    if isinstance(first.get("body"), str) or (
        "question" not in first and "body" not in first and _BIOASQ_KEYS & first.keys()
    ):
        return SourceFormat.BIOASQ
    return SourceFormat.QALD_JSON

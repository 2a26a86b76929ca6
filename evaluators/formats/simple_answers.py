"""Two simple answers-file formats: a JSON list of ``{id, answers}`` and TSV ``id<TAB>answer``.

Many systems (text-to-SPARQL models, scripts) write their answers without the SPARQL-results
shape of QALD JSON. Both formats are answers files only (they hold no question texts).

``answers-json``: a JSON array of objects ``{"id": "7", "answers": [...]}``. ``id`` is a string
or an integer. ``answers`` lists the values: a string that is an absolute IRI (a scheme, no
spaces) is an IRI, any other string a plain literal, a number a typed literal (``xsd:integer``
or ``xsd:double``), and a single JSON boolean (``[true]`` or just ``true``) the answer of an ASK
question. ``"answers": []`` is an empty answer. An entry may carry its query as ``sparql`` (or
``query``, a string); with no ``answers`` key it is a SPARQL-only answer, whose query is run on
the knowledge base when one is configured (``evaluators.knowledge.execution``).

``answers-tsv``: one ``id<TAB>answer`` per line, UTF-8; the lines of one id form one answer
set, in file order; ``id<TAB>`` (nothing after the tab) is an empty answer; a single ``true`` or
``false`` (any case) is an ASK answer. Blank lines are skipped; a first line ``id<TAB>answer``
is a header. A line without a tab, with more than one tab or with an empty id is refused with
its line number. Values follow the JSON rule for strings.

Pure: no store, no network.
"""

from __future__ import annotations

from pyoxigraph import Literal, NamedNode

from evaluators.formats.parsing.diagnostics import Diagnostics, quote
from evaluators.formats.parsing.jsonfield import (
    check_keys,
    child,
    describe,
    expect_list,
    expect_object,
    identifier,
    item,
    required,
)
from evaluators.formats.parsing.question_fields import warn_duplicate_ids
from evaluators.formats.parsing.source import decode_text
from evaluators.model import AnswerSet, AnswerValue, Dataset, Question, SourceFormat
from vocab.standard import XSD

_KEYS = frozenset({"id", "answers", "sparql", "query"})
_HEADER = ("id", "answer")


def string_value(text: str) -> AnswerValue:
    """Return an absolute IRI as an IRI, anything else as a plain literal.

    >>> string_value("http://dbpedia.org/resource/Vienna")
    <NamedNode value=http://dbpedia.org/resource/Vienna>
    >>> string_value("Vienna"), string_value("12:30")
    (<Literal value=Vienna datatype=<NamedNode value=http://www.w3.org/2001/XMLSchema#string>>, <Literal value=12:30 datatype=<NamedNode value=http://www.w3.org/2001/XMLSchema#string>>)
    """  # noqa: E501 (doctest output)
    text = text.strip()
    if ":" in text and not any(c.isspace() for c in text):
        try:
            return NamedNode(text)
        except ValueError:
            pass
    return Literal(text)


def _json_value(value: object, path: str, diag: Diagnostics) -> AnswerValue:
    if isinstance(value, str):
        return string_value(value)
    if isinstance(value, bool):
        raise diag.error("a boolean answer must be the only answer", path=path)
    if isinstance(value, int):
        return Literal(str(value), datatype=XSD.integer)
    if isinstance(value, float):
        return Literal(repr(value), datatype=XSD.double)
    raise diag.error(f"expected a string or a number, found {describe(value)}", path=path)


def _json_answers(value: object, path: str, diag: Diagnostics) -> AnswerSet:
    if isinstance(value, bool):
        return AnswerSet(boolean=value)
    items = expect_list(value, path, diag)
    if len(items) == 1 and isinstance(items[0], bool):
        return AnswerSet(boolean=items[0])
    values: dict[AnswerValue, None] = {}
    for i, entry in enumerate(items):
        values.setdefault(_json_value(entry, item(path, i), diag))
    return AnswerSet(tuple(values), has_bindings=True)


def parse_json(doc: object, diag: Diagnostics) -> Dataset:
    """Parse a decoded ``answers-json`` document (a JSON array of ``{id, answers}``).

    Raises:
        DatasetFormatError: an entry is not an object, lacks ``id``, or has values of the
            wrong type; the message gives its JSON path.
    """
    questions = []
    for i, entry in enumerate(expect_list(doc, "$", diag)):
        where = item("$", i)
        obj = expect_object(entry, where, diag)
        check_keys(obj, _KEYS, "answer entry", where, diag)
        qid = identifier(required(obj, "id", where, diag), child(where, "id"), diag)
        sparql = None
        for key in ("sparql", "query"):
            if obj.get(key) is not None:
                if not isinstance(obj[key], str):
                    found = describe(obj[key])
                    raise diag.error(
                        f"expected a SPARQL string, found {found}", path=child(where, key)
                    )
                sparql = str(obj[key]).strip() or None
        answers = None
        if "answers" in obj and obj["answers"] is not None:
            answers = (_json_answers(obj["answers"], child(where, "answers"), diag),)
        questions.append(Question(id=qid, sparql=sparql, answers=answers))
    result = tuple(questions)
    warn_duplicate_ids(result, diag)
    return Dataset(SourceFormat.ANSWERS_JSON, result, warnings=diag.warnings())


def looks_like_tsv(text: str) -> bool:
    """Whether a text reads as ``id<TAB>answer`` lines: its first non-blank line has a tab.

    >>> looks_like_tsv("\\n7\\thttp://ex.org/a\\n"), looks_like_tsv('{"questions": []}')
    (True, False)
    """
    for line in text.splitlines():
        if line.strip():
            return "\t" in line and line.lstrip()[:1] not in ("{", "[", "<")
    return False


def parse_tsv(data: bytes, source: str) -> Dataset:
    """Parse an ``answers-tsv`` file.

    Raises:
        DatasetFormatError: a line is malformed; the message names the line.
    """
    diag = Diagnostics(source)
    text = decode_text(data, source)
    order: list[str] = []
    values: dict[str, list[str]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) == 1:
            raise diag.error(
                f"expected 'id<TAB>answer', found no tab in {quote(line)}", line=number
            )
        if len(fields) > 2:
            raise diag.error(
                f"expected 'id<TAB>answer', found {len(fields)} tab-separated fields in "
                f"{quote(line)} (an answer cannot contain a tab)",
                line=number,
            )
        qid, answer = fields[0].strip(), fields[1].strip()
        if not order and not values and (qid.lower(), answer.lower()) == _HEADER:
            continue
        if not qid:
            raise diag.error(f"the question id is empty in {quote(line)}", line=number)
        if qid not in values:
            order.append(qid)
            values[qid] = []
        if answer:
            values[qid].append(answer)
    questions = []
    for qid in order:
        given = values[qid]
        if len(given) == 1 and given[0].lower() in ("true", "false"):
            answer_set = AnswerSet(boolean=given[0].lower() == "true")
        else:
            unique = dict.fromkeys(string_value(v) for v in given)
            answer_set = AnswerSet(tuple(unique), has_bindings=True)
        questions.append(Question(id=qid, answers=(answer_set,)))
    return Dataset(SourceFormat.ANSWERS_TSV, tuple(questions), warnings=diag.warnings())

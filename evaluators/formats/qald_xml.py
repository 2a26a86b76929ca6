"""Parse QALD XML (QALD-1 … QALD-7 and the NLIWOD QALD-style files) into a ``Dataset``.

The root is ``<dataset id>``; each ``<question id answertype aggregation onlydbo hybrid>``
holds ``<string lang>`` (no ``lang`` means English, as in QALD-1), ``<keywords lang>``,
``<query>`` or ``<pseudoquery>`` (plain or CDATA) and ``<answers>``. Answers come as
``<answer>`` text, as ``<answer>`` with ``<uri>``/``<string>``/``<number>``/``<date>``/
``<boolean>`` children, as such children directly under ``<answers>``, or (NLIWOD's qbench) as
children named after SPARQL variables, possibly nested in ``<query>``. Values are read by the
rules of ``evaluators.formats.parsing.values``; nothing is normalised for scoring here.
"""

from __future__ import annotations

from xml.etree.ElementTree import Element  # a type only; parsing uses defusedxml

from evaluators.formats.parsing.diagnostics import Diagnostics, quote
from evaluators.formats.parsing.question_fields import (
    FLAGS,
    TextCollector,
    answer_type,
    flag,
    is_out_of_scope,
    split_keywords,
    stripped,
    warn_duplicate_ids,
)
from evaluators.formats.parsing.values import AnswerSetBuilder, text_value
from evaluators.formats.parsing.xml_document import XmlDocument, decode_xml, load_xml, local_name
from evaluators.model import AnswerSet, Dataset, Question, SourceFormat

_DATASET_ATTRIBUTES = frozenset({"id", "description"})
_QUESTION_ATTRIBUTES = frozenset({"id", "answertype", *FLAGS})
_QUERY_TAGS = ("query", "pseudoquery")
# Child elements that say what kind of value they hold; other names are SPARQL variables.
_VALUE_TAGS = frozenset({"uri", "string", "number", "date", "boolean"})


def parse(data: bytes, diag: Diagnostics) -> Dataset:
    """Parse the bytes of a QALD XML file.

    Args:
        data: the raw file content.
        diag: the file's diagnostics.

    Returns:
        The dataset.

    Raises:
        DatasetFormatError: bad encoding, DOCTYPE, malformed XML, another root element, or a
            question without an id.
    """
    doc = load_xml(decode_xml(data, diag.source), diag)
    root = doc.root
    if local_name(root.tag) != "dataset":
        raise diag.error(
            f"the XML root element is <{_display(root.tag)}>; expected <dataset> (QALD XML)",
            line=doc.line(root),
        )
    _check_attributes(root, _DATASET_ATTRIBUTES, "dataset", doc, diag)
    questions = []
    for element in root:
        if local_name(element.tag) == "question":
            questions.append(_question(element, doc, diag))
        else:
            diag.unknown_field(element.tag, "dataset", _where(element, doc))
    result = tuple(questions)
    warn_duplicate_ids(result, diag)
    return Dataset(
        SourceFormat.QALD_XML, result, root.get("id"), root.get("description"), diag.warnings()
    )


def _display(tag: str) -> str:
    """Return ``{ns}name`` as ``name`` plus its namespace, for messages."""
    name = local_name(tag)
    return name if name == tag else f"{name}> in namespace <{tag[1:].split('}', 1)[0]}"


def _where(element: Element, doc: XmlDocument) -> str:
    line = doc.line(element)
    return f"<{local_name(element.tag)}> on line {line}" if line else f"<{element.tag}>"


def _check_attributes(
    element: Element, known: frozenset[str], where: str, doc: XmlDocument, diag: Diagnostics
) -> None:
    for name in element.attrib:
        if name not in known:
            diag.unknown_field(name, f"<{where}> attributes", _where(element, doc))


def _text(element: Element) -> str:
    if len(element) == 0:  # the common case: no child elements
        return element.text or ""
    return "".join(element.itertext())


def _question(element: Element, doc: XmlDocument, diag: Diagnostics) -> Question:
    qid = (element.get("id") or "").strip()
    if not qid:
        raise diag.error(
            'a <question> has no id attribute; expected <question id="...">', line=doc.line(element)
        )
    _check_attributes(element, _QUESTION_ATTRIBUTES, "question", doc, diag)
    label = element.get("answertype")
    kind = answer_type(label, diag, qid)
    flags = [
        flag(v, name, diag, qid) if (v := element.get(name)) is not None else None for name in FLAGS
    ]
    texts = TextCollector(diag, qid)
    queries: dict[str, str] = {}
    answers: list[AnswerSet] = []
    kind_value = kind.value if kind else None
    for child in element:
        tag = local_name(child.tag)
        if tag == "string":
            texts.add_text(child.get("lang") or "en", _text(child))
        elif tag == "keywords":
            texts.add_keywords(child.get("lang") or "en", split_keywords(_text(child)))
        elif tag in _QUERY_TAGS:
            _query(child, tag, queries, answers, kind_value, doc, diag, qid)
        elif tag == "answers":
            answers.append(_answer_set(child, kind_value, diag, qid))
        else:
            diag.unknown_field(tag, "<question>", _where(child, doc))
    sparql, pseudo = queries.get("query"), queries.get("pseudoquery")
    return Question(
        id=qid,
        texts=texts.build(),
        answer_type=kind,
        answer_type_label=label,
        aggregation=flags[0],
        only_dbo=flags[1],
        hybrid=flags[2],
        sparql=sparql,
        pseudo_query=pseudo,
        answers=tuple(answers) if answers else None,
        out_of_scope=is_out_of_scope(sparql, pseudo),
    )


def _query(
    element: Element,
    tag: str,
    queries: dict[str, str],
    answers: list[AnswerSet],
    kind: str | None,
    doc: XmlDocument,
    diag: Diagnostics,
    qid: str,
) -> None:
    # The query text is the element's own text; qbench files nest <answers> after it.
    parts = [element.text or ""]
    for child in element:
        if local_name(child.tag) == "answers":
            answers.append(_answer_set(child, kind, diag, qid))
        else:
            diag.unknown_field(child.tag, f"<{tag}>", _where(child, doc))
        parts.append(child.tail or "")
    text = stripped("".join(parts))
    if text is None:
        return
    if tag in queries:
        diag.warn(
            f"question {quote(qid)} has a second <{tag}>; kept the first",
            question_id=qid,
            key=("second-query", qid, tag),
        )
        return
    queries[tag] = text


def _answer_set(element: Element, kind: str | None, diag: Diagnostics, qid: str) -> AnswerSet:
    builder = AnswerSetBuilder(diag, qid)
    for answer in element:
        if local_name(answer.tag) != "answer":
            _add_value(answer, kind, builder, diag, qid)
            continue
        answer_kind = answer.get("answerType") or kind
        children = list(answer)
        # One <answer> is one answer. QALD-1/2 write a resource as <uri> followed by its
        # <string> label; the label is not a second answer (GERBIL keeps the first line of the
        # answer's text, i.e. the URI). Without a <uri>, the first typed child counts.
        # Variable-named children (qbench's <sector>, <sum>) are one value per variable.
        filled = [c for c in children if _text(c).strip()]
        variables = [c for c in filled if local_name(c.tag) not in _VALUE_TAGS]
        typed = [c for c in filled if local_name(c.tag) in _VALUE_TAGS]
        uris = [c for c in typed if local_name(c.tag) == "uri"]
        chosen = variables + (uris or typed[:1])
        for child in chosen:
            _add_value(child, answer_kind, builder, diag, qid)
        text = (answer.text or "").strip()
        if text and not children:
            builder.add(text_value(text, answer_kind, diag, qid))
    return builder.build()


def _add_value(
    element: Element, kind: str | None, builder: AnswerSetBuilder, diag: Diagnostics, qid: str
) -> None:
    tag = local_name(element.tag)
    text = _text(element).strip()
    if tag in _VALUE_TAGS:
        kind = tag
    else:
        builder.add_variable(tag)
        kind = element.get("answerType") or kind
    if text:
        builder.add(text_value(text, kind, diag, qid))

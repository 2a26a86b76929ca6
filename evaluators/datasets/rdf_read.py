"""Pure mapping from RDF quads back to parsed questions (``evaluators.model``).

``questions_from_quads`` rebuilds, in their order, the questions of a dataset version (or a
system's stored answers) that ``evaluators.datasets.rdf`` wrote; ``values_from_json`` decodes
the exact copy of answer values. Nothing here touches the store, the clock or the network.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable

from pyoxigraph import Literal, NamedNode, Quad

from evaluators.datasets.rdf import ANSWER_TYPE_TERMS
from evaluators.model import (
    Annotation,
    AnswerSet,
    AnswerValue,
    BioasqGold,
    Choices,
    Execution,
    Question,
    QuestionText,
    Snippet,
    Text2SparqlQuestion,
    question_order,
)
from vocab.project import QAB
from vocab.standard import RDF, RDFS

_ANSWER_TYPES_BY_TERM = {term: at for at, term in ANSWER_TYPE_TERMS.items()}

_Props = dict[NamedNode, list[NamedNode | Literal]]


def _group(quads: Iterable[Quad]) -> dict[NamedNode, _Props]:
    by_subject: dict[NamedNode, _Props] = defaultdict(lambda: defaultdict(list))
    for q in quads:
        if isinstance(q.subject, NamedNode) and isinstance(q.object, NamedNode | Literal):
            by_subject[q.subject][q.predicate].append(q.object)
    return by_subject


def _one(props: _Props, p: NamedNode) -> NamedNode | Literal | None:
    values = props.get(p)
    return values[0] if values else None


def _str(props: _Props, p: NamedNode) -> str | None:
    v = _one(props, p)
    return None if v is None else v.value


def _flag(props: _Props, p: NamedNode) -> bool | None:
    v = _one(props, p)
    return None if v is None else v.value == "true"


def _num(props: _Props, p: NamedNode, default: int = 0) -> int:
    v = _one(props, p)
    return default if v is None else int(v.value)


def _ranked(
    subjects: dict[NamedNode, _Props], nodes: list[NamedNode | Literal], key: NamedNode
) -> list[_Props]:
    found = [subjects[n] for n in nodes if isinstance(n, NamedNode) and n in subjects]
    return sorted(found, key=lambda props: _num(props, key))


def questions_from_quads(
    quads: Iterable[Quad], kind: NamedNode = QAB.Question
) -> tuple[Question, ...]:
    """Rebuild the questions of a dataset version (the nodes of class ``kind``) from its quads.

    Answer values come back exactly as the source wrote them, in file order, from the
    ``qab:answerJson`` copy: Oxigraph stores typed literals in canonical form (``xsd:int`` becomes
    ``xsd:integer``, ``1.50`` becomes ``1.5``), so ``qab:answer`` alone would lose details.
    """
    subjects = _group(quads)
    questions: list[tuple[int, Question]] = []
    for _subject, props in subjects.items():
        if kind not in props.get(RDF.type, []):
            continue
        questions.append((_num(props, QAB.position), _question(subjects, props)))
    questions.sort(key=lambda pair: pair[0])
    return tuple(q for _, q in questions)


def _question(subjects: dict[NamedNode, _Props], props: _Props) -> Question:
    texts: dict[str, str] = {}
    keywords: dict[str, tuple[str, ...]] = {}
    for lit in props.get(QAB.text, []):
        if isinstance(lit, Literal):
            texts[(lit.language or "").replace("-", "_")] = lit.value
    for lit in props.get(QAB.keywords, []):
        if isinstance(lit, Literal):
            words = tuple(w.strip() for w in lit.value.split(",") if w.strip())
            keywords[(lit.language or "").replace("-", "_")] = words
    has_answers = _flag(props, QAB.hasGoldAnswers)
    answer_sets = tuple(
        _answer_set(a) for a in _ranked(subjects, props.get(QAB.answerSet, []), QAB.position)
    )
    at_term = _one(props, QAB.answerType)
    annotations = tuple(
        Annotation(
            language=_str(a, QAB.inLanguage) or "",
            begin=_num(a, QAB.charBegin),
            end=_num(a, QAB.charEnd),
            text=_str(a, QAB.annotatedText) or "",
            resource=_str(a, QAB.resource),
            kind=_str(a, QAB.annotationType),
        )
        for a in _ranked(subjects, props.get(QAB.annotation, []), QAB.position)
    )
    confidence = _str(props, QAB.confidence)
    return Question(
        id=_str(props, QAB.questionId) or "",
        texts=tuple(
            QuestionText(lang, text, keywords.get(lang, ())) for lang, text in texts.items()
        ),
        answer_type=_ANSWER_TYPES_BY_TERM.get(at_term) if isinstance(at_term, NamedNode) else None,
        answer_type_label=_str(props, QAB.answerTypeLabel),
        aggregation=_flag(props, QAB.aggregation),
        only_dbo=_flag(props, QAB.onlyDbo),
        hybrid=_flag(props, QAB.hybrid),
        sparql=_str(props, QAB.sparql),
        pseudo_query=_str(props, QAB.pseudoQuery),
        schemaless_query=_str(props, QAB.schemalessQuery),
        answers=answer_sets if has_answers else None,
        answer_item_types=tuple(sorted(v.value for v in props.get(QAB.answerItemType, []))),
        annotations=annotations,
        confidence=float(confidence) if confidence is not None else None,
        out_of_scope=bool(_flag(props, QAB.outOfScope)),
        bioasq=_bioasq(subjects, props),
        text2sparql=_text2sparql(props),
        reply=_str(props, QAB.replyJson),
        choices=_choices(subjects, props),
        execution=_execution(props),
    )


def _choices(subjects: dict[NamedNode, _Props], props: _Props) -> Choices | None:
    part = _str(props, QAB.benchmarkPart)
    if part is None:
        return None
    options = tuple(
        (_str(o, QAB.optionLabel) or "", _str(o, QAB.optionText) or "")
        for o in _ranked(subjects, props.get(QAB.option, []), QAB.position)
    )
    pmids = tuple(sorted((v.value for v in props.get(QAB.pmid, [])), key=question_order))
    return Choices(part, options, pmids)


def _execution(props: _Props) -> Execution | None:
    status = _str(props, QAB.executionStatus)
    if status is None:
        return None
    return Execution(status, _str(props, QAB.executionResult))


def values_from_json(text: str) -> tuple[AnswerValue, ...]:
    """Decode ``values_json`` output (the inverse, exactly)."""
    values: list[AnswerValue] = []
    for item in json.loads(text):
        kind, value = item[0], item[1]
        if kind == "u":
            values.append(NamedNode(value))
        elif kind == "l":
            values.append(Literal(value, language=item[2]))
        elif kind == "t":
            values.append(Literal(value, datatype=NamedNode(item[2])))
        else:
            values.append(Literal(value))
    return tuple(values)


def _answer_set(props: _Props) -> AnswerSet:
    exact = _str(props, QAB.answerJson)
    values: list[AnswerValue] | tuple[AnswerValue, ...]
    if exact is not None:
        values = values_from_json(exact)
    else:
        values = sorted(props.get(QAB.answer, []), key=str)
    return AnswerSet(
        values=tuple(values),
        boolean=_flag(props, QAB.booleanAnswer),
        variables=tuple(sorted(v.value for v in props.get(QAB.answerVariable, []))),
        has_bindings=bool(_flag(props, QAB.bindingsGiven)),
        lexical=bool(_flag(props, QAB.lexicalOnly)),
    )


def _bioasq(subjects: dict[NamedNode, _Props], props: _Props) -> BioasqGold | None:
    kind = _str(props, QAB.bioasqType)
    if kind is None:
        return None
    docs = _ranked(subjects, props.get(QAB.relevantDocument, []), QAB.rank)
    snippets = _ranked(subjects, props.get(QAB.snippet, []), QAB.rank)
    entities = _ranked(subjects, props.get(QAB.answerEntity, []), QAB.rank)
    return BioasqGold(
        question_type=kind,
        documents=tuple(_str(d, QAB.document) or "" for d in docs),
        snippets=tuple(
            Snippet(
                document=_str(s, QAB.document) or "",
                text=_str(s, QAB.snippetText) or "",
                begin_section=_str(s, QAB.beginSection) or "",
                end_section=_str(s, QAB.endSection) or "",
                offset_begin=_num(s, QAB.offsetInBeginSection),
                offset_end=_num(s, QAB.offsetInEndSection),
            )
            for s in snippets
        ),
        concepts=tuple(sorted(v.value for v in props.get(QAB.concept, []))),
        yesno=_str(props, QAB.exactAnswer),
        entities=tuple(
            tuple([_str(e, RDFS.label) or "", *sorted(v.value for v in e.get(QAB.synonym, []))])
            for e in entities
        ),
        ideal_answers=tuple(sorted(v.value for v in props.get(QAB.idealAnswer, []))),
    )


def _text2sparql(props: _Props) -> Text2SparqlQuestion | None:
    dataset = _str(props, QAB.text2sparqlDataset)
    if dataset is None:
        return None

    def names(prop: NamedNode) -> tuple[str, ...]:
        return tuple(sorted(v.value for v in props.get(prop, [])))

    return Text2SparqlQuestion(
        dataset,
        _str(props, QAB.qnamePrefix) or "",
        _str(props, QAB.defaultNamespace),
        names(QAB.feature),
        names(QAB.schemaClass),
        names(QAB.schemaProperty),
    )

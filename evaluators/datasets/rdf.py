"""Pure mapping from parsed datasets (``evaluators.model``) to RDF quads.

``version_quads`` describes one dataset version: its metadata goes into the catalog graph and
its questions into the version's own graph. ``question_triples`` and ``answer_set_triples``
describe one question and one answer set (system answers use them too). The terms of answer
types (``ANSWER_TYPE_TERMS``) and the JSON copy of answer values (``values_json``) are written
down here once; ``evaluators.datasets.rdf_read`` reads them back. Nothing here touches the
store, the clock or the network.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from pyoxigraph import Literal, NamedNode, Quad

from evaluators.model import (
    Annotation,
    AnswerSet,
    AnswerType,
    AnswerValue,
    BioasqGold,
    Choices,
    Dataset,
    Question,
    Text2SparqlQuestion,
)
from store import graphs
from vocab import iris
from vocab.languages import language_iri
from vocab.project import QAB
from vocab.standard import DCAT, DCTERMS, PROV, RDF, RDFS, XSD

ANSWER_TYPE_TERMS: dict[AnswerType, NamedNode] = {
    AnswerType.RESOURCE: QAB.Resource,
    AnswerType.STRING: QAB.String,
    AnswerType.NUMBER: QAB.Number,
    AnswerType.DATE: QAB.Date,
    AnswerType.BOOLEAN: QAB.Boolean,
}
_MAX_WARNINGS = 200

Triple = tuple[NamedNode, NamedNode, NamedNode | Literal]


@dataclass(frozen=True, slots=True)
class VersionMeta:
    """What a load knows about the file besides its questions."""

    name: str
    version: int
    title: str
    sha256: str
    byte_size: int
    source: str  # a local path or a URL
    loaded_at: datetime
    knowledge_base: str | None = None
    split: str | None = None
    catalog_name: str | None = None
    previous_version: int | None = None
    # A version computed from another one (gold refresh): its IRI and the endpoint queried.
    derived_from: str | None = None
    refreshed_with: str | None = None
    revision: str | None = None  # what a derived version changed (default: gold re-computed)
    # The licence IRI of the file (default: qab:SourceLicense, the terms of its source).
    license: str | None = None


def _int(value: int) -> Literal:
    return Literal(str(value), datatype=XSD.integer)


def _bool(value: bool) -> Literal:
    return Literal("true" if value else "false", datatype=XSD.boolean)


def _iri_or_literal(value: str) -> NamedNode | Literal:
    try:
        return NamedNode(value)
    except ValueError:
        return Literal(value, datatype=XSD.anyURI)


def file_name(source: str) -> str:
    """Return the last component of a local path (either separator), never its directories.

    >>> file_name("/srv/qabench/uploads/x1/qald-9.json"), file_name("C:" + chr(92) + "q.xml")
    ('qald-9.json', 'q.xml')
    """
    return re.split(r"[\\/]", source.rstrip("/\\"))[-1] or source


def answer_type_distribution(dataset: Dataset) -> dict[str, int]:
    """Return how many questions have each answer type (``unknown`` when absent).

    >>> from evaluators.model import SourceFormat
    >>> answer_type_distribution(Dataset(SourceFormat.QALD_JSON, (Question("1"),)))
    {'unknown': 1}
    """
    counts = Counter(q.answer_type.value if q.answer_type else "unknown" for q in dataset.questions)
    return dict(sorted(counts.items()))


def dataset_languages(dataset: Dataset) -> list[str]:
    """Return every language that has at least one question string, sorted."""
    return sorted({lang for q in dataset.questions for lang in q.languages})


def version_quads(base: str, dataset: Dataset, meta: VersionMeta) -> list[Quad]:
    """Return the quads describing one dataset version (catalog metadata and questions).

    ``version_entry_quads`` and ``version_question_quads`` give the two parts apart (the
    questions as a stream, for large versions).
    """
    return version_entry_quads(base, dataset, meta) + list(
        version_question_quads(base, dataset, meta)
    )


def version_entry_quads(base: str, dataset: Dataset, meta: VersionMeta) -> list[Quad]:
    """Return the catalog quads of one dataset version (what makes it visible).

    The dataset and the version are DCAT datasets that pass the DCAT-AP 3 shapes: each has a
    title and a description, languages are ``dct:LinguisticSystem`` IRIs of the EU authority
    (``vocab.languages``; the tag as the file writes it is kept with ``qab:inLanguage``), and
    a downloaded file is the version's ``prov:hadPrimarySource``. Versions written before
    stated languages as ``dct:language`` literals and a URL as ``dct:source``; readers accept
    both (``store/queries/dataset_versions.rq``).

    Args:
        base: the base IRI.
        dataset: the parsed file.
        meta: file metadata; ``meta.version`` is the version number being created.

    Returns:
        Quads for the catalog graph and for the version graph.
    """
    catalog = graphs.catalog_graph(base)
    ver = iris.dataset_version_iri(base, meta.name, meta.version)
    triples = [
        *_dataset_triples(base, meta),
        *_version_triples(base, dataset, meta),
        *_language_triples(ver, dataset_languages(dataset)),
        *_answer_type_triples(ver, dataset),
        *_provenance_triples(base, meta),
    ]
    for warning in dataset.warnings[:_MAX_WARNINGS]:
        prefix = f"question {warning.question_id}: " if warning.question_id else ""
        triples.append((ver, QAB.warning, Literal(prefix + warning.message)))
    return [Quad(s, p, o, catalog) for s, p, o in triples]


def dataset_description(name: str) -> str:
    """Return the description of a dataset (the same for each of its versions).

    >>> dataset_description("qald-9")
    'The questions and gold answers of the benchmark qald-9, one version per file loaded.'
    """
    return f"The questions and gold answers of the benchmark {name}, one version per file loaded."


def version_description(dataset: Dataset, meta: VersionMeta) -> str:
    """Return the description of a dataset version: what it holds and where it came from.

    >>> from evaluators.model import SourceFormat
    >>> meta = VersionMeta("d", 2, "Demo", "", 0, "/x/demo.json", datetime(2026, 1, 1))
    >>> version_description(Dataset(SourceFormat.QALD_JSON, (Question("1"),)), meta)
    'Version 2 of Demo: 1 question (qald-json, from demo.json).'
    """
    count = len(dataset.questions)
    languages = dataset_languages(dataset)
    held = f"{count} question{'' if count == 1 else 's'}"
    if languages:
        held += " in " + ", ".join(languages)
    origin = meta.source if _is_url(meta.source) else file_name(meta.source)
    if meta.derived_from:
        change = meta.revision or "gold answers re-computed"
        origin = f"{change} from {meta.derived_from}"
    else:
        origin = f"from {origin}"
    kb = f"; knowledge base {meta.knowledge_base}" if meta.knowledge_base else ""
    return f"Version {meta.version} of {meta.title}: {held} ({dataset.format.value}, {origin}{kb})."


def _is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def _en(text: str) -> Literal:
    return Literal(text, language="en")


def _dataset_triples(base: str, meta: VersionMeta) -> list[Triple]:
    ds = iris.dataset_iri(base, meta.name)
    ver = iris.dataset_version_iri(base, meta.name, meta.version)
    return [
        (ds, RDF.type, QAB.Dataset),
        (ds, RDF.type, DCAT.Dataset),
        (ds, DCTERMS.identifier, Literal(meta.name)),
        (ds, DCTERMS.title, Literal(meta.title)),
        (ds, DCTERMS.description, _en(dataset_description(meta.name))),
        (ds, QAB.version, ver),
        (ds, DCAT.hasVersion, ver),
    ]


def _version_triples(base: str, dataset: Dataset, meta: VersionMeta) -> list[Triple]:
    ver = iris.dataset_version_iri(base, meta.name, meta.version)
    t: list[Triple] = [
        (ver, RDF.type, QAB.DatasetVersion),
        (ver, RDF.type, DCAT.Dataset),
        (ver, RDF.type, PROV.Entity),
        (ver, DCAT.isVersionOf, iris.dataset_iri(base, meta.name)),
        (ver, DCTERMS.title, Literal(f"{meta.title} (version {meta.version})")),
        (ver, DCTERMS.description, _en(version_description(dataset, meta))),
        (ver, QAB.versionNumber, _int(meta.version)),
        (ver, DCAT.version, Literal(str(meta.version))),
        (ver, QAB.sha256, Literal(meta.sha256)),
        (ver, DCAT.byteSize, Literal(str(meta.byte_size), datatype=XSD.nonNegativeInteger)),
        (ver, QAB.sourceFormat, Literal(dataset.format.value)),
        (ver, QAB.questionCount, _int(len(dataset.questions))),
        (ver, QAB.graph, graphs.dataset_graph(base, meta.name, meta.version)),
    ]
    if _is_url(meta.source):
        # DCAT-AP reserves dct:source for a dcat:Dataset; the file is where the data came from.
        t.append((ver, PROV.hadPrimarySource, _iri_or_literal(meta.source)))
    else:
        # Public data never names the server's directories: only the file's own name.
        t.append((ver, QAB.sourceFile, Literal(file_name(meta.source))))
    licence = _iri_or_literal(meta.license) if meta.license else QAB.SourceLicense
    t.append((ver, DCTERMS.license, licence))
    for prop, value in (
        (QAB.knowledgeBase, meta.knowledge_base),
        (QAB.split, meta.split),
        (QAB.catalogName, meta.catalog_name),
        (DCTERMS.identifier, dataset.source_id),
    ):
        if value:
            t.append((ver, prop, Literal(value)))
    if meta.previous_version is not None:
        prev = iris.dataset_version_iri(base, meta.name, meta.previous_version)
        t.append((ver, DCAT.previousVersion, prev))
    return t


def _language_triples(ver: NamedNode, languages: Iterable[str]) -> list[Triple]:
    """Each language as its tag and, when ``vocab.languages`` knows it, the EU IRI."""
    t: list[Triple] = []
    for tag in languages:
        t.append((ver, QAB.inLanguage, Literal(tag)))
        iri = language_iri(tag)
        if iri is not None:
            t += [(ver, DCTERMS.language, iri), (iri, RDF.type, DCTERMS.LinguisticSystem)]
    return t


def _answer_type_triples(ver: NamedNode, dataset: Dataset) -> list[Triple]:
    t: list[Triple] = []
    for label, count in answer_type_distribution(dataset).items():
        node = iris.sub_iri(ver, "answer-types", label)
        t += [
            (ver, QAB.answerTypeCount, node),
            (node, RDF.type, QAB.AnswerTypeCount),
            (node, RDFS.label, Literal(label)),
            (node, QAB.count, _int(count)),
        ]
        if label in AnswerType.__members__.values():
            t.append((node, QAB.answerType, ANSWER_TYPE_TERMS[AnswerType(label)]))
    return t


_RECOMPUTED = "gold answers re-computed from the gold SPARQL queries"


def _provenance_triples(base: str, meta: VersionMeta) -> list[Triple]:
    ver = iris.dataset_version_iri(base, meta.name, meta.version)
    loaded = Literal(meta.loaded_at.isoformat(), datatype=XSD.dateTime)
    t: list[Triple] = [(ver, PROV.generatedAtTime, loaded)]
    if not meta.derived_from:
        return t
    activity = iris.sub_iri(ver, "refresh")
    derived = NamedNode(meta.derived_from)
    t += [
        (ver, PROV.wasDerivedFrom, derived),
        (ver, PROV.wasRevisionOf, derived),
        (ver, PROV.wasGeneratedBy, activity),
        (activity, RDF.type, PROV.Activity),
        (activity, RDFS.label, Literal(meta.revision or _RECOMPUTED)),
        (activity, PROV.used, derived),
    ]
    if meta.refreshed_with:
        t.append((activity, PROV.used, _iri_or_literal(meta.refreshed_with)))
        t.append((activity, QAB.kbEndpoint, Literal(meta.refreshed_with)))
    t.append((activity, PROV.endedAtTime, loaded))
    return t


def version_question_quads(base: str, dataset: Dataset, meta: VersionMeta) -> Iterator[Quad]:
    """Yield the quads of one dataset version's questions (its own graph), one at a time."""
    graph = graphs.dataset_graph(base, meta.name, meta.version)
    ver = iris.dataset_version_iri(base, meta.name, meta.version)
    seen: Counter[str] = Counter()
    for position, question in enumerate(dataset.questions):
        # A duplicated id (it happens in published files) must not merge two questions: later
        # occurrences get "~2", "~3", ... in their IRI; qab:questionId keeps the id as written.
        seen[question.id] += 1
        local = question.id if seen[question.id] == 1 else f"{question.id}~{seen[question.id]}"
        qiri = iris.question_iri(base, meta.name, meta.version, local)
        yield Quad(ver, QAB.question, qiri, graph)
        yield from (Quad(s, p, o, graph) for s, p, o in question_triples(qiri, question, position))


def question_triples(
    qiri: NamedNode, q: Question, position: int, kind: NamedNode = QAB.Question
) -> list[Triple]:
    """Return the triples describing one question (graph-free).

    ``kind`` is the node's class: a question, or a system's answer to one (``qab:SystemAnswer``).
    """
    t: list[Triple] = [
        (qiri, RDF.type, kind),
        (qiri, QAB.questionId, Literal(q.id)),
        (qiri, QAB.position, _int(position)),
        (qiri, QAB.hasGoldAnswers, _bool(q.has_answers)),
    ]
    for entry in q.texts:
        t.append((qiri, QAB.text, _text(entry.text, entry.language)))
        if entry.keywords:
            t.append((qiri, QAB.keywords, _text(", ".join(entry.keywords), entry.language)))
    if q.answer_type is not None:
        t.append((qiri, QAB.answerType, ANSWER_TYPE_TERMS[q.answer_type]))
    if q.answer_type_label is not None:
        t.append((qiri, QAB.answerTypeLabel, Literal(q.answer_type_label)))
    for prop, flag in (
        (QAB.aggregation, q.aggregation),
        (QAB.onlyDbo, q.only_dbo),
        (QAB.hybrid, q.hybrid),
    ):
        if flag is not None:
            t.append((qiri, prop, _bool(flag)))
    if q.out_of_scope:
        t.append((qiri, QAB.outOfScope, _bool(True)))
    for prop, text in (
        (QAB.sparql, q.sparql),
        (QAB.pseudoQuery, q.pseudo_query),
        (QAB.schemalessQuery, q.schemaless_query),
    ):
        if text is not None:
            t.append((qiri, prop, Literal(text)))
    for i, answer in enumerate(q.answers or ()):
        node = iris.sub_iri(qiri, "answers", str(i))
        t.extend(answer_set_triples(qiri, node, answer, i))
    for item_type in q.answer_item_types:
        t.append((qiri, QAB.answerItemType, _iri_or_literal(item_type)))
    for i, ann in enumerate(q.annotations):
        node = iris.sub_iri(qiri, "annotations", str(i))
        t.extend(_annotation_triples(qiri, node, ann, i))
    if q.confidence is not None:
        t.append((qiri, QAB.confidence, Literal(repr(q.confidence), datatype=XSD.double)))
    if q.bioasq is not None:
        t.extend(_bioasq_triples(qiri, q.bioasq))
    if q.text2sparql is not None:
        t.extend(_text2sparql_triples(qiri, q.text2sparql))
    if q.reply is not None:
        t.append((qiri, QAB.replyJson, Literal(q.reply, datatype=RDF.JSON)))
    if q.choices is not None:
        t.extend(_choice_triples(qiri, q.choices))
    if q.execution is not None:
        t.append((qiri, QAB.executionStatus, Literal(q.execution.status)))
        if q.execution.result is not None:
            t.append((qiri, QAB.executionResult, Literal(q.execution.result)))
    return t


def _choice_triples(qiri: NamedNode, choices: Choices) -> list[Triple]:
    t: list[Triple] = [(qiri, QAB.benchmarkPart, Literal(choices.part))]
    for i, (letter, text) in enumerate(choices.options):
        node = iris.sub_iri(qiri, "options", str(i))
        t += [
            (qiri, QAB.option, node),
            (node, RDF.type, QAB.AnswerOption),
            (node, QAB.position, _int(i)),
            (node, QAB.optionLabel, Literal(letter)),
            (node, QAB.optionText, Literal(text)),
        ]
    t.extend((qiri, QAB.pmid, Literal(pmid)) for pmid in choices.pmids)
    return t


def _text2sparql_triples(qiri: NamedNode, parts: Text2SparqlQuestion) -> list[Triple]:
    t: list[Triple] = [
        (qiri, QAB.text2sparqlDataset, _iri_or_literal(parts.dataset)),
        (qiri, QAB.qnamePrefix, Literal(parts.prefix)),
    ]
    if parts.default_namespace is not None:
        t.append((qiri, QAB.defaultNamespace, Literal(parts.default_namespace)))
    for prop, names in (
        (QAB.feature, parts.features),
        (QAB.schemaClass, parts.classes),
        (QAB.schemaProperty, parts.properties),
    ):
        t.extend((qiri, prop, Literal(name)) for name in names)
    return t


def _text(text: str, language: str) -> Literal:
    # RDF language tags are BCP 47 (hyphens); QALD files write hi_IN and pt_BR. A tag that is
    # still not well-formed is kept as a plain literal rather than failing the whole load.
    tag = language.strip().replace("_", "-")
    if not tag:
        return Literal(text)
    try:
        return Literal(text, language=tag)
    except ValueError:
        return Literal(text)


def answer_set_triples(
    owner: NamedNode, node: NamedNode, answer: AnswerSet, position: int
) -> list[Triple]:
    """Return the triples of one answer set attached to ``owner``."""
    t: list[Triple] = [
        (owner, QAB.answerSet, node),
        (node, RDF.type, QAB.AnswerSet),
        (node, QAB.position, _int(position)),
    ]
    t.extend((node, QAB.answer, value) for value in answer.values)
    if answer.values:
        t.append((node, QAB.answerJson, Literal(values_json(answer.values), datatype=RDF.JSON)))
    if answer.boolean is not None:
        t.append((node, QAB.booleanAnswer, _bool(answer.boolean)))
    if answer.has_bindings:
        t.append((node, QAB.bindingsGiven, _bool(True)))
    if answer.lexical:
        t.append((node, QAB.lexicalOnly, _bool(True)))
    t.extend((node, QAB.answerVariable, Literal(v)) for v in answer.variables)
    return t


def values_json(values: Iterable[AnswerValue]) -> str:
    """Return answer values as a compact JSON array that keeps every lexical detail.

    >>> values_json([NamedNode("http://e/a"), Literal("1.50", datatype=XSD.decimal)])
    '[["u","http://e/a"],["t","1.50","http://www.w3.org/2001/XMLSchema#decimal"]]'
    """
    items: list[list[str]] = []
    for v in values:
        if isinstance(v, NamedNode):
            items.append(["u", v.value])
        elif v.language:
            items.append(["l", v.value, v.language])
        elif v.datatype == XSD.string:
            items.append(["s", v.value])
        else:
            items.append(["t", v.value, v.datatype.value])
    return json.dumps(items, ensure_ascii=False, separators=(",", ":"))


def _annotation_triples(qiri: NamedNode, node: NamedNode, a: Annotation, i: int) -> list[Triple]:
    t: list[Triple] = [
        (qiri, QAB.annotation, node),
        (node, RDF.type, QAB.Annotation),
        (node, QAB.position, _int(i)),
        (node, QAB.inLanguage, Literal(a.language)),
        (node, QAB.charBegin, _int(a.begin)),
        (node, QAB.charEnd, _int(a.end)),
        (node, QAB.annotatedText, Literal(a.text)),
    ]
    if a.resource is not None:
        t.append((node, QAB.resource, _iri_or_literal(a.resource)))
    if a.kind is not None:
        t.append((node, QAB.annotationType, Literal(a.kind)))
    return t


def _bioasq_triples(qiri: NamedNode, b: BioasqGold) -> list[Triple]:
    t: list[Triple] = [(qiri, QAB.bioasqType, Literal(b.question_type))]
    for i, doc in enumerate(b.documents):
        node = iris.sub_iri(qiri, "documents", str(i))
        t += [
            (qiri, QAB.relevantDocument, node),
            (node, QAB.document, _iri_or_literal(doc)),
            (node, QAB.rank, _int(i)),
        ]
    for i, sn in enumerate(b.snippets):
        node = iris.sub_iri(qiri, "snippets", str(i))
        t += [
            (qiri, QAB.snippet, node),
            (node, RDF.type, QAB.Snippet),
            (node, QAB.rank, _int(i)),
            (node, QAB.document, _iri_or_literal(sn.document)),
            (node, QAB.snippetText, Literal(sn.text)),
            (node, QAB.beginSection, Literal(sn.begin_section)),
            (node, QAB.endSection, Literal(sn.end_section)),
            (node, QAB.offsetInBeginSection, _int(sn.offset_begin)),
            (node, QAB.offsetInEndSection, _int(sn.offset_end)),
        ]
    t.extend((qiri, QAB.concept, _iri_or_literal(c)) for c in b.concepts)
    if b.yesno is not None:
        t.append((qiri, QAB.exactAnswer, Literal(b.yesno)))
    for i, synonyms in enumerate(b.entities):
        node = iris.sub_iri(qiri, "entities", str(i))
        t += [
            (qiri, QAB.answerEntity, node),
            (node, RDF.type, QAB.AnswerEntity),
            (node, QAB.rank, _int(i)),
        ]
        for j, name in enumerate(synonyms):
            t.append((node, RDFS.label if j == 0 else QAB.synonym, Literal(name)))
    t.extend((qiri, QAB.idealAnswer, Literal(text)) for text in b.ideal_answers)
    return t

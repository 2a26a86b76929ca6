"""A RAG run as RDF provenance in the public rag graph, and back.

``run_quads`` maps a ``RagRun`` to quads in ``store.graphs.rag_graph(base)`` under the run IRI
``vocab.iris.rag_run_iri(base, run_id)``; ``run_from_quads`` reads such a description back (the
permalink page renders from the store). Owned nodes live below the run IRI::

    <run> a qab:RagRun ; qab:text "question"@en ; qab:bioasqType ; qab:expandedQuery ;
          qab:queryEdited ; qab:queryRun ; qab:retrievalFallback ; qab:shortAnswer ;
          qab:citedAnswer ; qab:exactAnswer ; qab:generator ; qab:model ; qab:settings (rdf:JSON) ;
          qab:warning ; prov:startedAtTime ; prov:endedAtTime ; dcterms:hasPart <run>/stage/{name} .
    <run>/document/{rank}  a qab:RetrievedDocument ; qab:rank ; qab:pmid ; qab:score ; dcterms:title
    <run>                  qab:answered ; qab:abstentionReason (when it did not answer) ;
                           qab:indexName ; qab:indexDocuments ; qab:demoIndex
    <run>/snippet/{n}      a qab:Snippet ; qab:rank ; qab:pmid ; qab:snippetText ; section offsets
    <run>/sentence/{n}     a qab:AnswerSentence ; qab:position ; qab:text ; qab:cites ;
                           qab:flagged ; qab:supportScore ; qab:supported ;
                           qab:message (what the cited text does not back) ;
                           qab:citation <run>/sentence/{n}/citation/{k}
                           (each a qab:Citation with qab:pmid and qab:flagged when removed)
    <run>/entity/{n}       a qab:AnswerEntity ; qab:rank ; rdfs:label ; qab:synonym
    <run>/stage/{name}     a prov:Activity ; rdfs:label ; qab:position ; qab:stageMillis ;
                           qab:message

Pure: terms in, terms out; nothing is written here.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime

from pyoxigraph import Literal, NamedNode, Quad

from rag.answering.citations import AnswerSentence, CitedAnswer
from rag.answering.exact import ExactAnswer
from rag.answering.snippets import Snippet, document_url
from rag.models.generators import GeneratorInfo
from rag.retrieval.index import IndexLabel
from rag.run import RagRun, RetrievedDocument, StageTiming
from store.graphs import rag_graph
from vocab import iris
from vocab.project import QAB
from vocab.standard import DCTERMS, PROV, RDF, RDFS, XSD

Index = dict[str, dict[str, list[object]]]
_Add = Callable[[NamedNode, NamedNode, NamedNode | Literal], None]


def _when(value: datetime) -> Literal:
    return Literal(value.isoformat(), datatype=XSD.dateTime)


def _document_node(pmid: str) -> NamedNode | None:
    try:
        return NamedNode(document_url(pmid))
    except ValueError:
        return None


def run_quads(base: str, run: RagRun) -> list[Quad]:
    """Return the quads describing ``run`` in the rag graph.

    Args:
        base: the base IRI.
        run: the run.

    Returns:
        The quads (the caller writes them in one transaction).
    """
    g = rag_graph(base)
    node = iris.rag_run_iri(base, run.run_id)
    out: list[Quad] = []

    def add(subject: NamedNode, predicate: NamedNode, value: NamedNode | Literal) -> None:
        out.append(Quad(subject, predicate, value, g))

    settings = {"generator": dict(run.generator.settings), "pipeline": dict(run.settings)}
    for predicate, value in (
        (RDF.type, QAB.RagRun),
        (DCTERMS.identifier, Literal(run.run_id)),
        (QAB.text, Literal(run.question, language=run.language or "en")),
        (DCTERMS.language, Literal(run.language)),
        (QAB.bioasqType, Literal(run.question_type)),
        (QAB.expandedQuery, Literal(run.expanded_query)),
        (QAB.queryEdited, Literal(run.query_edited)),
        (QAB.queryRun, Literal(run.query_run)),
        (QAB.retrievalFallback, Literal(run.fallback)),
        (QAB.shortAnswer, Literal(run.short_answer)),
        (QAB.citedAnswer, Literal(run.cited_answer.text)),
        (QAB.generator, Literal(run.generator.name)),
        (QAB.model, Literal(run.generator.model)),
        (QAB.settings, Literal(json.dumps(settings, sort_keys=True), datatype=RDF.JSON)),
        (PROV.startedAtTime, _when(run.started)),
        (PROV.endedAtTime, _when(run.finished)),
    ):
        add(node, predicate, value)
    for warning in run.warnings:
        add(node, QAB.warning, Literal(warning))
    add(node, QAB.answered, Literal(run.answered))
    if run.abstention:
        add(node, QAB.abstentionReason, Literal(run.abstention))
    if run.index is not None:
        add(node, QAB.indexName, Literal(run.index.name))
        add(node, QAB.indexDocuments, Literal(run.index.documents))
        add(node, QAB.demoIndex, Literal(run.index.demo))
    for doc in run.documents:
        _document(add, node, doc)
    for number, snippet in enumerate(run.snippets, start=1):
        _snippet(add, node, number, snippet)
    for number, sentence in enumerate(run.cited_answer.sentences, start=1):
        _sentence(add, node, number, sentence, run.language or "en")
    _exact(add, node, run.exact_answer)
    for position, timing in enumerate(run.timings):
        stage = iris.sub_iri(node, "stage", timing.stage)
        add(node, DCTERMS.hasPart, stage)
        add(stage, RDF.type, PROV.Activity)
        add(stage, RDFS.label, Literal(timing.stage))
        add(stage, QAB.position, Literal(position))
        add(stage, QAB.stageMillis, Literal(float(timing.millis)))
        add(stage, QAB.message, Literal(timing.note))
    return out


def _document(add: _Add, run: NamedNode, doc: RetrievedDocument) -> None:
    node = iris.sub_iri(run, "document", str(doc.rank))
    add(run, QAB.retrievedDocument, node)
    add(node, RDF.type, QAB.RetrievedDocument)
    add(node, QAB.rank, Literal(doc.rank))
    add(node, QAB.pmid, Literal(doc.pmid))
    add(node, QAB.score, Literal(float(doc.score)))
    add(node, DCTERMS.title, Literal(doc.title))
    target = _document_node(doc.pmid)
    if target is not None:
        add(node, QAB.document, target)


def _snippet(add: _Add, run: NamedNode, number: int, s: Snippet) -> None:
    node = iris.sub_iri(run, "snippet", str(number))
    add(run, QAB.snippet, node)
    for predicate, value in (
        (RDF.type, QAB.Snippet),
        (QAB.rank, Literal(number)),
        (QAB.pmid, Literal(s.pmid)),
        (QAB.snippetText, Literal(s.text)),
        (QAB.beginSection, Literal(s.begin_section)),
        (QAB.endSection, Literal(s.end_section)),
        (QAB.offsetInBeginSection, Literal(s.offset_begin)),
        (QAB.offsetInEndSection, Literal(s.offset_end)),
        (QAB.score, Literal(float(s.score))),
    ):
        add(node, predicate, value)
    target = _document_node(s.pmid)
    if target is not None:
        add(node, QAB.document, target)


def _sentence(add: _Add, run: NamedNode, number: int, s: AnswerSentence, lang: str) -> None:
    node = iris.sub_iri(run, "sentence", str(number))
    add(run, QAB.sentence, node)
    add(node, RDF.type, QAB.AnswerSentence)
    add(node, QAB.position, Literal(number))
    add(node, QAB.text, Literal(s.text, language=lang))
    add(node, QAB.flagged, Literal(s.flagged))
    if s.support is not None:
        add(node, QAB.supportScore, Literal(float(s.support)))
    if s.supported is not None:
        add(node, QAB.supported, Literal(s.supported))
    for problem in s.problems:
        add(node, QAB.message, Literal(problem, language="en"))
    cited = [(p, False) for p in s.citations] + [(p, True) for p in s.removed]
    for k, (pmid, removed) in enumerate(cited, start=1):
        if not removed:
            add(node, QAB.cites, Literal(pmid))
        citation = iris.sub_iri(node, "citation", str(k))
        add(node, QAB.citation, citation)
        add(citation, RDF.type, QAB.Citation)
        add(citation, QAB.position, Literal(k))
        add(citation, QAB.pmid, Literal(pmid))
        add(citation, QAB.flagged, Literal(removed))


def _exact(add: _Add, run: NamedNode, exact: ExactAnswer) -> None:
    if exact.yesno is not None:
        add(run, QAB.exactAnswer, Literal(exact.yesno))
    for rank, names in enumerate(exact.entities, start=1):
        node = iris.sub_iri(run, "entity", str(rank))
        add(run, QAB.answerEntity, node)
        add(node, RDF.type, QAB.AnswerEntity)
        add(node, QAB.rank, Literal(rank))
        add(node, RDFS.label, Literal(names[0]))
        for synonym in names[1:]:
            add(node, QAB.synonym, Literal(synonym))


# ---------------------------------------------------------------------------- reading back


def _index(quads: Iterable[Quad]) -> Index:
    found: Index = defaultdict(lambda: defaultdict(list))
    for q in quads:
        found[str(getattr(q.subject, "value", q.subject))][q.predicate.value].append(q.object)
    return found


def _one(index: Index, subject: str, predicate: NamedNode, default: str = "") -> str:
    values = index.get(subject, {}).get(predicate.value, [])
    return str(getattr(values[0], "value", default)) if values else default


def _all(index: Index, subject: str, predicate: NamedNode) -> list[str]:
    return [str(getattr(v, "value", v)) for v in index.get(subject, {}).get(predicate.value, [])]


def _by(index: Index, subject: str, predicate: NamedNode, order: NamedNode) -> list[str]:
    nodes = _all(index, subject, predicate)
    return sorted(nodes, key=lambda n: int(_one(index, n, order, "0")))


def run_from_quads(iri: NamedNode, quads: Iterable[Quad]) -> RagRun | None:
    """Read a run back from its description (``None`` when ``iri`` is not a described run).

    Warnings come back in alphabetical order (RDF keeps no order for them).
    """
    index = _index(quads)
    me = iri.value
    if QAB.RagRun.value not in _all(index, me, RDF.type):
        return None
    settings = json.loads(_one(index, me, QAB.settings, "{}") or "{}")
    documents = tuple(
        RetrievedDocument(
            int(_one(index, d, QAB.rank, "0")),
            _one(index, d, QAB.pmid),
            float(_one(index, d, QAB.score, "0")),
            _one(index, d, DCTERMS.title),
        )
        for d in _by(index, me, QAB.retrievedDocument, QAB.rank)
    )
    ranks = {d.pmid: d.rank for d in reversed(documents)}
    return RagRun(
        run_id=_one(index, me, DCTERMS.identifier),
        question=_one(index, me, QAB.text),
        language=_one(index, me, DCTERMS.language, "en"),
        question_type=_one(index, me, QAB.bioasqType, "summary"),
        expanded_query=_one(index, me, QAB.expandedQuery),
        query_edited=_one(index, me, QAB.queryEdited) == "true",
        query_run=_one(index, me, QAB.queryRun),
        fallback=_one(index, me, QAB.retrievalFallback, "none"),
        documents=documents,
        snippets=tuple(
            _read_snippet(index, s, ranks) for s in _by(index, me, QAB.snippet, QAB.rank)
        ),
        short_answer=_one(index, me, QAB.shortAnswer),
        cited_answer=CitedAnswer(
            tuple(_read_sentence(index, s) for s in _by(index, me, QAB.sentence, QAB.position))
        ),
        exact_answer=_read_exact(index, me),
        generator=GeneratorInfo(
            _one(index, me, QAB.generator),
            _one(index, me, QAB.model),
            tuple(sorted(settings.get("generator", {}).items())),
        ),
        settings=tuple(sorted(settings.get("pipeline", {}).items())),
        timings=tuple(
            StageTiming(
                _one(index, t, RDFS.label),
                float(_one(index, t, QAB.stageMillis, "0")),
                _one(index, t, QAB.message),
            )
            for t in _by(index, me, DCTERMS.hasPart, QAB.position)
        ),
        warnings=tuple(sorted(_all(index, me, QAB.warning))),
        started=datetime.fromisoformat(_one(index, me, PROV.startedAtTime)),
        finished=datetime.fromisoformat(_one(index, me, PROV.endedAtTime)),
        answered=_one(index, me, QAB.answered, "true") != "false",
        abstention=_one(index, me, QAB.abstentionReason),
        index=(
            IndexLabel(
                _one(index, me, QAB.indexName),
                int(_one(index, me, QAB.indexDocuments, "0")),
                _one(index, me, QAB.demoIndex) == "true",
            )
            if _all(index, me, QAB.indexName)
            else None
        ),
    )


def _read_snippet(index: Index, node: str, ranks: dict[str, int]) -> Snippet:
    pmid = _one(index, node, QAB.pmid)
    score = float(_one(index, node, QAB.score, "0"))
    return Snippet(
        document=document_url(pmid),
        text=_one(index, node, QAB.snippetText),
        begin_section=_one(index, node, QAB.beginSection),
        end_section=_one(index, node, QAB.endSection),
        offset_begin=int(_one(index, node, QAB.offsetInBeginSection, "0")),
        offset_end=int(_one(index, node, QAB.offsetInEndSection, "0")),
        pmid=pmid,
        document_rank=ranks.get(pmid, 0),
        score=score,
        lexical_score=score,
    )


def _read_sentence(index: Index, node: str) -> AnswerSentence:
    citations = _by(index, node, QAB.citation, QAB.position)
    kept = tuple(
        _one(index, c, QAB.pmid) for c in citations if _one(index, c, QAB.flagged) != "true"
    )
    removed = tuple(
        _one(index, c, QAB.pmid) for c in citations if _one(index, c, QAB.flagged) == "true"
    )
    score = _one(index, node, QAB.supportScore)
    verdict = _one(index, node, QAB.supported)
    return AnswerSentence(
        _one(index, node, QAB.text),
        kept,
        removed,
        support=float(score) if score else None,
        supported=None if not verdict else verdict == "true",
        problems=tuple(sorted(_all(index, node, QAB.message))),
    )


def _read_exact(index: Index, run: str) -> ExactAnswer:
    kind = _one(index, run, QAB.bioasqType, "summary")
    yesno = _one(index, run, QAB.exactAnswer) or None
    entities = tuple(
        (_one(index, e, RDFS.label), *sorted(_all(index, e, QAB.synonym)))
        for e in _by(index, run, QAB.answerEntity, QAB.rank)
    )
    return ExactAnswer(kind, yesno, entities)

"""A system's stored answers: one asking run per system, dataset version and language.

An experiment asks each system each question once per language; every reply (the answer as the
system gave it, a failed call's message, or "no answer") is written to the experiment graph as a
``qab:SystemAnswer`` of its ``qab:AskingRun``, and the tasks of that run (one per scoring profile)
score the stored replies. A resumed run reads them back and asks only the questions that have
none. The quads are pure values here; ``stored_replies`` is the only reader and reads one asking
run through the quad index (its cost grows with that run, not with the store).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pyoxigraph import Literal, NamedNode, Quad

from evaluators.datasets.rdf import question_triples
from evaluators.datasets.rdf_read import questions_from_quads
from evaluators.experiments.model import AskingUnit
from evaluators.experiments.task import Reply
from evaluators.formats.text2sparql.writer import AskedQuestion, answers_document
from evaluators.model import Dataset, Question
from store import graphs
from store.protocol import RdfStore
from vocab import iris
from vocab.project import QAB
from vocab.standard import DCTERMS, GERBIL, PROV, RDF, RDFS, XSD


def asking_run_iri(base: str, experiment_id: str, unit: AskingUnit) -> NamedNode:
    """Return the IRI of an asking run (below its experiment)."""
    return iris.sub_iri(
        iris.experiment_iri(base, experiment_id),
        "answers",
        iris.slug(unit.system),
        unit.dataset,
        f"v{unit.version}",
        unit.language,
    )


def reply_iri(run: NamedNode, question_id: str) -> NamedNode:
    """Return the IRI of one stored reply of an asking run."""
    return iris.sub_iri(run, "question", question_id)


def asking_run_quads(base: str, experiment_id: str, unit: AskingUnit) -> list[Quad]:
    """Return the quads describing an asking run (written with the experiment)."""
    g = graphs.experiment_graph(base, experiment_id)
    run = asking_run_iri(base, experiment_id, unit)
    version = iris.dataset_version_iri(base, unit.dataset, unit.version)
    label = f"Answers of {unit.system} to {unit.dataset} v{unit.version} ({unit.language})"
    return [
        Quad(run, RDF.type, QAB.AskingRun, g),
        Quad(run, RDF.type, PROV.Entity, g),
        Quad(run, RDFS.label, Literal(label), g),
        Quad(run, QAB.system, iris.system_iri(base, unit.system), g),
        Quad(run, QAB.datasetVersion, version, g),
        Quad(run, DCTERMS.language, Literal(unit.language), g),
        Quad(run, DCTERMS.isPartOf, iris.experiment_iri(base, experiment_id), g),
    ]


def reply_quads(
    base: str, experiment_id: str, unit: AskingUnit, reply: Reply, position: int
) -> list[Quad]:
    """Return the quads of one reply: the answer as a question-shaped node, or the failure."""
    g = graphs.experiment_graph(base, experiment_id)
    run = asking_run_iri(base, experiment_id, unit)
    node = reply_iri(run, reply.question_id)
    answer = reply.answer or Question(reply.question_id)
    triples = question_triples(node, answer, position, kind=QAB.SystemAnswer)
    question = iris.question_iri(base, unit.dataset, unit.version, reply.question_id)
    triples += [(node, QAB.askedIn, run), (node, GERBIL.datasetElement, question)]
    if reply.error is not None:
        triples.append((node, QAB.message, Literal(reply.error)))
    elif reply.answer is None:
        triples.append((node, QAB.noAnswer, Literal("true", datatype=XSD.boolean)))
    if reply.millis is not None:
        triples.append((node, QAB.millis, Literal(repr(float(reply.millis)), datatype=XSD.double)))
    if reply.executed is not None:
        triples.append((node, QAB.executedQuery, Literal(reply.executed)))
    if reply.execution_problem is not None:
        triples.append((node, QAB.executionProblem, Literal(reply.execution_problem)))
    # the retry log, one numbered line a node (the store keeps no order of literals)
    for n, line in enumerate(reply.retries):
        entry = iris.sub_iri(node, "retry", str(n))
        triples += [
            (node, QAB.retry, entry),
            (entry, RDF.type, QAB.Retry),
            (entry, QAB.position, Literal(n)),
            (entry, QAB.message, Literal(line)),
        ]
    return [Quad(s, p, o, g) for s, p, o in triples]


def _retries(quads: list[Quad]) -> tuple[str, ...]:
    entries = {q.object for q in quads if q.predicate == QAB.retry}
    lines: dict[int, str] = {}
    for entry in entries:
        found = [q for q in quads if q.subject == entry]
        position = _flag(found, QAB.position)
        message = _flag(found, QAB.message)
        if position is not None and message is not None:
            lines[int(position.value)] = message.value
    return tuple(lines[n] for n in sorted(lines))


def _subtree(store: RdfStore, node: NamedNode, graph: NamedNode) -> Iterable[Quad]:
    # a reply's answer sets, annotations and BioASQ parts are minted below its IRI
    prefix = node.value + "/"
    frontier = [node]
    seen = {node}
    while frontier:
        current = frontier.pop()
        for quad in store.quads(current, None, None, graph):
            yield quad
            obj = quad.object
            if isinstance(obj, NamedNode) and obj.value.startswith(prefix) and obj not in seen:
                seen.add(obj)
                frontier.append(obj)


def _flag(quads: list[Quad], predicate: NamedNode) -> Literal | None:
    for quad in quads:
        if quad.predicate == predicate and isinstance(quad.object, Literal):
            return quad.object
    return None


def stored_replies(
    store: RdfStore, base: str, experiment_id: str, unit: AskingUnit
) -> dict[str, Reply]:
    """Return the replies an asking run has stored, by question id."""
    g = graphs.experiment_graph(base, experiment_id)
    run = asking_run_iri(base, experiment_id, unit)
    found: dict[str, Reply] = {}
    for link in store.quads(None, QAB.askedIn, run, g):
        node = link.subject
        if not isinstance(node, NamedNode):
            continue
        quads = list(_subtree(store, node, g))
        (answer,) = questions_from_quads(quads, kind=QAB.SystemAnswer) or (None,)
        if answer is None:
            continue
        own = [q for q in quads if q.subject == node]
        error = _flag(own, QAB.message)
        millis = _flag(quads, QAB.millis)
        executed = _flag(quads, QAB.executedQuery)
        problem = _flag(quads, QAB.executionProblem)
        no_answer = error is None and _flag(quads, QAB.noAnswer) is not None
        found[answer.id] = Reply(
            answer.id,
            None if error is not None or no_answer else answer,
            error.value if error is not None else None,
            float(millis.value) if millis is not None else None,
            executed.value if executed is not None else None,
            problem.value if problem is not None else None,
            _retries(quads),
        )
    return found


def text2sparql_answers(
    store: RdfStore,
    base: str,
    experiment_id: str,
    units: Iterable[AskingUnit],
    golds: Mapping[tuple[str, int], Dataset],
    endpoint: str = "",
) -> list[dict[str, str]]:
    """Return the stored answers of asking runs in the TEXT2SPARQL client's answers shape.

    One entry per question whose stored answer carries a query (in the dataset's question
    order), so that the official client can run and score a qabench run.
    """
    asked: list[AskedQuestion] = []
    for unit in units:
        replies = stored_replies(store, base, experiment_id, unit)
        for question in golds[(unit.dataset, unit.version)].questions:
            reply = replies.get(question.id)
            query = reply.answer.sparql if reply is not None and reply.answer is not None else None
            asked.append(AskedQuestion(question, query, endpoint))
    return answers_document(asked)

"""Knowledge bases for answer matching (owl:sameAs, labels) and for refreshing gold answers.

``KnowledgeBase`` is the role the scorers use; three implementations exist:
``InMemoryKnowledgeBase`` (tests, small fixed data), ``StoreKnowledgeBase`` (named graphs of our
``TripleStore``, loaded with ``load_kb``) and ``EndpointKnowledgeBase`` (a remote SPARQL endpoint
through ``store.remote.fetch_results``, with a per-instance cache). None of them is contacted
unless a caller builds one; nothing here reads configuration. Labels match when their language
tag equals the requested one or when they have none.
"""

from __future__ import annotations

import dataclasses
import gzip
import io
import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, Protocol
from urllib.parse import urlsplit

from pyoxigraph import Literal, NamedNode, Quad, QueryBoolean, QuerySolutions, RdfFormat

from evaluators.errors import KnowledgeBaseError
from evaluators.knowledge.endpoint import EndpointKnowledgeBase, is_endpoint, with_known_prefixes
from evaluators.model import AnswerSet, AnswerValue, Dataset
from store import graphs
from store.errors import StoreError
from store.formats import rdf_serialization
from store.protocol import RdfStore
from vocab import iris
from vocab.project import QAB
from vocab.standard import DCTERMS, OWL, RDF, RDFS, VOID, XSD

log = logging.getLogger(__name__)


class KnowledgeBase(Protocol):
    """What matching needs from a knowledge base."""

    def same_as(self, iri: str) -> frozenset[str]:
        """Return the owl:sameAs closure of ``iri`` (both directions), including ``iri``."""
        ...

    def resources_for_label(self, label: str, language: str) -> frozenset[str]:
        """Return the resources whose ``rdfs:label`` is ``label`` in ``language`` (or untagged)."""
        ...


class AnswerSource(Protocol):
    """Something that can run a gold SPARQL query (for ``refresh_answers``)."""

    def answer(self, sparql: str) -> AnswerSet:
        """Run ``sparql`` and return its result as an answer set.

        Raises:
            KnowledgeBaseError: if the query fails.
        """
        ...


def _closure(
    start: str, neighbours: Mapping[str, set[str]] | None, step: Any = None
) -> frozenset[str]:
    # breadth-first over an undirected sameAs graph given as a mapping or a step function
    seen = {start}
    frontier = [start]
    while frontier:
        current = frontier.pop()
        nexts = neighbours.get(current, set()) if neighbours is not None else step(current)
        for other in nexts:
            if other not in seen:
                seen.add(other)
                frontier.append(other)
    return frozenset(seen)


class InMemoryKnowledgeBase:
    """A knowledge base held in dictionaries (owl:sameAs pairs and labels)."""

    def __init__(
        self,
        same_as: Iterable[tuple[str, str]] = (),
        labels: Iterable[tuple[str, str, str | None]] = (),
    ) -> None:
        """Build from ``(iri, iri)`` sameAs pairs and ``(resource, label, language)`` triples."""
        self._links: dict[str, set[str]] = defaultdict(set)
        for a, b in same_as:
            self._links[a].add(b)
            self._links[b].add(a)
        self._labels: dict[tuple[str, str | None], set[str]] = defaultdict(set)
        for resource, label, language in labels:
            self._labels[(label, language.lower() if language else None)].add(resource)

    @classmethod
    def from_quads(cls, quads: Iterable[Quad]) -> InMemoryKnowledgeBase:
        """Build from RDF: ``owl:sameAs`` between IRIs and ``rdfs:label`` literals of IRIs."""
        pairs: list[tuple[str, str]] = []
        labels: list[tuple[str, str, str | None]] = []
        for q in quads:
            if not isinstance(q.subject, NamedNode):
                continue
            if q.predicate == OWL.sameAs and isinstance(q.object, NamedNode):
                pairs.append((q.subject.value, q.object.value))
            elif q.predicate == RDFS.label and isinstance(q.object, Literal):
                labels.append((q.subject.value, q.object.value, q.object.language))
        return cls(pairs, labels)

    def same_as(self, iri: str) -> frozenset[str]:
        """Return the owl:sameAs closure of ``iri``, including ``iri``."""
        return _closure(iri, self._links)

    def resources_for_label(self, label: str, language: str) -> frozenset[str]:
        """Return resources labelled ``label`` in ``language`` or without a tag."""
        return frozenset(self._labels.get((label, language.lower()), set())) | frozenset(
            self._labels.get((label, None), set())
        )


def _row_value(term: object) -> AnswerValue | None:
    if isinstance(term, NamedNode | Literal):
        return term
    return None  # blank nodes are no answers


class StoreKnowledgeBase:
    """Named graphs of our ``TripleStore`` used as a knowledge base."""

    def __init__(self, store: RdfStore, kb_graphs: Sequence[NamedNode]) -> None:
        """Read ``kb_graphs`` of ``store`` (for example ``store.graphs.kb_graph(base, name)``)."""
        self._store = store
        self._graphs = list(kb_graphs)

    def _linked(self, iri: str) -> set[str]:
        node = NamedNode(iri)
        found: set[str] = set()
        for g in self._graphs:
            for q in self._store.quads(node, OWL.sameAs, None, g):
                if isinstance(q.object, NamedNode):
                    found.add(q.object.value)
            for q in self._store.quads(None, OWL.sameAs, node, g):
                if isinstance(q.subject, NamedNode):
                    found.add(q.subject.value)
        return found

    def same_as(self, iri: str) -> frozenset[str]:
        """Return the owl:sameAs closure of ``iri`` in the graphs, including ``iri``."""
        try:
            NamedNode(iri)
        except ValueError:
            return frozenset({iri})
        return _closure(iri, None, self._linked)

    def resources_for_label(self, label: str, language: str) -> frozenset[str]:
        """Return resources labelled ``label`` in ``language`` or without a tag."""
        found: set[str] = set()
        for lit in (Literal(label, language=language), Literal(label)):
            for g in self._graphs:
                for q in self._store.quads(None, RDFS.label, lit, g):
                    if isinstance(q.subject, NamedNode):
                        found.add(q.subject.value)
        return frozenset(found)

    def answer(self, sparql: str) -> AnswerSet:
        """Run a query over the graphs (as default graph) and return the answer set.

        Raises:
            KnowledgeBaseError: if the query does not parse or fails.
        """
        try:
            result = self._store.query(
                with_known_prefixes(sparql), default_graph=list(self._graphs)
            )
        except StoreError as exc:
            raise KnowledgeBaseError(f"Query failed on the store knowledge base: {exc}") from exc
        if isinstance(result, QueryBoolean):
            return AnswerSet(boolean=bool(result))
        if not isinstance(result, QuerySolutions):
            raise KnowledgeBaseError("Expected a SELECT or ASK query, got CONSTRUCT/DESCRIBE")
        names = [v.value for v in result.variables]
        values: dict[AnswerValue, None] = {}
        for row in result:
            for name in names:
                value = _row_value(row[name])
                if value is not None:
                    values.setdefault(value)
        return AnswerSet(tuple(values), None, tuple(names))


def check_kb_url(url: str) -> str:
    """Return ``url`` if it is an absolute http(s) URL with a host (a SPARQL endpoint).

    >>> check_kb_url("https://dbpedia.org/sparql")
    'https://dbpedia.org/sparql'

    Raises:
        KnowledgeBaseError: if it is not.
    """
    parts = urlsplit(url)
    try:
        _ = parts.port
    except ValueError:
        raise KnowledgeBaseError(f"Invalid port in knowledge-base URL {url[:200]!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise KnowledgeBaseError(
            f"Knowledge base {url[:200]!r} is not an absolute http(s) SPARQL endpoint URL"
        )
    return url


def open_kb(
    store: RdfStore | None, base: str, spec: str, *, timeout: float = 30.0
) -> StoreKnowledgeBase | EndpointKnowledgeBase:
    """Return the knowledge base named by ``spec``: an http(s) endpoint URL or a loaded KB name.

    Raises:
        KnowledgeBaseError: if ``spec`` names no loaded knowledge base.
    """
    if is_endpoint(spec):
        return EndpointKnowledgeBase(spec, timeout=timeout)
    graph = kb_graph_of(store, base, spec) if store is not None else None
    if store is None or graph is None:
        raise KnowledgeBaseError(
            f"No knowledge base {spec!r} in the store; load one with `qabench kb load FILE "
            f"--name {spec}` or give a SPARQL endpoint URL"
        )
    return StoreKnowledgeBase(store, [graph])


@dataclass(frozen=True, slots=True)
class KbInfo:
    """A knowledge base loaded into the store."""

    name: str
    iri: str
    graph: str
    # The triples of its graph once counted (``void:triples`` of its catalog entry), else None:
    # ``load_kb`` does not count them (at 2.6 M triples the engine's COUNT was up to 1.9 s of a
    # 16 s load); ``qabench serve`` records them when it lays the graph's pages out, which
    # counts every subject's triples anyway (``record_triples``).
    triples: int | None


def kb_graph_of(store: RdfStore, base: str, name: str) -> NamedNode | None:
    """Return the graph of the current load of knowledge base ``name`` (None: not loaded)."""
    found = store.quads(iris.kb_iri(base, name), QAB.graph, None, graphs.catalog_graph(base))
    return next((q.object for q in found if isinstance(q.object, NamedNode)), None)


def kb_graphs(store: RdfStore, base: str, *, uncounted: bool = False) -> list[NamedNode]:
    """Return the graph of every loaded knowledge base (the current load of each); with
    ``uncounted``, only of those whose catalog entry states no number of triples yet
    (``load_kb`` leaves that to ``record_triples``)."""
    catalog = graphs.catalog_graph(base)
    found = store.quads(None, RDF.type, QAB.KnowledgeBase, catalog)
    kbs = [
        q.subject
        for q in found
        if isinstance(q.subject, NamedNode)
        and not (uncounted and _counted(store, q.subject, catalog))
    ]
    named = (q.object for kb in kbs for q in store.quads(kb, QAB.graph, None, catalog))
    return sorted({g for g in named if isinstance(g, NamedNode)}, key=str)


def _counted(store: RdfStore, kb: NamedNode, catalog: NamedNode) -> bool:
    return next(store.quads(kb, VOID.triples, None, catalog), None) is not None


def record_triples(store: RdfStore, base: str, graph: NamedNode, triples: int) -> bool:
    """State ``void:triples`` ``triples`` in the catalog entry of the knowledge base whose
    current load is ``graph``, unless the entry states a number already (or names another
    graph now: a later load); return whether anything was written.

    The caller counted ``graph`` (the server, from the page layout it makes of it).

    Raises:
        StoreError: if the store refuses the write.
    """
    catalog = graphs.catalog_graph(base)
    kbs = [q.subject for q in store.quads(None, QAB.graph, graph, catalog)]
    add = [
        Quad(kb, VOID.triples, Literal(triples), catalog)
        for kb in kbs
        if isinstance(kb, NamedNode) and not _counted(store, kb, catalog)
    ]
    if add:
        store.apply(add=add)
    return bool(add)


class _Counting(io.RawIOBase):
    """A binary reader that reports how many bytes were read (for a progress bar)."""

    def __init__(self, inner: BinaryIO, progress: Callable[[int], None]) -> None:
        self._inner = inner
        self._progress = progress

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:  # Any: a writable buffer (memoryview)
        data = self._inner.read(len(buffer))
        buffer[: len(data)] = data
        if data:
            self._progress(len(data))
        return len(data)


def _rdf_format(path: Path) -> RdfFormat:
    name = path.name.removesuffix(".gz")
    return rdf_serialization(Path(name).suffix or name).rdf_format


def load_kb(
    store: RdfStore,
    base: str,
    path: Path | Sequence[Path],
    name: str,
    *,
    progress: Callable[[int], None] | None = None,
) -> KbInfo:
    """Load an RDF file (or several, into one graph) as knowledge base ``name`` (replacing an
    earlier load of it).

    The file (``.ttl``, ``.nt``, ``.nq``, …, optionally gzipped) goes through Oxigraph's bulk
    loader into a fresh graph that nothing reads yet; one small transaction then points the
    catalog entry at it, which makes it visible, and the previous load's graph is dropped.
    The entry states no number of triples (``KbInfo.triples`` is None): counting them is
    another pass over the graph, which the server makes when it lays the pages out after its
    start, and records then (``record_triples``).
    A load that fails leaves the store as it was (its graph is dropped; after a crash, the
    next start drops it: ``store.visibility.orphan_graphs``).

    Args:
        store: the store.
        base: the base IRI.
        path: the RDF file, or the files (an ontology and its instances, say).
        name: the knowledge base's name.
        progress: called with the number of bytes read, as reading goes on.

    Raises:
        KnowledgeBaseError: if the file cannot be read or parsed, or the store refuses a write.
    """
    kb = iris.kb_iri(base, name)
    catalog = graphs.catalog_graph(base)
    files = [path] if isinstance(path, Path) else list(path)
    try:
        formats = [_rdf_format(f) for f in files]
    except StoreError as exc:
        raise KnowledgeBaseError(f"Cannot read knowledge base file {path}: {exc}") from exc
    loaded = datetime.now(UTC)
    load = loaded.strftime("%Y%m%dT%H%M%S%f")
    graph = graphs.kb_graph(base, name, load)
    previous = [q.object for q in store.quads(kb, QAB.graph, None, catalog) if q.object != graph]
    try:
        for file, rdf_format in zip(files, formats, strict=True):
            _bulk_load(store, file, rdf_format, graph, progress)
    except (OSError, EOFError, StoreError) as exc:
        _drop(store, graph)
        raise KnowledgeBaseError(f"Cannot load knowledge base file {path}: {exc}") from exc
    entry = [
        Quad(kb, RDF.type, QAB.KnowledgeBase, catalog),
        Quad(kb, RDFS.label, Literal(name), catalog),
        Quad(kb, QAB.graph, graph, catalog),
        *(Quad(kb, DCTERMS.source, Literal(f.name), catalog) for f in files),
        Quad(
            kb,
            DCTERMS.modified,
            Literal(datetime.now(UTC).isoformat(), datatype=XSD.dateTime),
            catalog,
        ),
    ]
    try:
        store.apply(remove=list(store.quads(kb, None, None, catalog)), add=entry)
    except StoreError as exc:
        _drop(store, graph)
        raise KnowledgeBaseError(f"Loading knowledge base {name!r} failed: {exc}") from exc
    _drop(store, *(g for g in previous if isinstance(g, NamedNode)))
    return KbInfo(name, kb.value, graph.value, None)


def _bulk_load(
    store: RdfStore,
    path: Path,
    rdf_format: RdfFormat,
    graph: NamedNode,
    progress: Callable[[int], None] | None,
) -> None:
    if path.name.endswith(".gz"):
        with gzip.open(path, "rb") as raw:
            source: BinaryIO = raw  # type: ignore[assignment]  # a gzip file reads as bytes
            if progress is not None:
                source = io.BufferedReader(_Counting(source, progress), 1 << 20)
            store.bulk_load(source, rdf_format, graph=graph)
    else:
        # By path: the store may cut it into pieces loaded at once (TripleStore.bulk_load)
        store.bulk_load(path, rdf_format, graph=graph, progress=progress)


def _drop(store: RdfStore, *dropped: NamedNode) -> None:
    # Best effort: a graph left behind is not catalogued, so nobody reads it, and the next
    # start removes it.
    try:
        store.drop_graphs(dropped)
    except StoreError:
        log.warning("could not drop %s; it is removed at the next start", dropped)


@dataclass(frozen=True, slots=True)
class RefreshFailure:
    """A gold question whose query could not be re-run (it keeps its old answers)."""

    question_id: str
    message: str


def refresh_answers(
    dataset: Dataset, source: AnswerSource | str, *, timeout: float = 30.0
) -> tuple[Dataset, list[RefreshFailure]]:
    """Re-run every gold SPARQL query and return the dataset with the new answers.

    Args:
        dataset: the gold dataset.
        source: a knowledge base that answers queries, or a SPARQL endpoint URL.
        timeout: seconds per query when ``source`` is a URL.

    Returns:
        The refreshed dataset and the questions that kept their old answers (no query, or the
        query failed), with the reason.
    """
    endpoint = EndpointKnowledgeBase(source, timeout=timeout) if isinstance(source, str) else source
    questions = []
    failures: list[RefreshFailure] = []
    for q in dataset.questions:
        if not q.sparql:
            failures.append(RefreshFailure(q.id, "the question has no SPARQL query"))
            questions.append(q)
            continue
        try:
            answers = endpoint.answer(q.sparql)
        except KnowledgeBaseError as exc:
            failures.append(RefreshFailure(q.id, str(exc)))
            questions.append(q)
            continue
        questions.append(dataclasses.replace(q, answers=(answers,)))
    return dataclasses.replace(dataset, questions=tuple(questions)), failures

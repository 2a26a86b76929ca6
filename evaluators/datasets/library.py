"""The dataset library: load benchmark files into the store as versions, list and read them.

This module performs effects (store reads and writes); parsing and the RDF mapping it uses are
pure (``evaluators.formats``, ``evaluators.datasets.rdf`` and ``rdf_read``). A load writes every
quad of one version (catalog metadata and questions) in a single transaction.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pyoxigraph import NamedNode

from evaluators.datasets.checks import CheckReport, SyntaxProblem, check_dataset, report_quads
from evaluators.datasets.rdf import VersionMeta, version_entry_quads, version_question_quads
from evaluators.datasets.rdf_read import questions_from_quads
from evaluators.errors import DatasetFormatError, DatasetNameConflictError, UnknownDatasetError
from evaluators.formats import DEFAULT_MAX_BYTES, parse_bytes, parse_file
from evaluators.knowledge.execution import QueryExecutor
from evaluators.knowledge.reference import reference_differences
from evaluators.model import Dataset, SourceFormat
from store import graphs, queries
from store.errors import QuerySyntaxError, StoreError
from store.protocol import RdfStore, Term
from store.triplestore import TripleStore
from vocab import iris

log = logging.getLogger(__name__)

# Question ids quoted in a refusal at most (the rest are counted).
MAX_QUOTED_IDS = 10


@dataclass(frozen=True, slots=True)
class VersionInfo:
    """One stored dataset version."""

    name: str
    version: int
    iri: str
    title: str
    questions: int
    sha256: str
    byte_size: int
    format: str
    source: str
    languages: tuple[str, ...]
    knowledge_base: str | None
    loaded_at: str
    graph: str
    catalog_name: str | None = None

    @property
    def is_bioasq(self) -> bool:
        """Whether this version holds BioASQ task-b data (see ``SourceFormat.is_bioasq``)."""
        return SourceFormat(self.format).is_bioasq


@dataclass(frozen=True, slots=True)
class LoadOutcome:
    """What a load did: ``created`` is False when an identical file was already loaded."""

    info: VersionInfo
    created: bool
    warnings: tuple[str, ...] = ()


def default_name(source: str) -> str:
    """Return the dataset name derived from a file name or URL.

    >>> default_name("/x/qald-9-test-multilingual.json")
    'qald-9-test-multilingual'
    """
    stem = source.rstrip("/").rsplit("/", 1)[-1]
    if "." in stem:
        stem = stem.rsplit(".", 1)[0]
    return iris.slug(stem)


_ID_SUFFIXES = (".json", ".xml")


def dataset_name(dataset: Dataset, source: str) -> str:
    """Return the name a file is loaded under: its own id when it has one, else its file name.

    >>> from evaluators.model import SourceFormat
    >>> dataset_name(Dataset(SourceFormat.QALD_JSON, (), source_id="qald-9-test"), "/x/a.json")
    'qald-9-test'
    >>> dataset_name(Dataset(SourceFormat.LCQUAD, ()), "/x/test-data.json")
    'test-data'
    """
    own = (dataset.source_id or "").strip()
    for suffix in _ID_SUFFIXES:
        own = own.removesuffix(suffix)
    return iris.slug(own) if own else default_name(source)


def load_dataset(
    store: RdfStore,
    base: str,
    path: Path,
    *,
    name: str | None = None,
    format: SourceFormat | None = None,
    knowledge_base: str | None = None,
    title: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    source: str | None = None,
    catalog_name: str | None = None,
    split: str | None = None,
    new_version: bool = False,
    license: str | None = None,
) -> LoadOutcome:
    """Parse ``path`` and store it as a new version of dataset ``name``.

    Loading a file whose SHA-256 equals a stored version of the same dataset writes nothing.

    Args:
        store: the store to write to.
        base: the base IRI.
        path: the benchmark file.
        name: dataset name (default: the file's own id, e.g. QALD's ``dataset.id``, else its
            file name).
        format: force a parser instead of auto-detection.
        knowledge_base: the KB the dataset targets (e.g. ``dbpedia-2016-10``).
        title: a human title (default: the name).
        max_bytes: refuse larger files before reading them.
        source: what to record as the source (default: the path); URLs for fetched files.
        catalog_name: the catalog entry this file came from.
        split: ``train`` or ``test``.
        new_version: store different content under an existing name as its next version.
        license: the IRI of the file's licence (default: ``qab:SourceLicense``, its source's).

    Returns:
        The stored (or already present) version.

    Raises:
        DatasetFormatError: if the file cannot be parsed; the store is unchanged.
        DatasetNameConflictError: if the name exists with different content and
            ``new_version`` is false; the store is unchanged.
        StoreError: if the write fails; the store is unchanged.
    """
    dataset = parse_file(path, format=format, max_bytes=max_bytes)
    data = path.read_bytes()
    return store_dataset(
        store,
        base,
        dataset,
        data,
        name=name or dataset_name(dataset, str(path)),
        new_version=new_version,
        source=source or str(path.resolve()),
        knowledge_base=knowledge_base,
        title=title,
        catalog_name=catalog_name,
        split=split,
        license=license,
    )


def load_dataset_bytes(
    store: RdfStore,
    base: str,
    data: bytes,
    *,
    source: str,
    name: str | None = None,
    format: SourceFormat | None = None,
    knowledge_base: str | None = None,
    title: str | None = None,
    catalog_name: str | None = None,
    split: str | None = None,
    new_version: bool = False,
    license: str | None = None,
) -> LoadOutcome:
    """Parse bytes (an upload or a download) and store them like ``load_dataset``.

    Raises:
        DatasetFormatError: if the data cannot be parsed; the store is unchanged.
        DatasetNameConflictError: as ``load_dataset``.
    """
    dataset = parse_bytes(data, source=source, format=format)
    return store_dataset(
        store,
        base,
        dataset,
        data,
        name=name or dataset_name(dataset, source),
        new_version=new_version,
        source=source,
        knowledge_base=knowledge_base,
        title=title,
        catalog_name=catalog_name,
        split=split,
        license=license,
    )


# From this many quads on, a version's questions are written with the bulk writer (a question
# makes about 20 quads: decided on the question count, before any quad is made).
BULK_QUADS = 200_000
BULK_QUESTIONS = BULK_QUADS // 20


def store_dataset(
    store: RdfStore,
    base: str,
    dataset: Dataset,
    data: bytes,
    *,
    name: str,
    source: str,
    knowledge_base: str | None = None,
    title: str | None = None,
    catalog_name: str | None = None,
    split: str | None = None,
    derived_from: str | None = None,
    refreshed_with: str | None = None,
    revision: str | None = None,
    new_version: bool = False,
    license: str | None = None,
) -> LoadOutcome:
    """Store an already parsed dataset as a new version (or recognise an identical one).

    ``revision`` says what a derived version changed (an erratum; default: gold answers
    re-computed from the gold queries).
    ``derived_from`` (a version IRI) and ``refreshed_with`` (an endpoint) record provenance for
    versions computed from another version rather than loaded from a file; such versions are
    new versions on purpose (``new_version`` is implied).

    Raises:
        DatasetNameConflictError: if ``name`` exists with other content and neither
            ``new_version`` nor ``derived_from`` says that this is its next version.
    """
    refuse_unusable(dataset, source)
    name = iris.slug(name)
    digest = hashlib.sha256(data).hexdigest()
    existing = list_versions(store, base, name)
    for info in existing:
        if info.sha256 == digest:
            return LoadOutcome(info, created=False)
    if existing and not (new_version or derived_from):
        latest = existing[-1]
        described = f"v{latest.version}, {latest.questions} questions, {latest.format}"
        raise DatasetNameConflictError(name, described, latest.source)
    number = max((v.version for v in existing), default=0) + 1
    meta = VersionMeta(
        name=name,
        version=number,
        title=title or (existing[-1].title if existing else name),
        sha256=digest,
        byte_size=len(data),
        source=source,
        loaded_at=datetime.now(UTC).replace(microsecond=0),
        knowledge_base=knowledge_base,
        split=split,
        catalog_name=catalog_name,
        previous_version=existing[-1].version if existing else None,
        derived_from=derived_from,
        refreshed_with=refreshed_with,
        revision=revision,
        license=license,
    )
    graph = graphs.dataset_graph(base, name, number)
    entry = version_entry_quads(base, dataset, meta)
    questions = version_question_quads(base, dataset, meta)
    # Large versions go in with the bulk writer, streamed (no list of millions of quads; small
    # ones in one transaction: the bulk writer's fixed cost per call is larger than their
    # write); either way the version becomes visible (the catalog names its graph) only with
    # the small transactional write of its entry (store/graphs.py).
    try:
        if len(dataset.questions) >= BULK_QUESTIONS:
            store.bulk_add(questions)
        else:
            store.add(questions)
        store.add(entry)
    except StoreError:
        _drop_quietly(store, graph)
        raise
    warnings = tuple(
        (f"question {w.question_id}: " if w.question_id else "") + w.message
        for w in dataset.warnings
    )
    return LoadOutcome(version_info(store, base, name, number), created=True, warnings=warnings)


def refuse_unusable(dataset: Dataset, source: str) -> None:
    """Refuse a parsed dataset that no experiment could use, before anything is stored.

    A dataset needs at least one question, and every question needs a non-empty text in at
    least one language (systems are asked that text).

    Raises:
        DatasetFormatError: naming the problem (and the first question ids concerned).
    """
    if not dataset.questions:
        raise DatasetFormatError(
            "the file holds no questions; a dataset needs at least one", source=source
        )
    textless = [q.id for q in dataset.questions if not any(t.text.strip() for t in q.texts)]
    if textless:
        quoted = ", ".join(repr(i[:40]) for i in textless[:MAX_QUOTED_IDS])
        more = (
            f" and {len(textless) - MAX_QUOTED_IDS} more" if len(textless) > MAX_QUOTED_IDS else ""
        )
        raise DatasetFormatError(
            f"{len(textless)} of {len(dataset.questions)} questions have no question text in "
            f"any language ({quoted}{more}); every question needs one",
            source=source,
        )


def _version_row(row: dict[str, Term]) -> VersionInfo:
    languages = row.get("languages")
    return VersionInfo(
        name=row["name"].value,
        version=int(row["number"].value),
        iri=row["version"].value,
        title=row["title"].value,
        questions=int(row["count"].value),
        sha256=row["sha256"].value,
        byte_size=int(row["size"].value),
        format=SourceFormat(row["format"].value).value,
        source=(row.get("source") or row.get("path") or row["name"]).value,
        languages=tuple(sorted(languages.value.split())) if languages is not None else (),
        knowledge_base=row["kb"].value if "kb" in row else None,
        loaded_at=row["loaded"].value,
        graph=row["graph"].value,
        catalog_name=row["catalog"].value if "catalog" in row else None,
    )


def _drop_quietly(store: RdfStore, graph: NamedNode) -> None:
    # A graph left behind is not catalogued, so nobody reads it; the next start removes it.
    try:
        store.drop_graphs([graph])
    except StoreError:
        log.warning("could not drop %s; it is removed at the next start", graph)


def list_versions(store: RdfStore, base: str, name: str | None = None) -> list[VersionInfo]:
    """Return stored dataset versions (all, or those of ``name``), ordered by name and number.

    A stored record that cannot be read (a missing or malformed value) is skipped with a
    warning in the log, so that one bad version never breaks listings, forms or submissions.
    """
    # One dataset's versions are read by binding its IRI: the cost follows that dataset.
    bound = {} if name is None else {"dataset": iris.dataset_iri(base, name)}
    rows = store.select(queries.load("dataset_versions"), **bound)
    result = []
    for row in rows:
        if name is not None and row["name"].value != name:
            continue
        try:
            result.append(_version_row(row))
        except (KeyError, ValueError) as exc:
            where = row["version"].value if "version" in row else "?"
            log.warning("skipping unreadable dataset version %s: %r", where, exc)
    return result


def version_info(store: RdfStore, base: str, name: str, number: int) -> VersionInfo:
    """Return one stored version.

    Raises:
        UnknownDatasetError: if it does not exist.
    """
    for info in list_versions(store, base, name):
        if info.version == number:
            return info
    raise UnknownDatasetError(f"Dataset {name!r} has no version {number}")


def resolve_version(store: RdfStore, base: str, ref: str) -> VersionInfo:
    """Find a version by ``name`` (latest), ``name@N``, ``name/vN`` or its IRI.

    Raises:
        UnknownDatasetError: if nothing matches; the message lists what is loaded.
    """
    versions = list_versions(store, base)
    for info in versions:
        if ref in (info.iri, f"{info.name}@{info.version}", f"{info.name}/v{info.version}"):
            return info
    matching = [v for v in versions if v.name in (ref, iris.slug(ref))]
    if matching:
        return matching[-1]
    names = sorted({v.name for v in versions})
    known = ", ".join(names) if names else "none; load one with `qabench datasets load PATH`"
    raise UnknownDatasetError(f"No dataset {ref!r} in the store; loaded datasets: {known}")


def read_dataset(store: RdfStore, info: VersionInfo) -> Dataset:
    """Read the questions of a stored version back into a ``Dataset``."""
    quads = store.quads(graph=NamedNode(info.graph))
    questions = questions_from_quads(quads)
    return Dataset(format=SourceFormat(info.format), questions=questions)


# DBpedia's public endpoint predefines these prefixes, and many QALD queries rely on that.
DBPEDIA_PREFIXES = {
    "dbo": "http://dbpedia.org/ontology/",
    "dbr": "http://dbpedia.org/resource/",
    "res": "http://dbpedia.org/resource/",
    "dbp": "http://dbpedia.org/property/",
    "dbpedia2": "http://dbpedia.org/property/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "dct": "http://purl.org/dc/terms/",
    "dc": "http://purl.org/dc/elements/1.1/",
    "yago": "http://dbpedia.org/class/yago/",
    "geo": "http://www.w3.org/2003/01/geo/wgs84_pos#",
    "wd": "http://www.wikidata.org/entity/",
    "wdt": "http://www.wikidata.org/prop/direct/",
    "p": "http://www.wikidata.org/prop/",
    "ps": "http://www.wikidata.org/prop/statement/",
    "pq": "http://www.wikidata.org/prop/qualifier/",
    "bd": "http://www.bigdata.com/rdf#",
    "wikibase": "http://wikiba.se/ontology#",
    "schema": "http://schema.org/",
}


def sparql_syntax_problem(query: str) -> SyntaxProblem | None:
    """Return what Oxigraph's SPARQL parser says about ``query`` (``None`` if it parses).

    The query is parsed against an empty in-memory store and never evaluated remotely:
    queries that mention SERVICE are only parsed by rdflib.
    """
    if "SERVICE" in query.upper():
        return _rdflib_problem(query)
    try:
        _parse_only(query, None)
        return None
    except QuerySyntaxError as exc:
        return _syntax_problem(query, exc)
    except StoreError as exc:
        # it parses, but Oxigraph cannot prepare it (e.g. a call to an unknown function)
        first = str(exc).splitlines()[0].replace("Query evaluation failed: ", "")
        return SyntaxProblem(
            f"the query cannot be evaluated: {first}"[:300], None, None, "sparql-unsupported"
        )


def _syntax_problem(query: str, exc: QuerySyntaxError) -> SyntaxProblem:
    first = str(exc).splitlines()[0].replace("Malformed SPARQL: ", "")
    try:
        _parse_only(query, DBPEDIA_PREFIXES)
    except StoreError:
        if "Prefix not found" in first:
            first = first.split(": expected")[0] + ": undeclared prefix"
        return SyntaxProblem(first[:300], exc.line, exc.column)
    return SyntaxProblem(
        "uses prefixes it does not declare (DBpedia's and Wikidata's public endpoints "
        "predefine them, other SPARQL servers do not)",
        exc.line,
        exc.column,
    )


def _parse_only(query: str, prefixes: dict[str, str] | None) -> None:
    # Parsing happens before evaluation; an empty in-memory store makes evaluation trivial.
    TripleStore.in_memory().query(query, prefixes=prefixes)


def _rdflib_problem(query: str) -> SyntaxProblem | None:
    from pyparsing import ParseException
    from rdflib.plugins.sparql.parser import parseQuery

    try:
        parseQuery(query)
        return None
    except ParseException as exc:
        return SyntaxProblem(str(exc)[:300], exc.lineno, exc.col)


def check_version(
    store: RdfStore, base: str, info: VersionInfo, executor: QueryExecutor | None = None
) -> CheckReport:
    """Check a stored dataset version and store the report in its check graph.

    With ``executor`` (TEXT2SPARQL), every reference query is run on its knowledge base and each
    question whose results differ from the gold answers is a ``reference-differs`` finding.
    The previous report of the version is replaced in the same transaction.
    """
    dataset = read_dataset(store, info)
    differences = reference_differences(dataset, executor) if executor is not None else None
    report = check_dataset(dataset, sparql_syntax_problem, differences)
    graph = graphs.check_graph(base, info.name, info.version)
    now = datetime.now(UTC).replace(microsecond=0).isoformat()
    quads = report_quads(report, version=NamedNode(info.iri), graph=graph, checked_at=now)
    store.replace_graph(graph, quads)
    return report

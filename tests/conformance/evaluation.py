"""Run the W3C SPARQL 1.1 query-evaluation and query-syntax tests against an endpoint over HTTP.

All data files the selected tests use are loaded first (through ``load_graph``), each into the
named graph whose IRI is the file's URI. A test's query is then POSTed with its dataset given by
the protocol (``default-graph-uri`` = its ``qt:data`` files, ``named-graph-uri`` = its
``qt:graphData`` files; an unused IRI stands for "empty"), unless the query names its own dataset
with ``FROM``. Solutions are compared as multisets (blank nodes match any blank node, numbers by
value, order ignored); graphs by isomorphism. Syntax tests check 200 versus 400. Known gaps of
this harness: CSV result files, relative IRIs that the tests resolve against their own file.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

import httpx
from pyoxigraph import BlankNode, Literal, QueryResultsFormat, parse_query_results
from rdflib import Graph, Namespace, URIRef
from rdflib.collection import Collection
from rdflib.compare import isomorphic

from server.sparql.analysis import query_dataset, query_form

MF = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
QT = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-query#")
DAWGT = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-dawg#")
RS = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/result-set#")
RDFS = Namespace("http://www.w3.org/2000/01/rdf-schema#")
EMPTY = "urn:qabench:conformance:empty"
_NUMERIC = ("integer", "decimal", "double", "float", "int", "long", "short", "byte")


@dataclass(frozen=True)
class EvalTest:
    """One test: its name, kind, query file, dataset files and expected result file."""

    name: str
    kind: str  # eval | positive | negative
    query: Path
    data: tuple[Path, ...] = ()
    graph_data: tuple[tuple[Path, str], ...] = ()
    result: Path | None = None


@dataclass
class EvaluationReport:
    """Counts and failure reasons."""

    passed: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


def _path(node: object) -> Path:
    return Path(str(node).removeprefix("file://"))


def collect(manifests: Iterable[Path]) -> list[EvalTest]:
    """Return the approved query tests of ``manifests``."""
    tests: list[EvalTest] = []
    for manifest in manifests:
        graph = Graph()
        graph.parse(manifest, format="turtle", publicID=manifest.as_uri())
        root = next(graph.subjects(MF.entries, None))
        for entry in Collection(graph, graph.value(root, MF.entries)):
            approval = graph.value(entry, DAWGT.approval)
            if approval is not None and approval != DAWGT.Approved:
                continue
            kind = str(
                graph.value(entry, URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"))
            )
            name = f"{manifest.parent.name}/{str(entry).rsplit('#', 1)[-1]}"
            action = graph.value(entry, MF.action)
            if kind.endswith("#QueryEvaluationTest"):
                graph_data = []
                for node in graph.objects(action, QT.graphData):
                    if isinstance(node, URIRef):
                        graph_data.append((_path(node), node.toPython()))
                    else:
                        label = graph.value(node, RDFS.label)
                        target = graph.value(node, URIRef(str(QT) + "graph"))
                        graph_data.append((_path(target), str(label)))
                tests.append(
                    EvalTest(
                        name,
                        "eval",
                        _path(graph.value(action, QT.query)),
                        tuple(_path(d) for d in graph.objects(action, QT.data)),
                        tuple(graph_data),
                        _path(graph.value(entry, MF.result)),
                    )
                )
            elif kind.endswith(("#PositiveSyntaxTest11", "#PositiveSyntaxTest")):
                tests.append(EvalTest(name, "positive", _path(action)))
            elif kind.endswith(("#NegativeSyntaxTest11", "#NegativeSyntaxTest")):
                tests.append(EvalTest(name, "negative", _path(action)))
    return tests


def data_files(tests: Iterable[EvalTest]) -> dict[str, Path]:
    """Return every data file the tests use, keyed by the graph IRI it is loaded into."""
    files: dict[str, Path] = {}
    for test in tests:
        for path in test.data:
            files[path.as_uri()] = path
        for path, iri in test.graph_data:
            files[iri] = path
    return files


def _key(term: object) -> str:
    if term is None:
        return ""
    if isinstance(term, BlankNode):
        return "_:"
    if isinstance(term, Literal) and term.datatype.value.rsplit("#", 1)[-1] in _NUMERIC:
        try:
            return f"number:{Decimal(term.value).normalize()}"
        except InvalidOperation:
            return str(term)
    return str(term)


def _rows(solutions: object) -> Counter[frozenset[tuple[str, str]]]:
    names = [v.value for v in solutions.variables]  # type: ignore[attr-defined]
    return Counter(
        frozenset((n, _key(s[n])) for n in names if s[n] is not None)
        for s in solutions  # type: ignore[attr-defined]
    )


def _rdf_result_set(path: Path) -> object:
    graph = Graph()
    graph.parse(path)
    boolean = graph.value(None, RS.boolean)
    if boolean is not None:
        return bool(boolean.toPython())
    rows: Counter[frozenset[tuple[str, str]]] = Counter()
    for solution in graph.objects(None, RS.solution):
        row = set()
        for binding in graph.objects(solution, RS.binding):
            value = graph.value(binding, RS.value)
            row.add((str(graph.value(binding, RS.variable)), _rdflib_key(value)))
        rows[frozenset(row)] += 1
    return rows


def _rdflib_key(value: object) -> str:
    from rdflib import BNode
    from rdflib import Literal as RLiteral

    if isinstance(value, BNode):
        return "_:"
    if isinstance(value, RLiteral):
        datatype = str(value.datatype or "")
        if datatype.rsplit("#", 1)[-1] in _NUMERIC:
            try:
                return f"number:{Decimal(str(value)).normalize()}"
            except InvalidOperation:
                pass
        return value.n3()
    return f"<{value}>"


def _expected(path: Path) -> object | None:
    suffix = path.suffix
    if suffix in (".srx", ".srj", ".tsv"):
        fmt = {
            ".srx": QueryResultsFormat.XML,
            ".srj": QueryResultsFormat.JSON,
            ".tsv": QueryResultsFormat.TSV,
        }[suffix]
        parsed = parse_query_results(path=path, format=fmt)
        return (
            parsed
            if isinstance(parsed, bool)
            else (bool(parsed) if not hasattr(parsed, "variables") else _rows(parsed))
        )
    if suffix in (".ttl", ".rdf", ".nt"):
        text = path.read_text("utf-8", errors="replace")
        if str(RS) in text:
            return _rdf_result_set(path)
        graph = Graph()
        graph.parse(path)
        return graph
    return None


def _run_eval(client: httpx.Client, test: EvalTest, query: str) -> str | None:
    expected = _expected(test.result) if test.result else None
    if expected is None:
        return "skip: unsupported result format"
    params: list[tuple[str, str]] = []
    if query_dataset(query).is_empty:
        params += [("default-graph-uri", p.as_uri()) for p in test.data] or [
            ("default-graph-uri", EMPTY)
        ]
        params += [("named-graph-uri", iri) for _, iri in test.graph_data] or [
            ("named-graph-uri", EMPTY)
        ]
    graph_form = query_form(query) in ("CONSTRUCT", "DESCRIBE")
    accept = "application/n-triples" if graph_form else "application/sparql-results+json"
    response = client.post(
        "/sparql",
        params=params,
        content=query.encode("utf-8"),
        headers={"Content-Type": "application/sparql-query", "Accept": accept},
    )
    if response.status_code != 200:
        return f"status {response.status_code}: {response.text[:200]}"
    if isinstance(expected, Graph):
        found = Graph()
        found.parse(data=response.text, format="nt")
        return None if isomorphic(found, expected) else "graphs differ"
    document = json.loads(response.text)
    if "boolean" in document:
        return None if document["boolean"] == expected else f"boolean {document['boolean']}"
    found_rows = _rows(parse_query_results(response.content, QueryResultsFormat.JSON))
    return None if found_rows == expected else f"{sum(found_rows.values())} rows differ"


def run_evaluation_suite(
    tests: list[EvalTest], base_url: str, load_graphs: Callable[[dict[str, Path]], None]
) -> EvaluationReport:
    """Load the tests' data with ``load_graphs`` and run every test against ``base_url``."""
    load_graphs(data_files(tests))
    report = EvaluationReport()
    with httpx.Client(base_url=base_url, timeout=30) as client:
        for test in tests:
            query = test.query.read_text("utf-8")
            if test.kind == "eval":
                failure = _run_eval(client, test, query)
            else:
                status = client.post(
                    "/sparql",
                    content=query.encode("utf-8"),
                    headers={"Content-Type": "application/sparql-query"},
                ).status_code
                want_ok = test.kind == "positive"
                failure = (
                    None
                    if (status == 200) == want_ok and status in (200, 400)
                    else f"status {status}"
                )
            if failure is None:
                report.passed.append(test.name)
            elif failure.startswith("skip"):
                report.skipped[test.name] = failure
            else:
                report.failed[test.name] = failure
    return report

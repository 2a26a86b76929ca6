"""Replay the 34 W3C SPARQL 1.1 Protocol tests (``protocol/manifest.ttl``) against a server.

Each test is a list of HTTP requests described in the HTTP-in-RDF vocabulary. Requests are sent
as written, except the path prefix ``/sparql/``: query requests go to the server's query
endpoint and update requests to its update endpoint (the manifest allows separate endpoints),
with the admin bearer token. ``ut:graphData`` is loaded into the named graph given by its label
through ``load_graph`` before the test. Checked per response: the status class, the family of
the result media type, and the ASK boolean.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
from rdflib import Graph, Namespace, URIRef
from rdflib.collection import Collection

MF = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
HT = Namespace("http://www.w3.org/2011/http#")
CNT = Namespace("http://www.w3.org/2011/content#")
UT = Namespace("http://www.w3.org/2009/sparql/tests/test-update#")
RDFS = Namespace("http://www.w3.org/2000/01/rdf-schema#")

_FAMILIES = {
    "boolean": ("application/sparql-results+json", "application/sparql-results+xml"),
    "tabular": (
        "application/sparql-results+json",
        "application/sparql-results+xml",
        "text/csv",
        "text/tab-separated-values",
    ),
    "RDF": (
        "application/rdf+xml",
        "text/turtle",
        "application/n-triples",
        "text/html",
        "application/xhtml+xml",
    ),
}


@dataclass
class ProtocolReport:
    """Which tests passed and why the others failed."""

    passed: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Return the number of tests run."""
        return len(self.passed) + len(self.failed)


def _is_update(method: str, path: str, headers: dict[str, str], body: bytes) -> bool:
    params = parse_qs(urlsplit(path).query)
    if "update" in params or any(k.startswith("using-") for k in params):
        return True
    if "sparql-update" in headers.get("content-type", ""):
        return True
    return method == "POST" and body.startswith(b"update=")


def _check(resp_node: object, graph: Graph, response: httpx.Response) -> str | None:
    statuses = {str(s).rsplit("#", 1)[-1] for s in graph.objects(resp_node, MF.expectedStatus)}
    family = f"StatusCode{response.status_code // 100}xx"
    if family not in statuses:
        return f"status {response.status_code}, expected {sorted(statuses)}: {response.text[:200]}"
    expected_format = graph.value(resp_node, MF.expectedFormat)
    media = response.headers.get("content-type", "").split(";")[0].strip()
    if expected_format is not None and media not in _FAMILIES[str(expected_format)]:
        return f"media type {media!r} is not {expected_format}"
    expected_boolean = graph.value(resp_node, MF.expectedBoolean)
    if expected_boolean is not None:
        if media.endswith("json"):
            found = json.loads(response.text)["boolean"]
        else:
            found = "<boolean>true</boolean>" in response.text
        if bool(found) != expected_boolean.toPython():
            return f"boolean {found}, expected {expected_boolean}"
    return None


def run_protocol_suite(
    manifest: Path,
    base_url: str,
    admin_token: str,
    load_graph: Callable[[Path, str], None],
    *,
    query_path: str = "/sparql",
    update_path: str = "/update",
) -> ProtocolReport:
    """Run every test of ``manifest`` against the server at ``base_url``.

    Args:
        manifest: ``protocol/manifest.ttl``.
        base_url: the server's root URL.
        admin_token: bearer token sent with update requests.
        load_graph: loads a data file into the named graph with the given IRI.
        query_path: the query endpoint's path.
        update_path: the update endpoint's path.
    """
    graph = Graph()
    graph.parse(manifest, format="turtle")
    manifest_node = next(graph.subjects(MF.entries, None))
    entries = Collection(graph, graph.value(manifest_node, MF.entries))
    report = ProtocolReport()
    with httpx.Client(base_url=base_url, timeout=30, follow_redirects=False) as client:
        for test in entries:
            name = str(test).rsplit("#", 1)[-1]
            for data in graph.objects(test, UT.graphData):
                load_graph(
                    Path(str(graph.value(data, UT.graph)).removeprefix("file://")),
                    str(graph.value(data, RDFS.label)),
                )
            failure = _run_test(graph, test, client, admin_token, query_path, update_path)
            if failure is None:
                report.passed.append(name)
            else:
                report.failed[name] = failure
    return report


def _run_test(
    graph: Graph, test: URIRef, client: httpx.Client, token: str, query_path: str, update_path: str
) -> str | None:
    action = graph.value(test, MF.action)
    for request in Collection(graph, graph.value(action, HT.requests)):
        method = str(graph.value(request, HT.methodName))
        path = str(graph.value(request, HT.absolutePath))
        headers = {}
        for header in Collection(graph, graph.value(request, HT.headers) or URIRef("urn:none")):
            headers[str(graph.value(header, HT.fieldName)).lower()] = str(
                graph.value(header, HT.fieldValue)
            )
        body_node = graph.value(request, HT.body)
        body = b""
        if body_node is not None:
            encoding = str(graph.value(body_node, CNT.characterEncoding) or "UTF-8")
            body = str(graph.value(body_node, CNT.chars)).encode(encoding)
        update = _is_update(method, path, headers, body)
        target = (update_path if update else query_path) + path.removeprefix("/sparql/")
        if update:
            headers["authorization"] = f"Bearer {token}"
        response = client.request(method, target, content=body or None, headers=headers)
        failure = _check(graph.value(request, HT.resp), graph, response)
        if failure is not None:
            return failure
    return None

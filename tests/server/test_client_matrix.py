"""Standard linked-data clients, unchanged, against a live qabench server holding real data.

The server runs the demo (the example knowledge base and questions, and a published experiment
the app's own runner scored) with ``server.base_iri`` set to where it listens, so every IRI
dereferences. Each client is the real thing, installed by ``./dev test``: SPARQLWrapper (every
query form by return format by method), rdflib (``SPARQLStore`` and ``Graph.parse`` of resources
in every format), pyld (``jsonld.expand`` of every kind of resource), Comunica (npm
``@comunica/query-sparql``, run with the machine's node: as a SPARQL endpoint client and
dereferencing an experiment IRI), Jena (Debian's ``riot`` and ``rsparql``), ``rapper`` (Debian's
raptor2-utils) and Chromium's ``fetch`` from another origin. The W3C Data Cube integrity
constraints IC-1 … IC-21 run over ``/sparql`` against the same served data. Every table asserts
how many cases it ran.
"""

from __future__ import annotations

import csv
import http.server
import json
import shutil
import socket
import subprocess
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pyld import jsonld
from pyoxigraph import QueryResultsFormat, RdfFormat, parse, parse_query_results
from rdflib import Graph
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import (
    CSV,
    JSON,
    JSONLD,
    N3,
    POST,
    RDF,
    RDFXML,
    TSV,
    TURTLE,
    XML,
    SPARQLWrapper,
)

from server import httpd
from server.app import create_app
from server.cli.serve import build_servers
from server.config import config_from_dict
from server.services import Services
from store import graphs
from tests import REPO
from tests.clients.jena import jena_command
from tests.evaluators.integrity import violations
from vocab.project import QAB
from vocab.standard import RDF as RDF_TERMS

# Third-party clients in processes of their own (Jena, Node, rapper) against a live server:
# the full suite runs them, the fast lane leaves them out.
pytestmark = pytest.mark.slow

CLIENTS = REPO / "tests" / "clients"
COMUNICA = CLIENTS / "node_modules" / ".bin" / "comunica-sparql"
QAB_NS = "https://w3id.org/qabench/vocab#"


class Served:
    """The live server, its URL (also its base IRI) and the demo experiment."""

    def __init__(self, url: str, app: Any, experiment: str) -> None:
        self.url = url
        self.app = app
        self.experiment = experiment

    @property
    def experiment_iri(self) -> str:
        """Return the IRI (and URL) of the demo experiment."""
        return f"{self.url}/experiment/{self.experiment}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("matrix")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    config = config_from_dict(
        {
            # Every client here comes from 127.0.0.1, hundreds of queries in a minute: the
            # per-client limits (tested in tests/server/web) would refuse the matrix itself.
            "server": {
                "base_iri": url,
                "demo": True,
                "query_workers": 2,
                "sparql_requests_per_minute": 0,
                "queries_per_client": 2,
            },
            "store": {"data_dir": str(tmp / "data")},
        },
        source=REPO / "config.toml",
    )
    app = create_app(config)
    svc: Services = app.extensions["services"]
    experiment = next(svc.store.quads(predicate=RDF_TERMS.type, obj=QAB.Experiment)).subject
    # qabench serve's own server (waitress, the connection limits, the SPARQL front): the
    # clients meet what they would meet in production.
    servers, events, adjustments = build_servers(app, config.server, "127.0.0.1", port)
    stop = threading.Event()
    thread = threading.Thread(
        target=httpd.run, args=(servers, events, adjustments, stop), daemon=True
    )
    thread.start()
    svc.pool.start()
    svc.pool.wait_ready(60)
    svc.view(timeout=60)
    try:
        yield Served(url, app, experiment.value.rsplit("/", 1)[-1])
    finally:
        httpd.stop_soon(servers, stop)
        thread.join(10)
        svc.close()
    # The queries of the matrix went through the front, not only through the threads.
    assert servers[0].front is not None and servers[0].front.answered > 0


def _observations(served: Served) -> str:
    return f"""PREFIX qb: <http://purl.org/linked-data/cube#>
PREFIX qab: <{QAB_NS}>
SELECT ?task ?measure ?value WHERE {{
  <{served.experiment_iri}> qab:task ?task .
  ?obs a qb:Observation ; qab:ofTask ?task ; qb:measureType ?measure ; ?measure ?value .
}} ORDER BY ?task ?measure"""


def _queries(served: Served) -> dict[str, str]:
    exp = served.experiment_iri
    return {
        "SELECT": _observations(served),
        "ASK": f"ASK {{ <{exp}> a <{QAB_NS}Experiment> }}",
        "CONSTRUCT": f"CONSTRUCT {{ <{exp}> ?p ?o }} WHERE {{ <{exp}> ?p ?o }}",
        "DESCRIBE": f"DESCRIBE <{exp}>",
    }


# --- SPARQLWrapper -----------------------------------------------------------------------------

FORMATS = (JSON, XML, CSV, TSV, N3, TURTLE, RDF, RDFXML, JSONLD)
# What qabench answers each return format with, for results and for graphs. SPARQLWrapper also
# sends format=<name> (and for some names the media type again); Accept decides when it names a
# form, else the parameter, else the default.
RESULT_ANSWERS = {
    JSON: "application/sparql-results+json",
    XML: "application/sparql-results+xml",
    CSV: "text/csv",
    TSV: "text/tab-separated-values",
}
GRAPH_ANSWERS = {
    JSON: "application/ld+json",
    XML: "application/rdf+xml",
    N3: "text/turtle",
    TURTLE: "text/turtle",
    RDF: "application/rdf+xml",
    RDFXML: "application/rdf+xml",
    JSONLD: "application/ld+json",
}
# The return formats SPARQLWrapper sends a graph media type for (for the others: */*).
GRAPH_ACCEPTS = {XML, N3, TURTLE, RDFXML, JSONLD}
WRAPPER_CASES = [
    (kind, fmt, method)
    for kind in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")
    for fmt in FORMATS
    for method in ("GET", POST)
]


def _graph_from(data: bytes | Any, media: str) -> int:
    if isinstance(data, Graph):
        return len(data)
    fmt = RdfFormat.from_media_type(media)
    assert fmt is not None, media
    return len(list(parse(data, fmt)))


@pytest.mark.parametrize(("kind", "fmt", "method"), WRAPPER_CASES)
def test_sparqlwrapper(served: Served, kind: str, fmt: str, method: str) -> None:
    client = SPARQLWrapper(f"{served.url}/sparql")
    client.setQuery(_queries(served)[kind])
    client.setReturnFormat(fmt)
    client.setMethod(method)
    graph = kind in ("CONSTRUCT", "DESCRIBE")
    expected = (GRAPH_ANSWERS if graph else RESULT_ANSWERS).get(fmt)
    with warnings.catch_warnings(record=True) as recorded:
        warnings.simplefilter("always")
        result = client.query()
        media = result.info()["content-type"].split(";")[0]
        converted = result.convert()
        result.response.close()
    # rdflib's own parsers warn about rdflib (ConjunctiveGraph); that is not SPARQLWrapper's.
    said = {str(w.message).split(" because")[0].split(",")[0] for w in recorded
            if issubclass(w.category, RuntimeWarning)}  # fmt: skip
    # SPARQLWrapper names no media type for some of its formats and then says so.
    sends_anything = fmt not in (GRAPH_ACCEPTS if graph else RESULT_ANSWERS)
    assert ("Sending Accept header '*/*'" in said) == sends_anything, said
    if expected is None:
        # A format this query form has no such thing as: qabench answers its default form,
        # which SPARQLWrapper still reads (after saying it got another format).
        expected = "text/turtle" if graph else "application/sparql-results+json"
        assert any(m.startswith("Format requested was") for m in said), said
    else:
        assert not any(m.startswith("Format requested was") for m in said), said
    assert media == expected
    if graph:
        assert _graph_from(converted, media) > 3
    elif kind == "ASK":
        if media == "application/sparql-results+json":
            assert converted["boolean"] is True
        elif media == "application/sparql-results+xml":
            assert converted.getElementsByTagName("boolean")[0].firstChild.data == "true"
        else:
            assert converted.strip() == b"true"
    elif media == "application/sparql-results+json":
        assert len(converted["results"]["bindings"]) > 10
    elif media == "application/sparql-results+xml":
        assert len(converted.getElementsByTagName("result")) > 10
    elif media == "text/csv":
        assert len(list(csv.reader(converted.decode("utf-8").splitlines()))) > 11
    else:
        assert len(list(parse_query_results(converted, QueryResultsFormat.TSV))) > 10


def test_sparqlwrapper_matrix_size() -> None:
    assert len(WRAPPER_CASES) == 72


# --- rdflib --------------------------------------------------------------------------------------

STORE_CASES = [
    (kind, fmt, method)
    for kind in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")
    for fmt in ("xml", "json")
    for method in ("GET", "POST", "POST_FORM")
] + [("SELECT", fmt, "GET") for fmt in ("csv", "tsv")]


@pytest.mark.parametrize(("kind", "fmt", "method"), STORE_CASES)
def test_rdflib_sparqlstore(served: Served, kind: str, fmt: str, method: str) -> None:
    store = SPARQLStore(f"{served.url}/sparql", returnFormat=fmt, method=method)
    try:
        result = Graph(store=store).query(_queries(served)[kind])
        if kind == "ASK":
            assert result.askAnswer is True
        elif kind == "SELECT":
            assert len(list(result)) > 10
        else:
            assert result.graph is not None and len(result.graph) > 3
    finally:
        store.close()


def _resource_urls(served: Served) -> list[str]:
    exp = served.experiment_iri
    return [
        exp,
        f"{served.url}/task/{served.experiment}/1",
        f"{served.url}/dataset/qabench-example",
        f"{served.url}/dataset/qabench-example/v1",
        f"{served.url}/dataset/qabench-example/v1/question/1",
        f"{served.url}/kb/example",
        f"{served.url}/vocab/Experiment",
        f"{served.url}/.well-known/void",
        f"{served.url}/",
        f"{served.url}/datasets",
    ]


PARSE_FORMATS = (None, "xml", "n3", "turtle", "nt", "trig", "json-ld")


# rdflib reading TriG and N-Quads into a Graph warns about its own Dataset API.
@pytest.mark.filterwarnings("ignore:Dataset.default_context is deprecated:DeprecationWarning")
@pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning")
def test_rdflib_graph_parse_reads_every_resource_in_every_format(served: Served) -> None:
    cases = 0
    for url in _resource_urls(served):
        reference = Graph().parse(data=httpx.get(url + "?format=nt").content, format="nt")
        assert len(reference) > 1, url
        for fmt in PARSE_FORMATS:
            graph = Graph().parse(url, format=fmt) if fmt else Graph().parse(url)
            assert len(graph) == len(reference), (url, fmt)
            cases += 1
    assert cases == 70


def test_rdflib_parses_document_urls(served: Served) -> None:
    cases = 0
    for ext, fmt in (("ttl", "turtle"), ("nt", "nt"), ("rdf", "xml"), ("jsonld", "json-ld")):
        for url in _resource_urls(served)[:6]:
            assert len(Graph().parse(f"{url}.{ext}", format=fmt)) > 3, (url, ext)
            cases += 1
    assert cases == 24


# --- pyld ----------------------------------------------------------------------------------------


def test_pyld_expands_every_resource(served: Served) -> None:
    cases = 0
    for url in _resource_urls(served):
        expanded = jsonld.expand(url)
        assert expanded and all("@id" in node for node in expanded), url
        as_graph = Graph().parse(data=json.dumps(expanded), format="json-ld")
        reference = Graph().parse(data=httpx.get(url + "?format=nt").content, format="nt")
        assert len(as_graph) == len(reference), url
        cases += 1
    assert cases == 10


# --- Comunica ------------------------------------------------------------------------------------


def _comunica(*args: str) -> list[dict[str, str]]:
    if not COMUNICA.exists():
        pytest.fail("Comunica is missing: run ./dev test (it runs npm ci in tests/clients)")
    done = subprocess.run(
        ["node", str(COMUNICA), *args, "-t", "application/json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows: list[dict[str, str]] = json.loads(done.stdout)
    return rows


def test_comunica_queries_the_endpoint(served: Served) -> None:
    rows = _comunica(f"sparql@{served.url}/sparql", _observations(served))
    assert len(rows) > 10 and {"task", "measure", "value"} <= set(rows[0])


def test_comunica_dereferences_an_experiment_iri(served: Served) -> None:
    query = f"SELECT ?task WHERE {{ <{served.experiment_iri}> <{QAB_NS}task> ?task }}"
    rows = _comunica(served.experiment_iri, query)
    assert len(rows) == 4


def _triples(url: str) -> int:
    """Return how many triples the N-Triples form of a document holds (the reference)."""
    response = httpx.get(url, params={"format": "nt"}, timeout=60)
    assert response.status_code == 200, (url, response.text[:300])
    return len([line for line in response.text.splitlines() if line.strip()])


def _documents(served: Served) -> list[str]:
    return [*_resource_urls(served), f"{served.url}/task/{served.experiment}/2"]


def test_rdflib_js_and_jsonld_js_read_every_document_whole(served: Served) -> None:
    # rdflib.js stops at escaped prefixed names (gerbil:avg_millis\/doc); jsonld.js reads the
    # compacted JSON-LD with its embedded context. Both must get every triple.
    reader = CLIENTS / "read.js"
    if not (CLIENTS / "node_modules" / "rdflib").exists():
        pytest.fail("rdflib.js is missing: run ./dev test (it runs npm ci in tests/clients)")
    cases = 0
    for url in _documents(served):
        reference = _triples(url)
        done = subprocess.run(
            ["node", str(reader), url], capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, done.stderr[-2000:]
        found = json.loads(done.stdout)
        assert found == {"rdflib": reference, "jsonld": reference}, (url, found)
        cases += 1
    assert cases == 11


def test_comunica_reads_documents_as_sources_whole(served: Served) -> None:
    cases = 0
    for url in [served.experiment_iri, f"{served.url}/task/{served.experiment}/2"]:
        rows = _comunica(url, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        assert int(rows[0]["n"].split("^^")[0].strip('"')) == _triples(url), url
        cases += 1
    assert cases == 2


# --- Jena ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def jena(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The java command line running Debian's Jena commands."""
    command = jena_command(tmp_path_factory.mktemp("jena-resources"))
    if command is None:
        pytest.fail("Jena is missing: run ./dev test (it installs libapache-jena-java)")
    return command


def _java(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert " ERROR " not in done.stderr and " WARN " not in done.stderr, done.stderr[-2000:]
    return done.stdout


def test_jena_reads_resources_by_dereferencing_them(served: Served, jena: list[str]) -> None:
    # ARQ's --data loads each IRI over HTTP with RIOT's content negotiation.
    urls = _resource_urls(served)
    data = [f"--data={url}" for url in urls]
    query = "SELECT DISTINCT ?s WHERE { ?s ?p ?o }"
    out = _java([*jena, "arq.sparql", *data, "--results=json", query])
    subjects = {b["s"]["value"] for b in json.loads(out)["results"]["bindings"]}
    for url in urls:
        # A vocabulary term's document is about the term, not about its URL.
        focus = QAB_NS + "Experiment" if url.endswith("/vocab/Experiment") else url
        assert focus in subjects, url
    assert len(urls) == 10


def test_jena_riot_validates_every_rdf_form(
    served: Served, jena: list[str], tmp_path: Path
) -> None:
    files: dict[str, list[str]] = {"": [], "jsonld": []}
    for n, url in enumerate(_resource_urls(served)[:5]):
        for ext in ("ttl", "nt", "rdf", "jsonld", "nq", "trig"):
            target = tmp_path / f"r{n}.{ext}"
            target.write_bytes(httpx.get(f"{url}?format={ext}").content)
            files["jsonld" if ext == "jsonld" else ""].append(str(target))
    _java([*jena, "riotcmd.riot", "--validate", "--strict", *files[""]])
    # Debian ships no JSON-P implementation for Jena's JSON-LD 1.1 reader (Titanium); its
    # JSON-LD 1.0 reader (jsonld-java) reads the same documents.
    _java([*jena, "riotcmd.riot", "--validate", "--strict", "--syntax=jsonld10", *files["jsonld"]])
    assert len(files[""]) + len(files["jsonld"]) == 30


def test_jena_rsparql_queries_the_endpoint(served: Served, jena: list[str], tmp_path: Path) -> None:
    cases = 0
    for kind, results in (("SELECT", "json"), ("ASK", "json"), ("CONSTRUCT", "ntriples")):
        query = tmp_path / f"{kind}.rq"
        query.write_text(_queries(served)[kind])
        out = _java(
            [
                *jena,
                "arq.rsparql",
                "--service",
                f"{served.url}/sparql",
                "--query",
                str(query),
                "--results",
                results,
            ]
        )
        if kind == "SELECT":
            assert len(json.loads(out)["results"]["bindings"]) > 10
        elif kind == "ASK":
            assert json.loads(out)["boolean"] is True
        else:
            assert len([line for line in out.splitlines() if line.strip()]) > 3
        cases += 1
    assert cases == 3


# --- rapper --------------------------------------------------------------------------------------


def test_rapper_reads_every_rdf_form(served: Served) -> None:
    if shutil.which("rapper") is None:
        pytest.fail("rapper is missing: run ./dev test (it installs raptor2-utils)")
    cases = 0
    for url in _resource_urls(served)[:4]:
        for syntax, ext in (
            ("guess", ""),
            ("turtle", ".ttl"),
            ("ntriples", ".nt"),
            ("rdfxml", ".rdf"),
            ("nquads", ".nq"),
            ("trig", ".trig"),
        ):
            done = subprocess.run(
                ["rapper", "-q", "-i", syntax, "-o", "ntriples", url + ext],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert done.returncode == 0, (url, syntax, done.stderr[-500:])
            assert len(done.stdout.splitlines()) > 3, (url, syntax)
            cases += 1
    assert cases == 24


# --- Data Cube integrity over the served data ---------------------------------------------------


def test_served_cubes_satisfy_every_integrity_constraint(served: Served) -> None:
    def ask(query: str) -> bool:
        response = httpx.get(
            f"{served.url}/sparql", params={"query": query}, timeout=60,
            headers={"Accept": "application/sparql-results+json"},
        )  # fmt: skip
        assert response.status_code == 200, response.text
        return bool(response.json()["boolean"])

    def instances(query: str) -> list[str]:
        response = httpx.get(f"{served.url}/sparql", params={"query": query}, timeout=60)
        return [b["p"]["value"] for b in response.json()["results"]["bindings"]]

    observations = httpx.get(
        f"{served.url}/sparql",
        params={
            "query": "SELECT (COUNT(*) AS ?n) { ?o a <http://purl.org/linked-data/cube#Observation> }"
        },
    ).json()["results"]["bindings"][0]["n"]["value"]
    assert int(observations) > 50
    assert violations(ask, instances, grouped=True) == []


def test_published_metadata_has_licences_and_no_server_paths(served: Served) -> None:
    svc: Services = served.app.extensions["services"]
    dump = httpx.get(f"{served.url}/dump.nq", timeout=60).text
    data_dir = str(svc.config.data_dir)
    assert str(REPO) not in dump and data_dir not in dump and "/tmp/" not in dump
    licensed = {
        line.split(" ", 1)[0]
        for line in dump.splitlines()
        if " <http://purl.org/dc/terms/license> " in line
    }
    assert f"<{served.experiment_iri}>" in licensed
    assert f"<{served.url}/dataset/qabench-example/v1>" in licensed
    catalog = graphs.catalog_graph(svc.base)
    assert any(str(catalog) in line for line in dump.splitlines())


# --- a browser on another origin -----------------------------------------------------------------


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<!doctype html><title>elsewhere</title><p>another origin</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


FETCHES = """async ([base, experiment]) => {
  const out = {};
  const get = async (name, url, init) => {
    try {
      const r = await fetch(url, init);
      const text = await r.text();
      out[name] = {status: r.status, type: r.headers.get('content-type'), length: text.length,
                   link: r.headers.get('link'), etag: r.headers.get('etag'), body: text.slice(0, 200)};
    } catch (e) { out[name] = {error: String(e)}; }
  };
  await get('jsonld', experiment, {headers: {Accept: 'application/ld+json'}});
  await get('turtle', experiment + '.ttl');
  await get('html', experiment, {headers: {Accept: 'text/turtle', 'If-None-Match': '"x"'}});
  await get('void', base + '/.well-known/void');
  await get('dump', base + '/dump.nq', {headers: {Range: 'bytes=0-99'}});
  await get('select', base + '/sparql?query=' + encodeURIComponent('SELECT * { ?s ?p ?o } LIMIT 3'));
  await get('post', base + '/sparql', {method: 'POST', body: 'ASK {}',
                                        headers: {'Content-Type': 'application/sparql-query'}});
  await get('update', base + '/update', {method: 'POST', body: 'CLEAR ALL',
                                          headers: {'Content-Type': 'application/sparql-update'}});
  await get('missing', base + '/experiment/199901010001', {headers: {Accept: 'application/ld+json'}});
  return out;
}"""


@pytest.mark.browser
def test_browser_fetch_from_another_origin(served: Served) -> None:
    from playwright.sync_api import sync_playwright

    # The dump is written in the background after start; while it grows it is streamed whole
    # (no ranges), so the range request below waits for it to be complete.
    deadline = time.monotonic() + 120
    while httpx.get(f"{served.url}/dump.nq", headers={"Range": "bytes=0-0"}).status_code != 206:
        assert time.monotonic() < deadline, "the dump was not written within 120 s"
        time.sleep(0.5)
    elsewhere = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=elsewhere.serve_forever, daemon=True)
    thread.start()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path="/usr/bin/chromium",
                headless=True,
                args=["--no-sandbox", "--disable-background-networking", "--disable-gpu"],
            )
            page = browser.new_page()
            page.goto(f"http://localhost:{elsewhere.server_address[1]}/")
            found = page.evaluate(FETCHES, [served.url, served.experiment_iri])
            browser.close()
    finally:
        elsewhere.shutdown()
        elsewhere.server_close()
    readable = ("jsonld", "turtle", "html", "void", "dump", "select", "post")
    for name in readable:
        assert found[name].get("status") in (200, 206), (name, found[name])
    assert found["jsonld"]["type"] == "application/ld+json"
    assert found["jsonld"]["body"].startswith("{")
    assert found["turtle"]["link"] and 'rel="alternate"' in found["turtle"]["link"]
    assert found["turtle"]["etag"]
    assert found["dump"]["status"] == 206 and found["dump"]["length"] == 100
    assert found["missing"]["status"] == 404
    # A write from another origin is never sent: the preflight grants nothing.
    assert "error" in found["update"]
    assert len(readable) == 7

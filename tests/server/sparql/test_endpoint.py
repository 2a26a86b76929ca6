"""The public SPARQL endpoint as an outside client sees it (live server, httpx).

Covers every query form and result format, the protocol's request shapes, and the abuse cases:
malformed queries, SERVICE, updates, long queries, huge results, runaway queries (with other
clients served meanwhile), private graphs reached through the protocol or the query text.
"""

from __future__ import annotations

import csv
import io
import json
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from pyoxigraph import QueryResultsFormat, RdfFormat, parse, parse_query_results

from tests.plugins.server import BASE, OWNER_TOKEN, PRIVATE_MARKER, LiveServer

SELECT = "SELECT ?task ?value WHERE { ?o <http://purl.org/linked-data/cube#measureType> ?m ; ?m ?value ; <https://w3id.org/qabench/vocab#ofTask> ?task } ORDER BY ?value"
CONSTRUCT = "CONSTRUCT { ?s a ?t } WHERE { ?s a ?t } LIMIT 5"
PRIVATE_ASK = f'ASK {{ ?s ?p "{PRIVATE_MARKER}" }}'
PRIVATE_GRAPH = f"{BASE}/graph/experiment/202401010002"
DESCRIBE_PUBLIC = f"DESCRIBE <{BASE}/experiment/202401010001>"


@pytest.fixture(scope="module")
def http(shared_live_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=shared_live_server.url, timeout=30) as client:
        yield client


def _ask(response: httpx.Response) -> bool:
    assert response.status_code == 200, response.text
    return bool(json.loads(response.text)["boolean"])


@pytest.mark.parametrize(
    ("accept", "fmt", "media"),
    [
        (
            "application/sparql-results+json",
            QueryResultsFormat.JSON,
            "application/sparql-results+json",
        ),
        (
            "application/sparql-results+xml",
            QueryResultsFormat.XML,
            "application/sparql-results+xml",
        ),
        ("text/tab-separated-values", QueryResultsFormat.TSV, "text/tab-separated-values"),
        (None, QueryResultsFormat.JSON, "application/sparql-results+json"),
    ],
)
def test_select_results_in_each_format(
    http: httpx.Client, accept: str | None, fmt: QueryResultsFormat, media: str
) -> None:
    headers = {"Accept": accept} if accept else {}
    response = http.get("/sparql", params={"query": SELECT}, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith(media)
    rows = list(parse_query_results(response.content, fmt))
    assert [float(r["value"].value) for r in rows] == [0.5, 0.5, 0.6, 1.0]


def test_select_as_csv(http: httpx.Client) -> None:
    response = http.get("/sparql", params={"query": SELECT}, headers={"Accept": "text/csv"})
    table = list(csv.reader(io.StringIO(response.text)))
    assert table[0] == ["task", "value"]
    assert [float(row[1]) for row in table[1:]] == [0.5, 0.5, 0.6, 1.0]


def test_ask_and_post_forms(http: httpx.Client) -> None:
    query = "ASK { ?s a <https://w3id.org/qabench/vocab#Experiment> }"
    assert _ask(http.post("/sparql", data={"query": query}))
    assert _ask(
        http.post("/sparql", content=query, headers={"Content-Type": "application/sparql-query"})
    )
    xml = http.get(
        "/sparql", params={"query": query}, headers={"Accept": "application/sparql-results+xml"}
    )
    assert bool(parse_query_results(xml.content, QueryResultsFormat.XML)) is True


@pytest.mark.parametrize(
    ("accept", "fmt"),
    [
        (None, RdfFormat.TURTLE),
        ("application/n-triples", RdfFormat.N_TRIPLES),
        ("application/rdf+xml", RdfFormat.RDF_XML),
        ("application/ld+json", RdfFormat.JSON_LD),
        ("application/n-quads", RdfFormat.N_QUADS),
    ],
)
def test_construct_defaults_to_turtle_and_offers_every_rdf_format(
    http: httpx.Client, accept: str | None, fmt: RdfFormat
) -> None:
    headers = {"Accept": accept} if accept else {}
    response = http.get("/sparql", params={"query": CONSTRUCT}, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith(fmt.media_type)
    assert len(list(parse(response.content, fmt))) == 5


ASK = "ASK { ?s ?p ?o }"
NEGOTIATION_CASES = [
    # Aliases clients use (the media type answered is the canonical one).
    (SELECT, "application/json", [], "application/sparql-results+json"),
    (SELECT, "application/xml", [], "application/sparql-results+xml"),
    (SELECT, "text/xml", [], "application/sparql-results+xml"),
    (SELECT, "text/plain", [], "text/tab-separated-values"),
    (ASK, "text/xml", [], "application/sparql-results+xml"),
    (ASK, "text/csv", [], "text/csv"),
    (CONSTRUCT, "application/xml", [], "application/rdf+xml"),
    (CONSTRUCT, "text/plain", [], "application/n-triples"),
    (CONSTRUCT, "text/n3", [], "text/turtle"),
    (CONSTRUCT, "application/json", [], "application/ld+json"),
    (CONSTRUCT, "application/trig", [], "application/trig"),
    (CONSTRUCT, "text/turtle; charset=utf-8", [], "text/turtle"),
    # SPARQLWrapper's requests: Accept names the form, format= says something else or repeats.
    (CONSTRUCT, "application/rdf+xml", ["xml"], "application/rdf+xml"),
    (
        DESCRIBE_PUBLIC,
        "application/rdf+xml",
        ["rdf+xml", "application/rdf+xml"],
        "application/rdf+xml",
    ),
    (
        CONSTRUCT,
        "application/ld+json,application/x-json+ld",
        ["json-ld", "application/ld+json"],
        "application/ld+json",
    ),
    (
        SELECT,
        "text/tab-separated-values",
        ["tsv", "text/tab-separated-values"],
        "text/tab-separated-values",
    ),
    # Accept does not decide: the format parameter does; a form this query has not: default.
    (SELECT, "*/*", ["csv"], "text/csv"),
    (CONSTRUCT, None, ["nt"], "application/n-triples"),
    (SELECT, "*/*", ["n3"], "application/sparql-results+json"),
    (CONSTRUCT, "*/*", ["csv"], "text/turtle"),
    (
        SELECT,
        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        ["json"],
        "application/sparql-results+json",
    ),
    # Accept names only forms of the other query kind (rdflib's SPARQLStore sends one Accept
    # for every query): this kind's default instead of 406.
    (CONSTRUCT, "application/sparql-results+json", [], "text/turtle"),
    (SELECT, "application/rdf+xml", [], "application/sparql-results+json"),
]


@pytest.mark.parametrize(("query", "accept", "formats", "media"), NEGOTIATION_CASES)
def test_result_forms_are_negotiated_like_documents(
    http: httpx.Client, query: str, accept: str | None, formats: list[str], media: str
) -> None:
    headers = {"Accept": accept} if accept else {}
    params = [("query", query), *(("format", f) for f in formats)]
    response = http.get("/sparql", params=params, headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].split(";")[0] == media


def test_negotiation_case_table_is_complete() -> None:
    assert len(NEGOTIATION_CASES) == 23


def test_results_have_entity_tags_and_answer_304(http: httpx.Client) -> None:
    first = http.get("/sparql", params={"query": SELECT})
    tag = first.headers["etag"]
    assert tag.startswith('"') and first.headers["last-modified"]
    again = http.get("/sparql", params={"query": SELECT}, headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b""
    weak = http.get("/sparql", params={"query": SELECT}, headers={"If-None-Match": "W/" + tag})
    assert weak.status_code == 304
    other_form = http.get(
        "/sparql", params={"query": SELECT}, headers={"If-None-Match": tag, "Accept": "text/csv"}
    )
    assert other_form.status_code == 200 and other_form.headers["etag"] != tag
    other_query = http.get("/sparql", params={"query": SELECT + " LIMIT 1"})
    assert other_query.headers["etag"] != tag


def test_describe_returns_the_resource(http: httpx.Client) -> None:
    response = http.get("/sparql", params={"query": f"DESCRIBE <{BASE}/experiment/202401010001>"})
    triples = list(parse(response.content, RdfFormat.TURTLE))
    assert any(t.object.value.endswith("#Experiment") for t in triples)


def test_bare_get_is_the_service_description(http: httpx.Client) -> None:
    response = http.get("/sparql", headers={"Accept": "text/turtle"})
    text = response.text
    assert response.status_code == 200 and response.headers["content-type"].startswith(
        "text/turtle"
    )
    triples = list(parse(response.content, RdfFormat.TURTLE))
    endpoints = [t.object.value for t in triples if t.predicate.value.endswith("#endpoint")]
    assert endpoints == [str(http.base_url).rstrip("/") + "/sparql"]
    assert "BasicFederatedQuery" not in text
    html = http.get("/sparql", headers={"Accept": "text/html"})
    assert "<textarea" in html.text


def test_malformed_query_is_400_with_position(http: httpx.Client) -> None:
    response = http.get("/sparql", params={"query": "SELECT * WHERE {\n ?s ?p }"})
    assert response.status_code == 400
    problem = response.json()
    assert problem["type"].endswith("#MalformedQuery")
    assert problem["line"] == 2 and isinstance(problem["column"], int)


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * WHERE { SERVICE <http://127.0.0.1:{port}/> { ?s ?p ?o } }",
        "select * where { service silent <http://127.0.0.1:{port}/> { ?s ?p ?o } }",
        "SELECT * WHERE { ?x ?y ?z . SERVICE<http://127.0.0.1:{port}/>{ ?s ?p ?o } }",
        "PREFIX e: <http://127.0.0.1:{port}/>\nSELECT * { SERVICE e: { ?s ?p ?o } }",
        "SELECT * WHERE { # comment\n SERVICE ?endpoint { ?s ?p ?o } VALUES ?endpoint { <http://127.0.0.1:{port}/> } }",
        "ASK { SERVICE <http://127.0.0.1:{port}/> {} }",
        "CONSTRUCT WHERE { SERVICE <http://127.0.0.1:{port}/> { ?s ?p ?o } }",
    ],
)
def test_service_is_refused_before_any_outbound_call(http: httpx.Client, query: str) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    try:
        response = http.get("/sparql", params={"query": query.replace("{port}", str(port))})
        assert response.status_code == 400
        assert "SERVICE" in response.json()["detail"]
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()


def test_service_inside_strings_iris_and_comments_is_allowed(http: httpx.Client) -> None:
    query = 'SELECT * WHERE { ?s <http://x/SERVICE> "SERVICE" } # SERVICE <http://x/>'
    assert http.get("/sparql", params={"query": query}).status_code == 200


def test_updates_are_refused_on_the_public_endpoint(http: httpx.Client) -> None:
    direct = http.post(
        "/sparql", content="CLEAR ALL", headers={"Content-Type": "application/sparql-update"}
    )
    assert direct.status_code == 403 and direct.json()["type"].endswith("#Forbidden")
    form = http.post("/sparql", data={"update": "CLEAR ALL"})
    assert form.status_code == 403
    assert http.get("/sparql", params={"update": "CLEAR ALL"}).status_code == 400
    as_query = http.get("/sparql", params={"query": "CLEAR ALL"})
    assert as_query.status_code == 400
    assert _ask(http.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}))


def test_bad_requests(http: httpx.Client) -> None:
    assert http.get("/sparql", params=[("query", "ASK {}"), ("query", "ASK {}")]).status_code == 400
    assert (
        http.post("/sparql", content="ASK {}", headers={"Content-Type": "text/plain"}).status_code
        == 415
    )
    assert http.post("/sparql", content="ASK {}").status_code == 415
    utf16 = http.post(
        "/sparql",
        content="ASK {}".encode("utf-16"),
        headers={"Content-Type": "application/sparql-query; charset=UTF-16"},
    )
    assert utf16.status_code == 415
    put = http.put("/sparql", content="ASK {}")
    assert put.status_code == 405 and "GET" in put.headers["allow"]
    too_long = http.post(
        "/sparql",
        content="ASK {} #" + "x" * 70_000,
        headers={"Content-Type": "application/sparql-query"},
    )
    assert too_long.status_code == 413


PROTOCOL_REFUSALS = [
    ("GET", {"query": "ASK {}", "default-graph-uri": "not an iri"}, None, None),
    ("GET", {"query": "ASK {}", "named-graph-uri": "relative/graph"}, None, None),
    ("GET", {"query": "ASK {}", "default-graph-uri": ""}, None, None),
    ("POST", {"query": "ASK {}"}, "ASK {}", "application/sparql-query"),
    ("POST", {"query": "ASK {}"}, "query=ASK%20%7B%7D", "application/x-www-form-urlencoded"),
    ("POST", {}, "query=ASK%20%7B%7D&default-graph-uri=x%20y", "application/x-www-form-urlencoded"),
]


@pytest.mark.parametrize(("method", "params", "body", "media"), PROTOCOL_REFUSALS)
def test_protocol_refuses_what_oxigraph_refuses(
    http: httpx.Client, method: str, params: dict[str, str], body: str | None, media: str | None
) -> None:
    # A non-IRI graph parameter and a query given twice are 400, as Oxigraph answers them.
    headers = {"Content-Type": media} if media else {}
    response = http.request(method, "/sparql", params=params, content=body, headers=headers)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")


def test_protocol_refusal_cases_are_all_there() -> None:
    assert len(PROTOCOL_REFUSALS) == 6


def test_unacceptable_result_format_is_406_listing_types(http: httpx.Client) -> None:
    response = http.get("/sparql", params={"query": SELECT}, headers={"Accept": "image/png"})
    assert response.status_code == 406
    assert "application/sparql-results+json" in response.json()["available"]


def test_cors_is_open_on_query_responses_only(http: httpx.Client) -> None:
    query = http.get("/sparql", params={"query": "ASK {}"})
    assert query.headers["access-control-allow-origin"] == "*"
    preflight = http.options(
        "/sparql",
        headers={"Origin": "http://elsewhere.test", "Access-Control-Request-Method": "POST"},
    )
    assert (
        preflight.status_code == 204 and "POST" in preflight.headers["access-control-allow-methods"]
    )
    update = http.post(
        "/update", content="CLEAR ALL", headers={"Content-Type": "application/sparql-update"}
    )
    assert "access-control-allow-origin" not in update.headers


@pytest.mark.parametrize(
    ("params", "query"),
    [
        ({}, PRIVATE_ASK),
        ({}, f'ASK {{ GRAPH ?g {{ ?s ?p "{PRIVATE_MARKER}" }} }}'),
        ({}, f'ASK FROM <{PRIVATE_GRAPH}> {{ ?s ?p "{PRIVATE_MARKER}" }}'),
        ({}, f'ASK FROM NAMED <{PRIVATE_GRAPH}> {{ GRAPH ?g {{ ?s ?p "{PRIVATE_MARKER}" }} }}'),
        ({"default-graph-uri": PRIVATE_GRAPH}, PRIVATE_ASK),
        ({"named-graph-uri": PRIVATE_GRAPH}, f'ASK {{ GRAPH ?g {{ ?s ?p "{PRIVATE_MARKER}" }} }}'),
        ({}, f"ASK {{ GRAPH <{BASE}/graph/admin> {{ ?s ?p ?o }} }}"),
        ({}, f"ASK {{ <{BASE}/experiment/202401010002> ?p ?o }}"),
    ],
)
def test_private_graphs_are_invisible_without_the_token(
    shared_live_server: LiveServer, params: dict[str, str], query: str
) -> None:
    with httpx.Client(base_url=shared_live_server.url, timeout=30) as anonymous:
        assert _ask(anonymous.get("/sparql", params={"query": query, **params})) is False
    with httpx.Client(base_url=shared_live_server.url, timeout=30) as owner:
        response = owner.get(
            "/sparql",
            params={"query": query, **params},
            headers={"Authorization": f"Bearer {OWNER_TOKEN}"},
        )
        admin = "graph/admin" in query
        assert _ask(response) is (not admin)


def test_describe_of_a_private_iri_is_empty(http: httpx.Client) -> None:
    response = http.get(
        "/sparql",
        params={"query": f"DESCRIBE <{BASE}/experiment/202401010002>"},
        headers={"Accept": "application/n-triples"},
    )
    assert response.status_code == 200 and response.content.strip() == b""


def test_protocol_dataset_restricts_the_default_graph(http: httpx.Client) -> None:
    catalog = f"{BASE}/graph/catalog"
    query = "SELECT (COUNT(*) AS ?n) WHERE { ?s a <https://w3id.org/qabench/vocab#Experiment> }"
    restricted = http.get("/sparql", params={"query": query, "default-graph-uri": catalog})
    everything = http.get("/sparql", params={"query": query})
    assert restricted.json()["results"]["bindings"][0]["n"]["value"] == "0"
    assert everything.json()["results"]["bindings"][0]["n"]["value"] == "1"


def test_row_cap_truncates_and_says_so(make_live_server) -> None:  # type: ignore[no-untyped-def]
    live = make_live_server(max_result_rows=4)
    with httpx.Client(base_url=live.url, timeout=30) as client:
        response = client.get("/sparql", params={"query": "SELECT * WHERE { ?s ?p ?o }"})
        document = response.json()
        assert len(document["results"]["bindings"]) == 4
        assert response.headers["x-result-truncated"] == "true"
        assert response.headers["x-result-row-limit"] == "4"
        assert document["head"]["link"] == [f"{BASE}/sparql#truncation"]
        small = client.get("/sparql", params={"query": "SELECT * WHERE { ?s ?p ?o } LIMIT 2"})
        assert "x-result-truncated" not in small.headers
        graph = client.get(
            "/sparql",
            params={"query": "CONSTRUCT WHERE { ?s ?p ?o }"},
            headers={"Accept": "application/n-triples"},
        )
        assert (
            len(graph.text.strip().splitlines()) == 4
            and graph.headers["x-result-truncated"] == "true"
        )


RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"


def test_runaway_query_is_stopped_while_other_clients_are_served(make_live_server) -> None:  # type: ignore[no-untyped-def]
    # Two clients (told apart by the trusted proxy's X-Forwarded-For): one runs away. What is
    # asserted is the order of events, never their time: the other client's queries and pages
    # are answered while the runaway still holds its worker, and the runaway is then stopped by
    # the time limit.
    live = make_live_server(query_timeout_seconds=3.0, query_workers=2, trusted_proxy="127.0.0.1")
    live.services.pool.start()
    assert live.services.pool.wait_ready(60)
    outcome: dict[str, httpx.Response] = {}

    def _runaway() -> None:
        with httpx.Client(base_url=live.url, timeout=120) as client:
            outcome["runaway"] = client.get(
                "/sparql", params={"query": RUNAWAY}, headers={"X-Forwarded-For": "10.0.0.1"}
            )

    thread = threading.Thread(target=_runaway)
    thread.start()
    fair = live.services.pool.fair
    while fair.idle >= 2 and thread.is_alive():
        time.sleep(0.01)  # until the runaway holds a worker
    other = {"X-Forwarded-For": "10.0.0.2"}
    during = 0  # answers that arrived while the runaway was still running
    with httpx.Client(base_url=live.url, timeout=60, headers=other) as client:
        while thread.is_alive():
            assert _ask(client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}))
            assert client.get("/datasets", headers={"Accept": "text/html"}).status_code == 200
            during += thread.is_alive()
            time.sleep(0.05)
    thread.join()
    runaway = outcome["runaway"]
    assert runaway.status_code == 503
    assert runaway.headers["retry-after"] == "3"
    assert runaway.json()["type"].endswith("#QueryTimeout")
    assert during >= 1
    # The killed worker is replaced: the endpoint keeps answering afterwards.
    assert live.services.pool.wait_ready(60)
    with httpx.Client(base_url=live.url, timeout=30) as client:
        assert _ask(client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}))


def test_sparql_sees_writes(live_server: LiveServer) -> None:
    from pyoxigraph import Literal, NamedNode, Quad

    query = 'ASK { GRAPH ?g { <http://x.test/s> <http://x.test/p> "new" } }'
    with httpx.Client(base_url=live_server.url, timeout=30) as client:
        assert _ask(client.get("/sparql", params={"query": query})) is False
        live_server.services.store.add(
            [
                Quad(
                    NamedNode("http://x.test/s"),
                    NamedNode("http://x.test/p"),
                    Literal("new"),
                    NamedNode(f"{BASE}/graph/rag"),  # (kb and dataset graphs are catalog-gated)
                )
            ]
        )
        live_server.services.notify_write()
        assert _ask(client.get("/sparql", params={"query": query})) is True


def test_html_results_page_for_browsers(http: httpx.Client) -> None:
    response = http.get(
        "/sparql", params={"query": SELECT}, headers={"Accept": "text/html,*/*;q=0.8"}
    )
    assert response.status_code == 200 and "<table" in response.text
    # a header row and four observations (Macro F1 QALD, macro F1, micro F1, per question)
    assert response.text.count("<tr>") == 5

"""Content negotiation on linked-data resources (Flask client): Accept with q-values, parameters
and aliases, format extensions, ?format=, documents as graphs, Vary / Content-Location / Link,
JSON-LD with its context inline, 406, 404, entity tags, conditional GET and gzip."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyoxigraph import DefaultGraph, RdfFormat, parse
from rdflib import Graph

from server.web.representations import parse_accept
from tests.plugins.server import public_write

EXPERIMENT = "/experiment/202401010001"
COMUNICA_ACCEPT = (
    "application/n-quads,application/trig;q=0.95,application/ld+json;q=0.9,"
    "application/n-triples;q=0.8,text/turtle;q=0.6,application/rdf+xml;q=0.5,text/n3;q=0.35,"
    "application/xml;q=0.3,image/svg+xml;q=0.3,text/xml;q=0.3,text/html;q=0.2,"
    "application/xhtml+xml;q=0.18,application/json;q=0.135,text/shaclc;q=0.1"
)
EXTENSION = {
    "text/html": "html",
    "text/turtle": "ttl",
    "application/ld+json": "jsonld",
    "application/n-triples": "nt",
    "application/rdf+xml": "rdf",
    "application/n-quads": "nq",
    "application/trig": "trig",
}


ACCEPT_CASES = [
    ("text/html", "text/html"),
    ("text/turtle", "text/turtle"),
    ("application/ld+json", "application/ld+json"),
    ("application/json", "application/ld+json"),
    ("application/n-triples", "application/n-triples"),
    ("application/rdf+xml", "application/rdf+xml"),
    ("application/n-quads", "application/n-quads"),
    ("application/trig", "application/trig"),
    ("*/*", "text/turtle"),
    (None, "text/turtle"),
    ("text/html;q=0.9, application/ld+json", "application/ld+json"),
    ("text/turtle;q=0, */*", "text/html"),
    ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html"),
    # Parameters other than q are ignored (RFC 9110 section 12.5.1).
    ("text/turtle; charset=utf-8", "text/turtle"),
    ('application/ld+json;profile="http://www.w3.org/ns/json-ld#compacted"', "application/ld+json"),
    ('application/ld+json; profile="a, b"; q=0.9, text/html;q=0.1', "application/ld+json"),
    # The media types clients use for the same forms.
    ("text/plain", "application/n-triples"),
    ("text/n3", "text/turtle"),
    ("application/x-turtle", "text/turtle"),
    ("application/xml", "application/rdf+xml"),
    ("text/xml", "application/rdf+xml"),
    ("text/x-nquads", "application/n-quads"),
    ("application/xhtml+xml", "text/html"),
    # A named type beats a wildcard of the same quality; type/* ranges match.
    ("application/n-triples, */*", "application/n-triples"),
    ("text/*", "text/turtle"),
    ("text/*;q=0.5, application/rdf+xml", "application/rdf+xml"),
    # What real clients send.
    (COMUNICA_ACCEPT, "application/n-quads"),
    ("text/n3, */*;q=0.1", "text/turtle"),  # rdflib format="n3"
    ("text/plain, */*;q=0.1", "application/n-triples"),  # rdflib format="nt"
    ("application/rdf+xml, */*;q=0.1", "application/rdf+xml"),  # rdflib format="xml"
    ("application/ld+json, application/json", "application/ld+json"),  # pyld
    ("garbage, text/turtle;q=nope, application/n-triples", "application/n-triples"),
]


@pytest.mark.parametrize(("accept", "media"), ACCEPT_CASES)
def test_accept_header_picks_the_representation(
    client: Any, accept: str | None, media: str
) -> None:
    response = client.get(EXPERIMENT, headers={"Accept": accept} if accept else {})
    assert response.status_code == 200
    assert response.mimetype == media
    assert "Accept" in response.headers["Vary"]
    extension = EXTENSION[media]
    if media in ("application/n-quads", "application/trig"):
        # Negotiated quad forms hold the document's triples, not the .nq/.trig document.
        assert "Content-Location" not in response.headers
    else:
        assert response.headers["Content-Location"] == f"{EXPERIMENT}.{extension}"
    links = response.headers.get("Link", "")
    assert f"<{EXPERIMENT}.{extension}>" not in links
    # JSON-LD responses list no alternates (pyld's loader fails on several); the others name
    # the five other RDF forms, HTML and the results tables as CSV, LaTeX and Markdown
    assert links.count('rel="alternate"') == (0 if media == "application/ld+json" else 9)
    assert media == "application/ld+json" or all(
        f"<{EXPERIMENT}.{form}>" in links for form in ("csv", "tex", "md")
    )


def test_accept_case_table_covers_every_form() -> None:
    assert len(ACCEPT_CASES) == 32
    assert {media for _, media in ACCEPT_CASES} == set(EXTENSION)


@given(st.text(max_size=300))
def test_any_accept_header_parses_without_error(header: str) -> None:
    for media_range in parse_accept(header):
        assert 0.0 <= media_range.q <= 1.0 and media_range.type and media_range.subtype


def test_negotiated_documents_are_graphs_and_document_urls_keep_graphs(client: Any) -> None:
    for accept, fmt in (
        ("application/n-quads", RdfFormat.N_QUADS),
        ("application/trig", RdfFormat.TRIG),
    ):
        negotiated = list(parse(client.get(EXPERIMENT, headers={"Accept": accept}).data, fmt))
        assert len(negotiated) > 20
        assert all(q.graph_name == DefaultGraph() for q in negotiated)
    for url in (f"{EXPERIMENT}.nq", f"{EXPERIMENT}?format=nq", f"{EXPERIMENT}.trig"):
        fmt = RdfFormat.TRIG if url.endswith("trig") else RdfFormat.N_QUADS
        quads = list(parse(client.get(url).data, fmt))
        assert quads and all(q.graph_name != DefaultGraph() for q in quads)


@pytest.mark.parametrize(
    ("accept", "fmt", "media"),
    [
        # Accept names a form: the parameter does not override it (SPARQLWrapper sends both).
        ("application/rdf+xml", "xml", "application/rdf+xml"),
        ("text/turtle", "jsonld", "text/turtle"),
        # Accept does not decide (wildcards, nothing, a browser preferring HTML): format does.
        ("*/*", "nt", "application/n-triples"),
        (None, "jsonld", "application/ld+json"),
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "ttl", "text/turtle"),
        # A known format this resource does not offer is ignored; Accept decides.
        ("application/n-triples", "csv", "application/n-triples"),
        (None, "tsv", "text/turtle"),
        # An explicit format may pick a form Accept would not have.
        ("image/png", "ttl", "text/turtle"),
    ],
)
def test_format_parameter_decides_only_when_accept_does_not(
    client: Any, accept: str | None, fmt: str, media: str
) -> None:
    headers = {"Accept": accept} if accept else {}
    response = client.get(EXPERIMENT, query_string={"format": fmt}, headers=headers)
    assert response.status_code == 200 and response.mimetype == media


@pytest.mark.parametrize(
    ("suffix", "fmt"),
    [
        (".ttl", RdfFormat.TURTLE),
        (".nt", RdfFormat.N_TRIPLES),
        (".rdf", RdfFormat.RDF_XML),
        (".nq", RdfFormat.N_QUADS),
        (".jsonld", RdfFormat.JSON_LD),
    ],
)
def test_extension_and_format_parameter_override_accept(
    client: Any, suffix: str, fmt: RdfFormat
) -> None:
    by_extension = client.get(EXPERIMENT + suffix, headers={"Accept": "text/html"})
    by_param = client.get(
        EXPERIMENT, query_string={"format": suffix[1:]}, headers={"Accept": "text/html"}
    )
    for response in (by_extension, by_param):
        assert response.status_code == 200 and response.mimetype == fmt.media_type
        # JSON-LD too: its context is inline, so the parser needs nothing else.
        triples = list(parse(response.data, fmt, base_iri="http://qabench.test/"))
        assert len(triples) > 20


def test_html_links_mirror_the_link_header(client: Any) -> None:
    response = client.get(EXPERIMENT, headers={"Accept": "text/html"})
    html = response.get_data(as_text=True)
    for media in (
        "text/turtle",
        "application/ld+json",
        "application/n-triples",
        "application/rdf+xml",
    ):
        assert f'<link rel="alternate" type="{media}"' in html
        assert media in response.headers["Link"]


def test_jsonld_is_compacted_with_its_context_inline(client: Any) -> None:
    data = client.get(EXPERIMENT + ".jsonld").data
    document = json.loads(data)
    context = document["@context"]
    assert context["qab"] == "https://w3id.org/qabench/vocab#"
    experiment = next(n for n in document["@graph"] if n["@id"].endswith(EXPERIMENT))
    assert experiment["@type"] == "qab:Experiment"
    published = json.loads(client.get("/context.jsonld").data)["@context"]
    assert context.items() <= published.items()
    turtle = client.get(EXPERIMENT + ".ttl").data
    # rdflib reads the same triples from either form, offline.
    from_jsonld = Graph().parse(data=data, format="json-ld")
    assert len(from_jsonld) == len(Graph().parse(data=turtle, format="turtle")) > 20


def test_nothing_acceptable_is_406_listing_the_types(client: Any) -> None:
    response = client.get(EXPERIMENT, headers={"Accept": "image/png"})
    assert response.status_code == 406
    problem = response.get_json()
    assert "text/turtle" in problem["available"] and "text/turtle" in problem["detail"]
    # A format name nothing here answers to is a typo, whatever Accept says.
    for accept in ({}, {"Accept": "*/*"}, {"Accept": "text/turtle"}):
        typo = client.get(EXPERIMENT, query_string={"format": "png"}, headers=accept)
        assert typo.status_code == 406 and "format=png" in typo.get_json()["detail"]


def test_unknown_ids_are_404_in_json_and_html(client: Any) -> None:
    data = client.get("/experiment/199901010001", headers={"Accept": "text/turtle"})
    assert data.status_code == 404 and data.mimetype == "application/problem+json"
    page = client.get("/dataset/nope", headers={"Accept": "text/html"})
    assert page.status_code == 404 and b"Not found" in page.data
    assert client.get(EXPERIMENT + ".png").status_code == 404


def test_etag_and_conditional_get(app: Any, client: Any) -> None:
    first = client.get(EXPERIMENT, headers={"Accept": "text/turtle"})
    etag = first.headers["ETag"]
    again = client.get(EXPERIMENT, headers={"Accept": "text/turtle", "If-None-Match": etag})
    assert again.status_code == 304 and again.data == b""
    other_form = client.get(EXPERIMENT, headers={"Accept": "text/html", "If-None-Match": etag})
    assert other_form.status_code == 200
    public_write(app)
    after_write = client.get(EXPERIMENT, headers={"Accept": "text/turtle", "If-None-Match": etag})
    assert after_write.status_code == 200 and after_write.headers["ETag"] != etag


def test_dataset_version_and_question_documents(client: Any) -> None:
    version = client.get("/dataset/demo-qa/v1", headers={"Accept": "application/n-triples"})
    triples = list(parse(version.data, RdfFormat.N_TRIPLES))
    questions = {t.subject.value for t in triples if t.object.value.endswith("#Question")}
    assert len(questions) == 3
    question = client.get("/dataset/demo-qa/v1/question/1.nt")
    subjects = {t.subject.value for t in parse(question.data, RdfFormat.N_TRIPLES)}
    assert subjects == {
        "http://qabench.test/dataset/demo-qa/v1/question/1",
        "http://qabench.test/dataset/demo-qa/v1/question/1/answers/0",
    }


def test_vocabulary_terms_dereference(client: Any) -> None:
    page = client.get("/vocab", headers={"Accept": "text/html"})
    assert b'id="Experiment"' in page.data
    term = client.get("/vocab/Experiment", headers={"Accept": "text/turtle"})
    triples = list(parse(term.data, RdfFormat.TURTLE))
    assert {t.subject.value for t in triples} == {"https://w3id.org/qabench/vocab#Experiment"}
    whole = client.get("/vocab.ttl")
    assert len(list(parse(whole.data, RdfFormat.TURTLE))) > 300
    assert client.get("/vocab/Experimnet").status_code == 404


def test_lists_negotiate_too(client: Any) -> None:
    page = client.get("/datasets", headers={"Accept": "text/html"})
    assert b"demo-qa" in page.data and b"/sparql?query=" in page.data
    data = client.get("/datasets", headers={"Accept": "text/turtle"})
    members = [
        t for t in parse(data.data, RdfFormat.TURTLE) if t.predicate.value.endswith("hasPart")
    ]
    assert [t.object.value for t in members] == ["http://qabench.test/dataset/demo-qa"]


def test_head_has_the_headers_of_get_without_a_body(client: Any) -> None:
    get = client.get(EXPERIMENT, headers={"Accept": "text/turtle"})
    head = client.head(EXPERIMENT, headers={"Accept": "text/turtle"})
    assert head.status_code == 200 and head.data == b""
    for name in ("Content-Type", "ETag", "Link", "Content-Location", "Vary"):
        assert head.headers[name] == get.headers[name]

"""Content negotiation on linked-data resources (Flask client): Accept with q-values, format
extensions, ?format=, Vary / Content-Location / Link, 406, 404, ETags and conditional GET."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pyoxigraph import RdfFormat, parse

EXPERIMENT = "/experiment/202401010001"


@pytest.mark.parametrize(
    ("accept", "media"),
    [
        ("text/html", "text/html"),
        ("text/turtle", "text/turtle"),
        ("application/ld+json", "application/ld+json"),
        ("application/json", "application/ld+json"),
        ("application/n-triples", "application/n-triples"),
        ("application/rdf+xml", "application/rdf+xml"),
        ("application/n-quads", "application/n-quads"),
        ("*/*", "text/turtle"),
        (None, "text/turtle"),
        ("text/html;q=0.9, application/ld+json", "application/ld+json"),
        ("text/turtle;q=0, */*", "text/html"),
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html"),
    ],
)
def test_accept_header_picks_the_representation(
    client: Any, accept: str | None, media: str
) -> None:
    response = client.get(EXPERIMENT, headers={"Accept": accept} if accept else {})
    assert response.status_code == 200
    assert response.mimetype == media
    assert "Accept" in response.headers["Vary"]
    extension = {
        "text/html": "html",
        "text/turtle": "ttl",
        "application/ld+json": "jsonld",
        "application/n-triples": "nt",
        "application/rdf+xml": "rdf",
        "application/n-quads": "nq",
    }[media]
    assert response.headers["Content-Location"] == f"{EXPERIMENT}.{extension}"
    links = response.headers["Link"]
    assert f"<{EXPERIMENT}.{extension}>" not in links
    assert links.count('rel="alternate"') == 5


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
    context = json.loads(client.get("/context.jsonld").data)["@context"]
    for response in (by_extension, by_param):
        assert response.status_code == 200 and response.mimetype == fmt.media_type
        data = response.data
        if fmt == RdfFormat.JSON_LD:
            # Inline the published context: the parser does not fetch remote contexts.
            data = json.dumps(dict(json.loads(data), **{"@context": context})).encode()
        triples = list(parse(data, fmt, base_iri="http://qabench.test/"))
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


def test_jsonld_is_compacted_with_the_published_context(client: Any) -> None:
    document = json.loads(client.get(EXPERIMENT + ".jsonld").data)
    assert document["@context"] == "http://qabench.test/context.jsonld"
    experiment = next(n for n in document["@graph"] if n["@id"].endswith(EXPERIMENT))
    assert experiment["@type"] == "qab:Experiment"
    context = json.loads(client.get("/context.jsonld").data)["@context"]
    assert context["qab"] == "https://w3id.org/qabench/vocab#"


def test_nothing_acceptable_is_406_listing_the_types(client: Any) -> None:
    response = client.get(EXPERIMENT, headers={"Accept": "image/png"})
    assert response.status_code == 406
    problem = response.get_json()
    assert "text/turtle" in problem["available"] and "text/turtle" in problem["detail"]
    assert client.get(EXPERIMENT, query_string={"format": "png"}).status_code == 406


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
    app.extensions["services"].notify_write()
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

"""Entity tags (strong for data, weak for HTML), 304 for strong and weak If-None-Match and for
If-Modified-Since, Last-Modified, gzip negotiated with Accept-Encoding (Flask client)."""

from __future__ import annotations

import gzip
import time
from typing import Any
from urllib.parse import urlencode

import pytest
from pyoxigraph import RdfFormat, parse
from werkzeug.http import http_date, parse_date

from server.web import caching
from tests.plugins.server import OWNER_TOKEN, PRIVATE_EXPERIMENT, public_write

EXPERIMENT = "/experiment/202401010001"
# Every kind of response that carries validators: documents, pages, lists, vocabulary, VoID.
VALIDATED = [
    (EXPERIMENT, "text/turtle"),
    (EXPERIMENT, "text/html"),
    (EXPERIMENT + ".jsonld", None),
    ("/dataset/demo-qa/v1", "application/n-triples"),
    ("/datasets", "text/html"),
    ("/datasets", "text/turtle"),
    ("/vocab", "text/turtle"),
    ("/.well-known/void", "text/turtle"),
    ("/graph/catalog", "application/n-quads"),
]


def _get(client: Any, url: str, accept: str | None, **headers: str) -> Any:
    if accept:
        headers["Accept"] = accept
    return client.get(url, headers=headers)


@pytest.mark.parametrize(("url", "accept"), VALIDATED)
def test_strong_and_weak_if_none_match_give_304(client: Any, url: str, accept: str | None) -> None:
    first = _get(client, url, accept)
    assert first.status_code == 200
    tag, weak = first.get_etag()
    # HTML pages have weak tags (their bytes may differ per reader), data strong ones.
    assert weak == (first.mimetype == "text/html")
    assert first.headers["Last-Modified"]
    for sent in (f'"{tag}"', f'W/"{tag}"', f'"other", W/"{tag}"', "*"):
        again = _get(client, url, accept, **{"If-None-Match": sent})
        assert again.status_code == 304, sent
        assert again.data == b"" and again.get_etag()[0] == tag
    assert _get(client, url, accept, **{"If-None-Match": '"other"'}).status_code == 200


def test_validated_cases_are_all_there() -> None:
    assert len(VALIDATED) == 9


def test_if_modified_since_gives_304_until_a_write(app: Any, client: Any) -> None:
    first = client.get(EXPERIMENT, headers={"Accept": "text/turtle"})
    modified = first.headers["Last-Modified"]
    assert parse_date(modified) is not None
    same = client.get(EXPERIMENT, headers={"Accept": "text/turtle", "If-Modified-Since": modified})
    assert same.status_code == 304
    earlier = http_date(parse_date(modified).timestamp() - 3600)  # type: ignore[union-attr]
    older = client.get(EXPERIMENT, headers={"Accept": "text/turtle", "If-Modified-Since": earlier})
    assert older.status_code == 200
    time.sleep(1.1)
    public_write(app)
    after = client.get(EXPERIMENT, headers={"Accept": "text/turtle", "If-Modified-Since": modified})
    assert after.status_code == 200
    assert parse_date(after.headers["Last-Modified"]) > parse_date(modified)  # type: ignore[operator]
    # If-None-Match takes precedence over If-Modified-Since (RFC 9110 section 13.2.2).
    both = client.get(
        EXPERIMENT,
        headers={
            "Accept": "text/turtle",
            "If-Modified-Since": after.headers["Last-Modified"],
            "If-None-Match": '"stale"',
        },
    )
    assert both.status_code == 200


def test_html_pages_with_other_query_strings_have_other_tags(client: Any) -> None:
    first = client.get("/dataset/demo-qa/v1", headers={"Accept": "text/html"})
    second = client.get("/dataset/demo-qa/v1?page=2", headers={"Accept": "text/html"})
    assert first.get_etag()[0] != second.get_etag()[0]


@pytest.mark.parametrize(
    ("url", "accept", "fmt"),
    [
        (EXPERIMENT, "text/turtle", RdfFormat.TURTLE),
        (EXPERIMENT, "application/n-triples", RdfFormat.N_TRIPLES),
        (EXPERIMENT, "application/ld+json", RdfFormat.JSON_LD),
        ("/vocab", "application/rdf+xml", RdfFormat.RDF_XML),
        (EXPERIMENT, "text/html", None),
    ],
)
def test_gzip_when_accepted(client: Any, url: str, accept: str, fmt: RdfFormat | None) -> None:
    plain = client.get(url, headers={"Accept": accept})
    packed = client.get(url, headers={"Accept": accept, "Accept-Encoding": "gzip, deflate, br"})
    assert "Content-Encoding" not in plain.headers
    assert packed.headers["Content-Encoding"] == "gzip"
    for response in (plain, packed):
        assert "Accept-Encoding" in response.headers["Vary"]
    body = gzip.decompress(packed.data)
    assert len(packed.data) * 3 < len(body)
    assert int(packed.headers["Content-Length"]) == len(packed.data)
    if fmt is not None:
        assert body == plain.data
        assert len(list(parse(body, fmt, base_iri="http://qabench.test/"))) > 10
    # The compressed form has its own tag; either one revalidates.
    plain_tag, packed_tag = plain.get_etag()[0], packed.get_etag()[0]
    assert packed_tag == plain_tag + "-gzip"
    for tag in (plain_tag, packed_tag):
        again = client.get(
            url,
            headers={"Accept": accept, "Accept-Encoding": "gzip", "If-None-Match": f'"{tag}"'},
        )
        assert again.status_code == 304


def test_no_gzip_when_refused_or_small(client: Any) -> None:
    refused = client.get(
        EXPERIMENT, headers={"Accept": "text/turtle", "Accept-Encoding": "gzip;q=0"}
    )
    assert "Content-Encoding" not in refused.headers
    small = client.get("/vocab/Experiment.nt", headers={"Accept-Encoding": "gzip"})
    assert len(small.data) < 1024 and "Content-Encoding" not in small.headers


def test_public_validators_move_only_with_public_content(app: Any, client: Any) -> None:
    first = client.get(EXPERIMENT, headers={"Accept": "text/turtle"})
    tag, modified = first.get_etag()[0], first.headers["Last-Modified"]
    time.sleep(1.1)
    # A private experiment changes (as while it runs): nothing public moves.
    public_write(app, f"http://qabench.test/graph/experiment/{PRIVATE_EXPERIMENT}")
    same = client.get(EXPERIMENT, headers={"Accept": "text/turtle"})
    assert same.get_etag()[0] == tag and same.headers["Last-Modified"] == modified
    revalidated = client.get(
        EXPERIMENT, headers={"Accept": "text/turtle", "If-None-Match": f'"{tag}"'}
    )
    assert revalidated.status_code == 304
    # A public write moves both.
    public_write(app)
    moved = client.get(EXPERIMENT, headers={"Accept": "text/turtle"})
    assert moved.get_etag()[0] != tag and moved.headers["Last-Modified"] != modified


def test_public_bodies_outlive_private_writes(
    app: Any, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A running private experiment writes often: public pages must not be rebuilt for it.
    from server.linked_data import pipeline

    made: list[str] = []
    real = pipeline._make

    def counting(resource: Any, reader: Any) -> Any:
        made.append(reader.stem)
        return real(resource, reader)

    monkeypatch.setattr(pipeline, "_make", counting)
    paths = [EXPERIMENT, "/experiments", "/"]
    first = [client.get(p, headers={"Accept": "text/html"}).data for p in paths]
    assert len(made) == 3
    public_write(app, f"http://qabench.test/graph/experiment/{PRIVATE_EXPERIMENT}")
    again = [client.get(p, headers={"Accept": "text/html"}).data for p in paths]
    assert again == first and len(made) == 3
    # the owner still gets a page built for them
    opened = {"Authorization": f"Bearer {OWNER_TOKEN}", "Accept": "text/html"}
    assert client.get(f"/experiment/{PRIVATE_EXPERIMENT}", headers=opened).status_code == 200
    assert len(made) == 4
    # a public write rebuilds each page once
    public_write(app)
    for p in paths:
        client.get(p, headers={"Accept": "text/html"})
        client.get(p, headers={"Accept": "text/html"})
    assert len(made) == 7


def _with_token(client: Any, path: str, how: str, headers: dict[str, str]) -> Any:
    """GET ``path`` presenting the owner's token ``how``: bearer, query or cookie."""
    url = path
    if how == "bearer":
        headers = {**headers, "Authorization": f"Bearer {OWNER_TOKEN}"}
    elif how == "query":
        url += f"?token={OWNER_TOKEN}"
    else:
        client.set_cookie("qabench_tokens", OWNER_TOKEN, domain="localhost")
    return client.get(url, headers=headers)


PRIVATE_READS = [
    f"/experiment/{PRIVATE_EXPERIMENT}",
    f"/experiment/{PRIVATE_EXPERIMENT}.ttl",
    "/experiments",
    f"/task/{PRIVATE_EXPERIMENT}/1",
]


@pytest.mark.parametrize("path", PRIVATE_READS)
@pytest.mark.parametrize("how", ["bearer", "query", "cookie"])
def test_token_opened_responses_are_private_and_vary_on_what_opened_them(
    client: Any, path: str, how: str
) -> None:
    opened = _with_token(client, path, how, {"Accept": "text/html"})
    assert opened.status_code == 200
    assert opened.headers["Cache-Control"] == "private, no-store"
    assert {"Authorization", "Cookie"} <= set(opened.vary)
    assert OWNER_TOKEN not in opened.get_data(as_text=True)
    anonymous = client.application.test_client().get(path, headers={"Accept": "text/html"})
    if path == "/experiments":
        assert anonymous.headers["Cache-Control"] == "no-cache"
    else:
        assert anonymous.status_code == 404


def test_private_read_cases_are_all_there() -> None:
    assert len(PRIVATE_READS) * 3 == 12


# What reads no token: the same body for every reader, shared even with token holders.
SHARED_READS = ["/.well-known/void", "/vocab", "/vocab/Experiment", "/context.jsonld", "/sparql"]


@pytest.mark.parametrize("path", SHARED_READS)
@pytest.mark.parametrize("how", ["bearer", "query", "cookie"])
def test_a_token_holder_shares_what_reads_no_token(client: Any, path: str, how: str) -> None:
    anonymous = client.application.test_client().get(path)
    assert anonymous.status_code == 200
    opened = _with_token(client, path, how, {})
    assert opened.status_code == 200
    assert "private" not in opened.headers["Cache-Control"]
    assert not {"Authorization", "Cookie"} & set(opened.vary)
    assert "qabench_tokens" not in opened.headers.get("Set-Cookie", "")
    if how != "query":
        # the anonymous reader's body and validator: the token changed nothing here
        assert opened.get_data() == anonymous.get_data()
        assert opened.headers["ETag"] == anonymous.headers["ETag"]


# --- /sparql by the same rules (issue 41) ------------------------------------------------------

SPARQL_ASK = {"query": "ASK { ?s ?p ?o }"}


def test_sparql_validators_follow_public_content_only(app: Any, client: Any) -> None:
    first = client.get("/sparql", query_string=SPARQL_ASK)
    assert first.status_code == 200 and first.headers["Cache-Control"] == "no-cache"
    tag, modified = first.get_etag()[0], first.headers["Last-Modified"]
    time.sleep(1.1)
    # A private experiment changes: no public validator moves (they did).
    public_write(app, f"http://qabench.test/graph/experiment/{PRIVATE_EXPERIMENT}")
    same = client.get("/sparql", query_string=SPARQL_ASK)
    assert same.get_etag()[0] == tag and same.headers["Last-Modified"] == modified
    assert (
        client.get(
            "/sparql", query_string=SPARQL_ASK, headers={"If-None-Match": f'"{tag}"'}
        ).status_code
        == 304
    )
    public_write(app)
    moved = client.get("/sparql", query_string=SPARQL_ASK)
    assert moved.get_etag()[0] != tag and moved.headers["Last-Modified"] != modified
    # never later than the answer's own date
    assert parse_date(moved.headers["Last-Modified"]) <= parse_date(moved.headers["Date"])


@pytest.mark.parametrize("how", ["bearer", "query", "cookie"])
def test_sparql_results_a_token_opened_are_private(client: Any, how: str) -> None:
    query = "SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"
    accept = {"Accept": "application/sparql-results+json"}
    if how == "query":
        path = "/sparql?" + urlencode({"query": query, "token": OWNER_TOKEN})
        opened = client.get(path, headers=accept)
    else:
        opened = _with_token(client, "/sparql?" + urlencode({"query": query}), how, accept)
    assert opened.status_code == 200
    assert PRIVATE_EXPERIMENT in opened.get_data(as_text=True)  # the token opened something
    assert opened.headers["Cache-Control"] == "private, no-store"
    assert {"Authorization", "Cookie"} <= set(opened.vary)


def test_last_modified_is_never_later_than_date() -> None:
    date, modified = caching.dated(2_000_000_000.0, 1_000_000_000.0)
    assert parse_date(modified) == parse_date(date)
    date, modified = caching.dated(1_000_000_000.0, 2_000_000_000.0)
    assert parse_date(modified) < parse_date(date)

"""The dump (Flask client): written in the background and followed while it grows, then a
length, ranges, conditional requests, gzip when accepted and as a file, the licence, validators
that change with public content only, and token holders' private graphs."""

from __future__ import annotations

import gzip
import time
from typing import Any

import pytest
from pyoxigraph import RdfFormat, parse

from tests.plugins.server import OWNER_TOKEN, PRIVATE_MARKER

LICENCE = '<https://creativecommons.org/licenses/by/4.0/>; rel="license"'


def _complete(client: Any) -> Any:
    """Return the dump once its background file is complete (it has a length then)."""
    deadline = time.monotonic() + 30
    while True:
        response = client.get("/dump.nq", buffered=True)
        if "Content-Length" in response.headers:
            return response
        assert time.monotonic() < deadline, "the dump file was never completed"
        time.sleep(0.05)


@pytest.fixture
def client(client: Any) -> Any:
    """The test client, once the dump of the current view is complete."""
    _complete(client)
    deadline = time.monotonic() + 30
    while client.get("/dump.nq.gz", buffered=True).status_code != 200:
        assert time.monotonic() < deadline
    return client


def test_the_dump_has_a_length_a_tag_and_the_licence(client: Any) -> None:
    response = client.get("/dump.nq", buffered=True)
    body = response.data
    assert response.status_code == 200 and response.mimetype == "application/n-quads"
    assert int(response.headers["Content-Length"]) == len(body) > 1000
    assert response.headers["Accept-Ranges"] == "bytes"
    assert response.headers["ETag"] and response.headers["Last-Modified"]
    assert LICENCE in response.headers["Link"]
    assert len(list(parse(body, RdfFormat.N_QUADS))) > 50
    assert PRIVATE_MARKER.encode() not in body
    head = client.head("/dump.nq", buffered=True)
    assert head.headers["Content-Length"] == response.headers["Content-Length"]


def test_ranges(client: Any) -> None:
    whole = client.get("/dump.nq", buffered=True).data
    part = client.get("/dump.nq", headers={"Range": "bytes=10-109"}, buffered=True)
    assert part.status_code == 206 and part.data == whole[10:110]
    assert part.headers["Content-Range"] == f"bytes 10-109/{len(whole)}"
    tail = client.get("/dump.nq", headers={"Range": "bytes=-50"}, buffered=True)
    assert tail.status_code == 206 and tail.data == whole[-50:]
    beyond = client.get("/dump.nq", headers={"Range": f"bytes={len(whole) + 10}-"}, buffered=True)
    assert beyond.status_code == 416
    tag = client.get("/dump.nq", buffered=True).headers["ETag"]
    same = client.get("/dump.nq", headers={"Range": "bytes=0-9", "If-Range": tag}, buffered=True)
    assert same.status_code == 206 and same.data == whole[:10]
    changed = client.get(
        "/dump.nq", headers={"Range": "bytes=0-9", "If-Range": '"old"'}, buffered=True
    )
    assert changed.status_code == 200 and changed.data == whole


def test_conditional_requests(app: Any, client: Any) -> None:
    first = client.get("/dump.nq", buffered=True)
    tag = first.headers["ETag"]
    assert client.get("/dump.nq", headers={"If-None-Match": tag}, buffered=True).status_code == 304
    assert (
        client.get("/dump.nq", headers={"If-None-Match": "W/" + tag}, buffered=True).status_code
        == 304
    )
    services = app.extensions["services"]
    services.notify_write()  # no public change: the same dump, the same validators
    assert client.get("/dump.nq", headers={"If-None-Match": tag}).status_code == 304
    graph = services.index.public_graphs()[0]
    quad = next(services.store.quads(graph=graph))
    services.store.apply(remove=[quad])
    services.notify_write()
    after = client.get("/dump.nq", headers={"If-None-Match": tag}, buffered=True)
    assert after.status_code == 200 and after.headers["ETag"] != tag
    assert str(quad).encode() not in _complete(client).data


def test_gzip_when_accepted_and_as_a_file(client: Any) -> None:
    plain = client.get("/dump.nq", buffered=True).data
    packed = client.get("/dump.nq", headers={"Accept-Encoding": "gzip"}, buffered=True)
    assert packed.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in packed.headers["Vary"]
    assert gzip.decompress(packed.data) == plain
    assert int(packed.headers["Content-Length"]) == len(packed.data) < len(plain)
    assert packed.headers["ETag"] != client.get("/dump.nq", buffered=True).headers["ETag"]
    # A range is always of the plain bytes (clients decode whole bodies only).
    ranged = client.get(
        "/dump.nq", headers={"Accept-Encoding": "gzip", "Range": "bytes=0-9"}, buffered=True
    )
    assert ranged.status_code == 206 and "Content-Encoding" not in ranged.headers
    file = client.get("/dump.nq.gz", buffered=True)
    assert file.mimetype == "application/gzip" and gzip.decompress(file.data) == plain
    assert LICENCE in file.headers["Link"]
    part = client.get("/dump.nq.gz", headers={"Range": "bytes=0-1"}, buffered=True)
    assert part.status_code == 206 and part.data == b"\x1f\x8b"


def test_token_holders_get_their_private_graphs_streamed(client: Any) -> None:
    response = client.get(
        "/dump.nq", headers={"Authorization": f"Bearer {OWNER_TOKEN}"}, buffered=True
    )
    assert PRIVATE_MARKER.encode() in response.data
    assert "private" in response.headers["Cache-Control"]


def test_a_dump_being_written_is_followed_from_its_first_bytes(app: Any) -> None:
    """The first reader after a write does not wait for the whole file: it follows it."""
    fresh = app.test_client()
    first = fresh.get("/dump.nq", buffered=True)
    assert first.status_code == 200 and first.headers["ETag"]
    complete = _complete(fresh)
    assert first.data == complete.data  # the followed bytes are the file's bytes
    assert first.headers["ETag"] == complete.headers["ETag"]

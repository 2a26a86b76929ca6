"""robots.txt and the paginated sitemap (Flask client): what is listed (published things only),
pages of the configured size, 404 past the end, URLs at the address the request reached."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from tests.plugins.server import BASE, build_app, fixture_quads, server_config

NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}


def _locs(response: Any, tag: str) -> list[str]:
    assert response.status_code == 200 and response.mimetype == "application/xml"
    root = ET.fromstring(response.data)
    return [e.text or "" for e in root.findall(f"s:{tag}/s:loc", NS)]


def test_robots_names_the_sitemap_and_keeps_crawlers_off_queries(client: Any) -> None:
    text = client.get("/robots.txt", base_url=BASE).get_data(as_text=True)
    assert f"Sitemap: {BASE}/sitemap.xml" in text
    for path in ("/sparql?", "/update", "/experiments/new", "/dump.nq", "/*?format="):
        assert f"Disallow: {path}\n" in text
    elsewhere = client.get("/robots.txt").get_data(as_text=True)
    assert "Sitemap: http://localhost/sitemap.xml" in elsewhere


def test_sitemap_lists_public_resources_only(client: Any) -> None:
    pages = _locs(client.get("/sitemap.xml", base_url=BASE), "sitemap")
    assert pages == [f"{BASE}/sitemap/1.xml"]
    urls = _locs(client.get("/sitemap/1.xml", base_url=BASE), "url")
    assert {
        f"{BASE}/",
        f"{BASE}/datasets",
        f"{BASE}/vocab",
        f"{BASE}/dataset/demo-qa",
        f"{BASE}/dataset/demo-qa/v1",
        f"{BASE}/experiment/202401010001",
        f"{BASE}/system/demo-system",
    } <= set(urls)
    assert not any("202401010002" in u for u in urls)  # the private experiment
    assert len(urls) == len(set(urls)) == 11
    for url in urls:
        assert (
            client.get(url.removeprefix(BASE), headers={"Accept": "text/html"}).status_code == 200
        )


def test_sitemap_pages_have_the_configured_size(tmp_path: Path) -> None:
    app = build_app(server_config(tmp_path, sitemap_page_size=4), fixture_quads())
    try:
        client = app.test_client()
        pages = _locs(client.get("/sitemap.xml"), "sitemap")
        assert pages == [f"http://localhost/sitemap/{n}.xml" for n in (1, 2, 3)]
        urls = [u for n in (1, 2, 3) for u in _locs(client.get(f"/sitemap/{n}.xml"), "url")]
        assert len(urls) == 11 and all(u.startswith("http://localhost/") for u in urls)
        assert [len(_locs(client.get(f"/sitemap/{n}.xml"), "url")) for n in (1, 2, 3)] == [4, 4, 3]
        for past in ("/sitemap/4.xml", "/sitemap/0.xml"):
            assert client.get(past).status_code == 404
    finally:
        app.extensions["services"].close()


def test_crawler_files_go_through_the_one_response_path(client: Any) -> None:
    """Validators, 304, an hour of freshness, the one form whatever Accept asks, and tokens
    change nothing (only anonymous visibility counts)."""
    from tests.plugins.server import OWNER_TOKEN

    cases = 0
    for path, media in (
        ("/robots.txt", "text/plain"),
        ("/sitemap.xml", "application/xml"),
        ("/sitemap/1.xml", "application/xml"),
    ):
        first = client.get(path, headers={"Accept": "text/html"})
        assert first.status_code == 200 and first.mimetype == media, path
        assert first.headers["Cache-Control"] == "public, max-age=3600"
        again = client.get(path, headers={"If-None-Match": first.headers["ETag"]})
        assert again.status_code == 304 and again.data == b"", path
        opened = client.get(path, headers={"Authorization": f"Bearer {OWNER_TOKEN}"})
        assert opened.data == first.data and "private" not in opened.headers["Cache-Control"]
        cases += 1
    assert cases == 3

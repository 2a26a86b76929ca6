"""The documented deployment: Debian's nginx in front of the server, with the site file of
docs/deploy/nginx-site.conf as shipped (only its two addresses replaced). Through the proxy,
the server sees each client's own address (per-client limits hold per client, not per proxy),
nginx refuses oversized bodies and extra connections itself, and pages, SPARQL and the dump
answer. Slow: it runs a third-party engine (nginx) in a process of its own."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server import httpd
from tests.plugins.server import REPO, build_app, fixture_quads, server_config

pytestmark = pytest.mark.slow

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
SITE = REPO / "docs" / "deploy" / "nginx-site.conf"


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    if not Path(NGINX).exists():
        pytest.fail("nginx is missing: ./dev test installs Debian's nginx")
    tmp = tmp_path_factory.mktemp("proxy")
    config = server_config(
        tmp, trusted_proxy="127.0.0.1", sparql_requests_per_minute=4, connections_per_client=4
    )
    app = build_app(config, fixture_quads())
    servers, events, adjustments = httpd.create_servers(
        app,
        config.server,
        "127.0.0.1",
        0,
        trusted_proxy="127.0.0.1",
        trusted_proxy_count=1,
        trusted_proxy_headers={"x-forwarded-for", "x-forwarded-proto"},
        clear_untrusted_proxy_headers=True,
    )
    stop = threading.Event()
    loop = threading.Thread(
        target=httpd.run, args=(servers, events, adjustments, stop), daemon=True
    )
    loop.start()
    upstream = f"127.0.0.1:{httpd.bound_addresses(servers)[0][1]}"
    public = _port()
    site = SITE.read_text("utf-8")
    assert site.count("127.0.0.1:8080") == 1 and site.count("listen 80;") == 1
    site = site.replace("127.0.0.1:8080", upstream).replace(
        "listen 80;", f"listen 127.0.0.1:{public};"
    )
    (tmp / "site.conf").write_text(site, "utf-8")
    (tmp / "nginx.conf").write_text(
        f"pid {tmp}/nginx.pid;\nerror_log {tmp}/error.log;\nevents {{}}\n"
        f"http {{\n access_log off;\n client_body_temp_path {tmp}/body;\n"
        f" proxy_temp_path {tmp}/proxy;\n fastcgi_temp_path {tmp}/f;\n uwsgi_temp_path {tmp}/u;\n"
        f" scgi_temp_path {tmp}/s;\n include {tmp}/site.conf;\n}}\n",
        "utf-8",
    )
    nginx = subprocess.Popen(
        [NGINX, "-p", str(tmp), "-c", str(tmp / "nginx.conf"), "-g", "daemon off;"],
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{public}"
    deadline = time.monotonic() + 120  # liveness only
    while True:
        try:
            if httpx.get(url + "/", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert nginx.poll() is None, nginx.stderr.read().decode() if nginx.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.1)
    yield url, app
    nginx.terminate()
    nginx.wait(10)
    if nginx.stderr is not None:
        nginx.stderr.close()
    httpd.stop_soon(servers, stop)  # the loop closes what it polls
    loop.join(30)
    app.extensions["services"].close()


def _client(source: str) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=10)


def test_the_server_limits_each_client_behind_the_proxy_by_its_own_address(
    proxied: tuple[str, Any],
) -> None:
    url, _app = proxied
    query = {"query": "ASK { ?s ?p ?o }"}
    with _client("127.0.0.2") as greedy, _client("127.0.0.3") as other:
        statuses = [greedy.get(url + "/sparql", params=query).status_code for _ in range(4)]
        assert 429 in statuses  # the server's per-client rate (4 a minute, bursts of 1)
        assert other.get(url + "/sparql", params=query).status_code == 200


def test_nginx_refuses_oversized_bodies_and_answers_pages_and_the_dump(
    proxied: tuple[str, Any],
) -> None:
    url, _app = proxied
    with _client("127.0.0.4") as client:
        big = client.post(
            url + "/sparql",
            content=b"x" * 2_000_000,
            headers={"Content-Type": "application/sparql-query"},
        )
        assert big.status_code == 413 and "nginx" in big.text
        assert client.get(url + "/experiments").status_code == 200
        deadline = time.monotonic() + 120  # liveness only
        plain = {"Accept-Encoding": "identity"}
        while "Content-Length" not in (dump := client.get(url + "/dump.nq", headers=plain)).headers:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert dump.status_code == 200 and int(dump.headers["Content-Length"]) == len(dump.content)


def test_nginx_holds_the_extra_connections_of_one_client(proxied: tuple[str, Any]) -> None:
    url, _app = proxied
    host, port = url.removeprefix("http://").split(":")
    held = []
    try:
        for _ in range(60):
            sock = socket.socket()
            sock.bind(("127.0.0.5", 0))
            sock.connect((host, int(port)))
            sock.sendall(b"GET /experiments HTTP/1.1\r\nHost: x\r\n")  # never finished
            held.append(sock)
        with _client("127.0.0.6") as other:
            # answered at all (were the server's slots taken, it would wait until its timeout;
            # how long it takes is not asserted)
            assert other.get(url + "/").status_code == 200
    finally:
        for sock in held:
            sock.close()

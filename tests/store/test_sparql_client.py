"""One SPARQL-over-HTTP client (``store.remote.SparqlClient``) for a remote store, knowledge-base
lookups and system queries: every exchange ends by one deadline and holds a bounded body,
whoever sends it (issue 41). Real loopback servers that answer too much or too slowly."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pyoxigraph import NamedNode

from store.errors import RemoteStoreError
from store.remote import EndpointFailure, RemoteStore, fetch_results

RESULTS = b'{"head": {"vars": ["g"]}, "results": {"bindings": []}}'


class _Server:
    """A loopback SPARQL server: ``flood`` sends a body far over any cap, ``trickle`` sends a
    valid result a byte every 50 ms (each read is quick, the whole answer is not)."""

    def __init__(self, mode: str) -> None:
        self.requests = 0
        # what the client must say of it
        self.expected = "larger than 100000 bytes" if mode == "flood" else "longer than 1 s"
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                outer.requests += 1
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                self.send_response(200)
                self.send_header("Content-Type", "application/sparql-results+json")
                self.end_headers()
                try:
                    if mode == "flood":
                        for _ in range(2_000):
                            self.wfile.write(b" " * 65_536)
                    else:
                        for byte in RESULTS:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(0.05)
                except OSError:
                    pass  # the client hung up, as it should
                self.close_connection = True

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/sparql"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(params=["flood", "trickle"])
def server(request: pytest.FixtureRequest) -> Iterator[_Server]:
    made = _Server(request.param)
    yield made
    made.close()


def test_a_remote_store_is_bounded_like_an_endpoint_query(server: _Server) -> None:
    # The remote store had its own httpx client: it read a reply of any size whole, and a
    # server sending a byte now and then kept it waiting as long as it liked (httpx's timeout
    # bounds each read).
    store = RemoteStore(server.url, server.url, timeout=1, max_bytes=100_000)
    try:
        with pytest.raises(RemoteStoreError, match=server.expected):
            store.has_graph(NamedNode("http://x.test/g"))
    finally:
        store.close()
    assert server.requests == 1
    with pytest.raises(EndpointFailure, match=server.expected) as found:
        fetch_results(server.url, "ASK {}", timeout=1, max_bytes=100_000)
    assert found.value.final
    assert server.requests == 2  # final: not asked again by POST

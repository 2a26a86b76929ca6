"""``qabench serve [--host HOST] [--port PORT]``: run the web server until interrupted.

One process owns the read-write store and serves the app through waitress (``server.httpd``:
bounded connections, request timeouts, body limits per path) with ``server.threads`` threads;
public SPARQL queries run in ``server.query_workers`` separate processes. While it runs,
``<data dir>/server.json`` names its pid and URL so that commands finding the store locked can
say which server holds it.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any
from urllib.parse import urlsplit

from pyoxigraph import NamedNode
from waitress.adjustments import Adjustments

from evaluators.knowledge.bases import kb_graphs, record_triples
from server import httpd
from server.app import create_app
from server.cli.context import Context
from server.cli.store_owner import remove_server_file, write_server_file
from server.config import Config, ServerConfig
from server.front import SparqlFront
from server.linked_data.parts import graph_layout
from server.memory import NotReadyError, settle_heap
from server.services import Services
from server.web.auth import upload_gate
from store.errors import StoreError
from store.layouts import GraphLayout

log = logging.getLogger(__name__)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the serve command."""
    serve = sub.add_parser("serve")
    serve.add_argument("--host", help="address to bind (default: server.host, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to bind (default: server.port)")
    serve.set_defaults(func=run_serve)


_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def _is_local(host: str) -> bool:
    if host.lower() in _LOCAL_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def base_warning(base_iri: str, host: str, port: int) -> str | None:
    """Return a warning when ``server.base_iri`` names another place than ``host:port``.

    A base on a public name is taken to be served by a reverse proxy (no warning); a base on
    this machine (``localhost``, a loopback address or the bound host) must name the port the
    server listens on, and a loopback base cannot be reached by clients of a server bound to
    other interfaces.

    >>> base_warning("http://localhost:8080", "127.0.0.1", 8080) is None
    True
    >>> "9000" in base_warning("http://localhost:8080", "127.0.0.1", 9000)
    True
    >>> base_warning("https://qa.example.org", "127.0.0.1", 9000) is None
    True
    """
    parts = urlsplit(base_iri)
    base_host = parts.hostname or ""
    if not (_is_local(base_host) or base_host == host.lower()):
        return None
    base_port = parts.port or (443 if parts.scheme == "https" else 80)
    here = f"http://{host}:{port}"
    if base_port != port:
        reason = f"the server listens on port {port}"
    elif _is_local(base_host) and not _is_local(host):
        reason = f"the server listens on {host}, where other machines cannot reach {base_host}"
    else:
        return None
    return (
        f"server.base_iri is {base_iri}, but {reason}: the IRIs in the data and the links "
        f"between pages keep naming {base_iri}. VoID, the service description and the "
        f"sitemap answer with the address each request reached; to mint IRIs that resolve "
        f"here, set server.base_iri = {here!r} (before any data is published)."
    )


def serve(config: Config, host: str, port: int) -> int:
    """Serve ``config``'s store on ``host:port`` until interrupted; return the exit status."""
    app = create_app(config)
    services: Services = app.extensions["services"]
    url = f"http://{host}:{port}"
    warning = base_warning(config.base_iri, host, port)
    if warning is not None:
        log.warning("%s", warning)
        print(f"warning: {warning}", file=sys.stderr)
    write_server_file(config.data_dir, url)
    # SIGTERM (service managers, `kill`) shuts down as cleanly as Ctrl+C.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        services.pool.start()
        settle_heap()
        lay_out_knowledge_bases(services)
        servers, events, adjustments = build_servers(app, config.server, host, port)
        print(f"qabench serving {config.base_iri} at {url} (Ctrl+C stops)", file=sys.stderr)
        httpd.run(servers, events, adjustments)
    finally:
        services.close()
        remove_server_file(config.data_dir)
    return 0


def lay_out_knowledge_bases(services: Services) -> None:
    """Start making the page layout of every knowledge base's graph in the background (kept on
    disk: after the first start following a ``kb load`` this only reads the file back). ``kb
    load`` leaves it to the server: at 2.6 M triples it is 6 s of one core. A knowledge base
    whose catalog entry states no number of triples yet (``kb load`` does not count them) gets
    it from its layout, which counts every subject's triples (``bases.record_triples``)."""
    store, base = services.store, services.config.base_iri
    uncounted = set(kb_graphs(store, base, uncounted=True))
    for graph in kb_graphs(store, base):
        made = _count_recorder(services, graph) if graph in uncounted else None
        try:
            layout = graph_layout(services, graph, wait=0, made=made)
        except NotReadyError:
            continue  # being made in the background: ``made`` records the count then
        if made is not None:
            made(layout)  # made before (a reader asked first): recorded now


def _count_recorder(services: Services, graph: NamedNode) -> Callable[[GraphLayout], None]:
    def record(layout: GraphLayout) -> None:
        try:
            if record_triples(services.store, services.config.base_iri, graph, layout.quads):
                services.notify_write()
        except StoreError as exc:  # the layout stands; the next start counts again
            log.warning("could not record the triples of %s: %s", graph.value, exc)

    return record


def build_servers(
    app: Any, settings: ServerConfig, host: str, port: int
) -> tuple[list[httpd.QabenchServer], dict[int, Any], Adjustments]:
    """Bind the HTTP servers of ``app`` on ``host:port``, with the SPARQL front unless
    ``server.sparql_front`` is off (``httpd.run`` serves them)."""
    proxy = settings.trusted_proxy
    servers, events, adjustments = httpd.create_servers(
        app,
        settings,
        host,
        port,
        upload_gate(app),
        clear_untrusted_proxy_headers=True,
        **_proxy_settings(proxy),
    )
    if settings.sparql_front:
        front = SparqlFront(app, events, (proxy, 1, set(PROXY_HEADERS)) if proxy else None)
        for server in servers:
            server.front = front
    return servers, events, adjustments


# The forwarded headers believed from the trusted proxy (one hop).
PROXY_HEADERS = frozenset({"x-forwarded-for", "x-forwarded-proto"})


def _proxy_settings(trusted_proxy: str) -> dict[str, object]:
    # waitress drops X-Forwarded-* from anyone but the trusted proxy; from it, one hop.
    if not trusted_proxy:
        return {}
    return {
        "trusted_proxy": trusted_proxy,
        "trusted_proxy_count": 1,
        "trusted_proxy_headers": set(PROXY_HEADERS),
    }


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def run_serve(ctx: Context, args: argparse.Namespace) -> int:
    """Run ``qabench serve``."""
    config = ctx.config
    host = args.host or config.server.host
    port = args.port if args.port is not None else config.server.port
    # The server opens the store itself; the command context must not hold it too.
    ctx.close()
    return serve(config, host, port)

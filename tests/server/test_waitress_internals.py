"""The parts of waitress that ``server/httpd.py`` and ``server/front.py`` use beyond its public
API, named one by one on a real server, connection, request and task: an upgrade that renames
or drops one fails here, loudly, instead of somewhere under load (issue 41)."""

from __future__ import annotations

import inspect
import socket
from typing import Any

import waitress
from waitress import proxy_headers, wasyncore
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser, ParsingError
from waitress.server import TcpWSGIServer
from waitress.task import Task, ThreadedTaskDispatcher, WSGITask
from waitress.utilities import Error

from server import httpd
from server.config import ServerConfig

# What server/httpd.py and server/front.py read or call (attributes of instances below).
CHANNEL = (
    "_flush_exception", "_flush_some", "addr", "adj", "close_when_flushed", "connected",
    "current_outbuf_count", "last_activity", "outbuf_lock", "outbufs", "request", "requests",
    "requests_lock", "server", "total_outbufs_len", "will_close", "received", "del_channel",
    "task_class", "parser_class",
)  # fmt: skip
PARSER = (
    "parse_header", "headers", "path", "version", "chunked", "content_length", "error",
    "completed", "headers_finished", "command", "query", "get_body_stream", "close",
)  # fmt: skip
SERVER = (
    "accept", "fix_addr", "set_socket_options", "_map", "active_channels", "adj",
    "channel_class", "task_dispatcher", "pull_trigger", "add_task", "maintenance", "socket",
    "handle_accept", "accepting",
)  # fmt: skip
TASK = ("start", "status", "response_headers", "content_length", "build_response_header",
        "close_on_finish")  # fmt: skip
ADJUSTMENTS = (
    "asyncore_loop_timeout", "listen", "threads", "connection_limit", "channel_timeout",
    "cleanup_interval", "asyncore_use_poll", "max_request_body_size", "max_request_header_size",
    "outbuf_high_watermark", "ident",
)  # fmt: skip


def _app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]


def _missing(thing: object, names: tuple[str, ...]) -> list[str]:
    return [name for name in names if not hasattr(thing, name)]


def test_the_waitress_internals_we_use_are_there() -> None:
    assert waitress.__name__ == "waitress"
    servers, events, adjustments = httpd.create_servers(_app, ServerConfig(), "127.0.0.1", 0)
    server = servers[0]
    host, port = httpd.bound_addresses(servers)[0]
    client = socket.create_connection((host, port), timeout=5)
    try:
        client.sendall(b"GET /sparql?query=ASK%7B%7D HTTP/1.1\r\nHost: x\r\n\r\n")
        for _ in range(20):  # accept, then read the request
            wasyncore.poll2(0.05, events)
            channels = [c for c in events.values() if isinstance(c, HTTPChannel)]
            if channels and (channels[0].requests or channels[0].request):
                break
        assert channels, "no connection accepted"
        channel = channels[0]
        assert _missing(channel, CHANNEL) == []
        assert _missing(server, SERVER) == []
        assert _missing(adjustments, ADJUSTMENTS) == []
        request = channel.requests[0] if channel.requests else channel.request
        assert _missing(request, PARSER) == []
        assert isinstance(request, HTTPRequestParser) and request.path == "/sparql"
        task = Task(channel, request)
        assert _missing(task, TASK) == []
        assert hasattr(WSGITask, "get_environment")
        assert _missing(ThreadedTaskDispatcher(), ("set_thread_count", "shutdown")) == []
    finally:
        client.close()
        server.task_dispatcher.shutdown()
        wasyncore.close_all(events)
    # the signatures we call or override
    assert list(inspect.signature(HTTPChannel.__init__).parameters)[:6] == [
        "self", "server", "sock", "addr", "adj", "map",
    ]  # fmt: skip
    assert list(inspect.signature(Task.__init__).parameters) == ["self", "channel", "request"]
    assert "ident" in inspect.signature(Error.to_response).parameters
    assert issubclass(ParsingError, Exception) and issubclass(server.__class__, TcpWSGIServer)
    assert "logger" in inspect.signature(proxy_headers.parse_proxy_headers).parameters
    assert hasattr(proxy_headers, "MalformedProxyHeader")
    assert hasattr(wasyncore, "dispatcher") and hasattr(wasyncore.dispatcher, "add_channel")

"""HTTP as a connection worker reads and writes it: a strict subset, everything else left unread.

``head_of`` reads the first request of the bytes a worker read from a connection: a request
line of ``GET`` or ``POST`` over HTTP/1.1, header fields without repeats, obsolete folding,
``Transfer-Encoding`` or ``Expect``, a ``Content-Length`` of digits only, a head within the
server's limit and a body within its limit. Anything else is *not simple* and goes back to the
serving process with its bytes, where waitress reads it with every rule it has (and answers 400,
413 or 431 where it must). ``answer`` writes a 200 with exactly the headers the SPARQL front sends
(``server.front``), whose fixed part is built once per result form. No Flask, no sockets here.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import NamedTuple

from server.config import ServerConfig
from server.sparql.endpoint import result_headers
from server.sparql.jobs import QueryOutcome
from server.web import caching
from server.web.headers import GRANT, SECURITY_HEADERS, new_request_id

# Request headers a worker never answers: credentials, conditions, ranges, framing it leaves
# to waitress (chunked bodies, 100-continue).
NOT_HERE = frozenset(
    {
        b"authorization",
        b"cookie",
        b"if-none-match",
        b"if-modified-since",
        b"if-match",
        b"if-unmodified-since",
        b"if-range",
        b"range",
        b"transfer-encoding",
        b"expect",
    }
)
INCOMPLETE = "incomplete"
NOT_SIMPLE = "not simple"
_TOKEN_CHARS = frozenset(
    b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)


class Head(NamedTuple):
    """One simple request: its size in bytes (head and body), method, target, fields, body,
    and whether the client asked to close the connection after the answer.

    ``fields`` may be shared with other requests of the same head (``head_of`` reads a head
    once): it is never changed.
    """

    size: int
    method: str
    target: str
    fields: Mapping[bytes, bytes]
    body: bytes
    closes: bool = False


# Heads read, by their bytes: a client sends the same head again and again, but for the
# Content-Length (``head_of``). Heads up to CACHED_HEAD_BYTES long are kept, at most
# CACHED_HEADS of them.
CACHED_HEADS = 256
CACHED_HEAD_BYTES = 2048
_Read = tuple[str, str, Mapping[bytes, bytes], int, bool]
_HEADS: dict[bytes, _Read | None] = {}


def _read_head(head: bytes) -> _Read | None:
    """Return the method, target, fields, Content-Length and wish to close of a head (its
    bytes before the blank line), or None when it is not simple."""
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or parts[2] != b"HTTP/1.1" or parts[0] not in (b"GET", b"POST"):
        return None
    fields: dict[bytes, bytes] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name or not _TOKEN_CHARS.issuperset(name):
            return None
        key = name.lower()
        if key in fields or key in NOT_HERE or b"\r" in value or b"\n" in value:
            return None
        fields[key] = value.strip(b" \t")
    size = 0
    if b"content-length" in fields:
        raw = fields[b"content-length"]
        if not raw.isdigit() or len(raw) > 12:
            return None
        size = int(raw)
    closes = b"close" in fields.get(b"connection", b"").lower()
    return parts[0].decode("ascii"), parts[1].decode("latin-1"), fields, size, closes


def head_of(data: bytes, max_head: int, max_body: int) -> Head | str:
    """Return the first request in ``data``, ``INCOMPLETE`` (wait for more bytes) or
    ``NOT_SIMPLE`` (give it back).

    >>> head_of(b"POST /sparql HTTP/1.1\\r\\nContent-Length: 3\\r\\n\\r\\nASK", 1000, 1000).body
    b'ASK'
    >>> head_of(b"POST /sparql HTTP/1.1\\r\\nContent-Length: 3\\r\\n\\r\\nAS", 1000, 1000)
    'incomplete'
    >>> head_of(b"GET / HTTP/1.0\\r\\n\\r\\n", 1000, 1000)
    'not simple'
    """
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return INCOMPLETE if len(data) < max_head else NOT_SIMPLE
    if end + 4 > max_head:
        return NOT_SIMPLE
    head = data[:end]
    if end > CACHED_HEAD_BYTES:
        read = _read_head(head)
    elif head in _HEADS:
        read = _HEADS[head]
    else:
        read = _HEADS[head] = _read_head(head)
        if len(_HEADS) > CACHED_HEADS:
            del _HEADS[next(iter(_HEADS))]
    if read is None:
        return NOT_SIMPLE
    method, target, fields, size, closes = read
    if size > max_body:
        return NOT_SIMPLE
    if len(data) < end + 4 + size:
        return INCOMPLETE
    return Head(end + 4 + size, method, target, fields, data[end + 4 : end + 4 + size], closes)


_FIXED: dict[tuple[object, ...], bytes] = {}
_DATES: dict[int, str] = {}


def _date(second: int) -> str:
    found = _DATES.get(second)
    if found is None:
        if len(_DATES) > 16:
            _DATES.clear()
        found = _DATES[second] = caching.http_time(second)
    return found


def answer(
    outcome: QueryOutcome,
    etag: str,
    modified: float,
    settings: ServerConfig,
    rate_limited: bool,
    gzip: bool,
) -> bytes:
    """Return the bytes of the 200 answer to ``outcome`` with the SPARQL front's headers
    (``gzip``: the client accepts it; the body is compressed when the front would)."""
    body = outcome.data
    textual = caching.is_textual(outcome.media_type)
    compress = gzip and textual and len(body) >= caching.MIN_GZIP_BYTES
    if compress:
        body = caching.compress(body)
        etag += caching.GZIP_SUFFIX
    key = (
        outcome.media_type,
        outcome.truncated,
        outcome.byte_limited,
        modified,
        rate_limited,
        compress,
        id(settings),
    )
    fixed = _FIXED.get(key)
    if fixed is None:
        headers = [h for h in result_headers(outcome, settings) if h[0] != "X-Result-Rows"]
        if compress:
            headers.append(("Content-Encoding", "gzip"))
        vary = ["Accept", *(["Accept-Encoding"] if textual else [])]
        if rate_limited:
            vary.append("Cookie")
        headers += [
            ("Vary", ", ".join(vary)),
            ("Cache-Control", caching.PUBLIC_CACHE),
            *GRANT,
            *SECURITY_HEADERS.items(),
            ("Server", "qabench"),
        ]
        fixed = "".join(f"{name}: {value}\r\n" for name, value in headers).encode("latin-1")
        if len(_FIXED) > 256:
            _FIXED.clear()
        _FIXED[key] = fixed
    now = time.time()
    # as caching.dated: the change is never later than the answer
    changed = _date(int(modified)) if modified <= now else caching.http_time(now)
    varying = (
        f'HTTP/1.1 200 OK\r\nX-Result-Rows: {outcome.rows}\r\nETag: "{etag}"\r\n'
        f"X-Request-Id: {new_request_id()}\r\nContent-Length: {len(body)}\r\n"
        f"Date: {_date(int(now))}\r\nLast-Modified: {changed}\r\n"
    )
    return varying.encode("latin-1") + fixed + b"\r\n" + body

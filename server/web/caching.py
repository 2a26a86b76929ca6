"""HTTP caching and transfer for every response: validators, conditional requests, gzip.

Views compute an entity tag (strong for bytes that only change with the store, weak for HTML
pages, whose bytes may differ between readers: CSRF fields, session notices) and call
``not_modified`` before building a body, so a revalidation costs no serialisation. ``finish``
attaches the validators and ``Last-Modified`` (the time of the store's last write). The
``install``ed hook then, for every response:

* compresses it with gzip when the client accepts gzip (``Accept-Encoding``, RFC 9110 section
  12.5.3), it is at least ``MIN_GZIP_BYTES`` of a textual type and not streamed; the entity tag
  of the compressed form gets a ``-gzip`` suffix (a different representation needs a different
  strong validator) and ``Vary: Accept-Encoding`` tells caches;
* answers ``304 Not Modified`` when ``If-None-Match`` matches the entity tag (weak comparison,
  RFC 9110 section 13.1.2) or, without ``If-None-Match``, when ``If-Modified-Since`` is not
  older than ``Last-Modified``.

It sets no security headers (those belong elsewhere) and never caches bodies itself.
"""

from __future__ import annotations

import gzip
import time
from datetime import UTC, datetime

from flask import Flask, Response, request
from werkzeug.http import http_date, parse_accept_header, parse_date, quote_etag, unquote_etag

# Smaller bodies gain nothing worth the CPU.
MIN_GZIP_BYTES = 1024
# Bodies above this size are compressed at level 1 (about three times faster than level 6, and
# RDF still shrinks 10-20 times).
FAST_GZIP_BYTES = 1 << 20
GZIP_SUFFIX = "-gzip"
_TEXTUAL = (
    "application/json",
    "application/javascript",
    "application/xml",
    "application/n-triples",
    "application/n-quads",
    "application/trig",
    "application/sparql-results+json",
    "application/sparql-results+xml",
    "application/problem+json",
)


def is_textual(mimetype: str) -> bool:
    """Return whether a media type is text that compresses well.

    >>> is_textual("text/turtle"), is_textual("application/ld+json"), is_textual("image/png")
    (True, True, False)
    """
    return (
        mimetype.startswith("text/") or mimetype in _TEXTUAL or mimetype.endswith(("+json", "+xml"))
    )


def _matches(etag: str) -> bool:
    # Weak comparison: W/"x" and "x" match; the compressed form's tag matches too.
    candidates = {etag, etag + GZIP_SUFFIX}
    if_none_match = request.if_none_match
    if if_none_match.star_tag:
        return True
    return any(if_none_match.contains_weak(tag) for tag in candidates)


def not_modified(etag: str, last_modified: float | None = None) -> bool:
    """Return whether a ``GET``/``HEAD`` may be answered 304 for a body tagged ``etag``.

    Args:
        etag: the (unquoted) entity tag of the uncompressed representation.
        last_modified: when it last changed (seconds since the epoch), if known.
    """
    if request.method not in ("GET", "HEAD"):
        return False
    if request.if_none_match:
        return _matches(etag)
    since = request.if_modified_since
    if since is not None and last_modified is not None:
        return int(last_modified) <= int(since.timestamp())
    return False


# Cache-Control of public content (revalidate) and of content a token opened.
PUBLIC_CACHE = "no-cache"
OPENED_CACHE = "private, no-store"


def dated(last_modified: float, now: float | None = None) -> tuple[str, str]:
    """Return ``Date`` and ``Last-Modified`` for a response made ``now``: the change is never
    later than the answer (a write during the request must not date the body after it).

    >>> dated(100.0, 50.0)
    ('Thu, 01 Jan 1970 00:00:50 GMT', 'Thu, 01 Jan 1970 00:00:50 GMT')
    """
    moment = time.time() if now is None else now
    return http_time(moment), http_time(min(last_modified, moment))


def finish(
    response: Response,
    etag: str,
    *,
    weak: bool = False,
    last_modified: float | None = None,
    not_modified_now: bool = False,
) -> Response:
    """Attach the validators to ``response``; a 304 when ``not_modified_now``.

    Args:
        response: the response (its body is dropped when ``not_modified_now``).
        etag: the unquoted entity tag.
        weak: whether the tag is weak (the bytes may differ while the content is the same).
        last_modified: the time of the last change, for ``Last-Modified``.
        not_modified_now: answer 304 (what ``not_modified`` said before the body was made).
    """
    if not_modified_now:
        response.status_code = 304
        response.set_data(b"")
        response.headers.pop("Content-Length", None)
    response.set_etag(etag, weak=weak)
    if last_modified is not None:
        # Date set here (waitress would date the response from when the request began)
        response.headers["Date"], response.headers["Last-Modified"] = dated(last_modified)
    return response


def http_time(moment: float) -> str:
    """Return ``moment`` (seconds since the epoch) as an HTTP date, to the second.

    >>> http_time(0)
    'Thu, 01 Jan 1970 00:00:00 GMT'
    """
    return http_date(datetime.fromtimestamp(int(moment), UTC))


def accepts_gzip() -> bool:
    """Return whether the request accepts gzip content coding."""
    return gzip_accepted(request.headers.get("Accept-Encoding"))


def gzip_accepted(header: str | None) -> bool:
    """Return whether an ``Accept-Encoding`` header value accepts gzip.

    >>> gzip_accepted("gzip, deflate"), gzip_accepted("gzip;q=0"), gzip_accepted(None)
    (True, False, False)
    """
    return bool(header) and parse_accept_header(header)["gzip"] > 0


def compress(body: bytes) -> bytes:
    """Return ``body`` gzipped (level 1 above ``FAST_GZIP_BYTES``, else 6; no timestamp)."""
    level = 1 if len(body) > FAST_GZIP_BYTES else 6
    return gzip.compress(body, compresslevel=level, mtime=0)


def _compress(response: Response) -> None:
    response.set_data(compress(response.get_data()))
    response.headers["Content-Encoding"] = "gzip"
    tag, weak = response.get_etag()
    if tag:
        response.headers["ETag"] = quote_etag(tag + GZIP_SUFFIX, bool(weak))


def _conditional(response: Response) -> bool:
    header = response.headers.get("ETag")
    if request.if_none_match and header:
        tag, _weak = unquote_etag(header)
        return bool(tag) and (
            request.if_none_match.star_tag or request.if_none_match.contains_weak(tag)
        )
    since = request.if_modified_since
    modified = parse_date(response.headers.get("Last-Modified"))
    return since is not None and modified is not None and modified <= since


def _transfer(response: Response) -> Response:
    if response.status_code != 200 or response.is_streamed or response.direct_passthrough:
        return response
    if "Content-Encoding" not in response.headers and is_textual(response.mimetype or ""):
        response.vary.add("Accept-Encoding")
        if accepts_gzip() and (response.content_length or 0) >= MIN_GZIP_BYTES:
            _compress(response)
    if request.method in ("GET", "HEAD") and _conditional(response):
        response.status_code = 304
        response.set_data(b"")
        response.headers.pop("Content-Length", None)
    return response


def install(app: Flask) -> None:
    """Compress and answer conditional requests for every response of ``app``."""
    app.after_request(_transfer)

"""The public dump: ``/dump.nq`` (every quad the reader may see) and ``/dump.nq.gz``.

The dump's bytes are the N-Quads file of the current public SPARQL view, written in the
background once per checkpoint (``server.replica.dumps``), never on a request thread. A reader
who comes before the file is complete follows it as it grows (no length, first bytes at once);
such readers hold a request thread each, so at most ``MAX_FOLLOWERS`` follow at a time (503
with ``Retry-After`` beyond). A complete file is handed to the HTTP server as a file (no request
thread waits for a slow reader), with a length, an entity tag of its checkpoint (it changes only
when public content does), ``Last-Modified``, single ranges (``Range``/``If-Range``, 206/416)
and conditional requests; a client that accepts gzip and asks for no range gets the compressed
copy once it exists, with ``Content-Encoding: gzip``. ``/dump.nq.gz`` is the same data as a gzip
file to download (it waits briefly for the copy, else 503).

A reader who presents access tokens gets the public dump followed by the quads of the private
experiments the tokens open, streamed and marked private. Every response names the licence
(``Link: rel="license"``) that VoID states for both distributions.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

from flask import Blueprint, Response, request
from pyoxigraph import NamedNode
from werkzeug.wsgi import wrap_file

from server.linked_data.description import DATA_LICENSE
from server.replica.dumps import DumpFile
from server.replica.views import View, ViewNotReadyError
from server.services import Services, services
from server.web import caching
from server.web.auth import request_tokens
from server.web.problems import Problem
from vocab.project import QAB

bp = Blueprint("dump", __name__)

MEDIA_TYPE = "application/n-quads"
_CHUNK = 1 << 16
# Readers following a dump still being written (each holds a request thread).
MAX_FOLLOWERS = 2
_FOLLOWERS = threading.BoundedSemaphore(MAX_FOLLOWERS)
# Seconds /dump.nq.gz waits for the compressed copy of a complete dump.
GZIP_WAIT_SECONDS = 5.0


def _unavailable(detail: str, wait: int = 5) -> Problem:
    return Problem(
        503, detail, QAB.QueryTimeout, "Dump not ready", headers={"Retry-After": str(wait)}
    )


def _current(svc: Services) -> tuple[View, DumpFile]:
    try:
        view = svc.view()
    except ViewNotReadyError as exc:
        raise _unavailable(f"{exc}; try again shortly.") from exc
    found = svc.dumps.request(view)
    if found.complete and not found.path.exists():
        found = svc.dumps.request(view)  # superseded and removed in between: ask again
    return view, found


def _read(path: Path, start: int, length: int) -> Iterator[bytes]:
    # A generator that owns its file: closing it (or collecting it) closes the file.
    with path.open("rb") as fh:
        fh.seek(start)
        while length > 0:
            chunk = fh.read(min(_CHUNK, length))
            if not chunk:
                return
            length -= len(chunk)
            yield chunk


def _file_response(path: Path, mimetype: str, etag: str, modified: float) -> Response:
    """Serve ``path`` with a length, validators, conditional requests and single ranges."""
    size = path.stat().st_size
    if caching.not_modified(etag, modified):
        response = Response(status=304)
        return caching.finish(response, etag, last_modified=modified, not_modified_now=True)
    wanted = request.range
    if_range = request.if_range
    # RFC 9110 section 14.2: a range applies when If-Range (strong comparison) still matches.
    applies = if_range.etag is None or if_range.etag == etag
    if wanted is not None and applies and len(wanted.ranges) == 1:
        bounds = wanted.range_for_length(size)
        if bounds is None:
            response = Response(status=416)
            response.headers["Content-Range"] = f"bytes */{size}"
            return response
        start, end = bounds
        response = Response(_read(path, start, end - start), status=206, mimetype=mimetype)
        response.headers["Content-Length"] = str(end - start)
        response.headers["Content-Range"] = f"bytes {start}-{end - 1}/{size}"
    else:
        # Handed to the HTTP server as a file: it sends it without holding a request thread.
        response = Response(
            wrap_file(request.environ, path.open("rb"), _CHUNK),
            mimetype=mimetype,
            direct_passthrough=True,
        )
        response.headers["Content-Length"] = str(size)
    caching.finish(response, etag, last_modified=modified)
    response.headers["Cache-Control"] = "public, no-cache"
    response.headers["Accept-Ranges"] = "bytes"
    return response


def _following(svc: Services, dump: DumpFile, etag: str, modified: float) -> Response:
    """Stream a dump that is still being written (no length, no ranges)."""
    if caching.not_modified(etag, modified):
        return caching.finish(
            Response(status=304), etag, last_modified=modified, not_modified_now=True
        )
    if not _FOLLOWERS.acquire(blocking=False):
        raise _unavailable("The dump is being written and enough readers follow it.", 2)

    def _stream() -> Iterator[bytes]:
        try:
            yield from svc.dumps.follow(dump)
        finally:
            _FOLLOWERS.release()

    response = Response(_stream(), mimetype=MEDIA_TYPE)
    caching.finish(response, etag, last_modified=modified)
    response.headers["Cache-Control"] = "public, no-cache"
    return response


def _licensed(response: Response, filename: str) -> Response:
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    response.headers.add("Link", f'<{DATA_LICENSE}>; rel="license"')
    return response


def _tag(svc: Services, dump: DumpFile, form: str) -> str:
    # Named by the checkpoint: it changes when public content does, not with private writes.
    return f"{svc.instance}-{form}-{dump.key}"


@bp.route("/dump.nq")
def dump() -> Response:
    """Every quad the reader may see, as N-Quads (public graphs plus opened private ones)."""
    svc = services()
    vis = svc.visibility(request_tokens())
    view, found = _current(svc)
    if vis.unlocked:
        return _licensed(_with_private(svc, found, vis.unlocked), "qabench.nq")
    etag, modified = _tag(svc, found, "dump"), view.modified
    if not found.complete:
        response = _following(svc, found, etag, modified)
    elif "Range" not in request.headers and caching.accepts_gzip() and found.compressed:
        response = _file_response(
            found.compressed, MEDIA_TYPE, etag + caching.GZIP_SUFFIX, modified
        )
        response.headers["Content-Encoding"] = "gzip"
    else:
        response = _file_response(found.path, MEDIA_TYPE, etag, modified)
    response.vary.add("Accept-Encoding")
    return _licensed(response, "qabench.nq")


@bp.route("/dump.nq.gz")
def dump_compressed() -> Response:
    """The public dump as a gzip file."""
    svc = services()
    view, found = _current(svc)
    packed = found.compressed
    if packed is None:
        packed = svc.dumps.wait_compressed(found, GZIP_WAIT_SECONDS)
    if packed is None:
        raise _unavailable("The compressed dump is being written; try again shortly.")
    etag = _tag(svc, found, "dump.gz")
    return _licensed(
        _file_response(packed, "application/gzip", etag, view.modified), "qabench.nq.gz"
    )


def _with_private(svc: Services, public: DumpFile, unlocked: tuple[NamedNode, ...]) -> Response:
    if not _FOLLOWERS.acquire(blocking=False):
        raise _unavailable("Enough readers follow a dump now.", 2)

    def _stream() -> Iterator[bytes]:
        try:
            yield from svc.dumps.follow(public)
            for graph in unlocked:
                yield from (str(q).encode("utf-8") + b" .\n" for q in svc.store.quads(graph=graph))
        finally:
            _FOLLOWERS.release()

    response = Response(_stream(), mimetype=MEDIA_TYPE)
    response.headers["Cache-Control"] = "private, no-store"
    response.vary.add("Cookie")
    response.vary.add("Authorization")
    return response

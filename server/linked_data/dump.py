"""The public dump: ``/dump.nq`` (every quad the reader may see) and ``/dump.nq.gz``.

The dump's bytes come from one place, ``public_dump``: the N-Quads file of the public graphs of
the current public SPARQL view (``server.sparql.views``, written once per view). Served from a
file, the dump has a length, an entity tag of its generation, ``Last-Modified``, and answers
range requests (``Range``/``If-Range``, 206/416) and conditional ones; a client that accepts
gzip and asks for no range gets the compressed file with ``Content-Encoding: gzip``.
``/dump.nq.gz`` is the same data as a gzip file to download. The compressed file is made once
per generation (``compressed_dump``) and older ones are removed.

A reader who presents access tokens gets the public file followed by the quads of the private
experiments the tokens open, streamed: that dump has no length and no ranges. Every response
names the licence (``Link: rel="license"``) that VoID states for both distributions.
"""

from __future__ import annotations

import gzip
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

from flask import Blueprint, Response, request
from pyoxigraph import NamedNode

from server.linked_data.description import DATA_LICENSE
from server.services import Services, services
from server.web import caching
from server.web.auth import request_tokens

bp = Blueprint("dump", __name__)

MEDIA_TYPE = "application/n-quads"
_CHUNK = 1 << 16
# One compression at a time (a second request for the same generation waits for the file).
_COMPRESSING = threading.Lock()


def public_dump(svc: Services) -> tuple[int, Path]:
    """Return the generation and the N-Quads file of the public graphs of the current SPARQL
    view (``server.sparql.views`` writes it once per view)."""
    view = svc.view()
    return view.generation, svc.views.dump(view)


def compressed_dump(svc: Services, generation: int, plain: Path) -> Path:
    """Return the gzip file of the public dump ``plain`` of ``generation`` (made if missing)."""
    directory = svc.config.data_dir / "dump"
    target = directory / f"public-{generation}-{svc.instance}.nq.gz"
    with _COMPRESSING:
        if target.exists():
            return target
        directory.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".part")
        with plain.open("rb") as source, gzip.open(partial, "wb", compresslevel=6) as out:
            shutil.copyfileobj(source, out, _CHUNK)
        os.replace(partial, target)
        for stale in directory.glob("public-*.nq.gz"):
            if stale != target:
                stale.unlink(missing_ok=True)
    return target


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


def _file_response(path: Path, mimetype: str, etag: str, svc: Services) -> Response:
    """Serve ``path`` with a length, validators, conditional requests and single ranges."""
    size = path.stat().st_size
    start, length, status = 0, size, 200
    if caching.not_modified(etag, svc.modified):
        response = Response(status=304)
        return caching.finish(response, etag, last_modified=svc.modified, not_modified_now=True)
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
        length, status = end - start, 206
    response = Response(_read(path, start, length), status=status, mimetype=mimetype)
    response.headers["Content-Length"] = str(length)
    if status == 206:
        response.headers["Content-Range"] = f"bytes {start}-{start + length - 1}/{size}"
    caching.finish(response, etag, last_modified=svc.modified)
    response.headers["Cache-Control"] = "public, no-cache"
    response.headers["Accept-Ranges"] = "bytes"
    return response


def _licensed(response: Response, filename: str) -> Response:
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    response.headers.add("Link", f'<{DATA_LICENSE}>; rel="license"')
    return response


@bp.route("/dump.nq")
def dump() -> Response:
    """Every quad the reader may see, as N-Quads (public graphs plus opened private ones)."""
    svc = services()
    vis = svc.visibility(request_tokens())
    generation, plain = public_dump(svc)
    if vis.unlocked:
        return _licensed(_with_private(svc, plain, vis.unlocked), "qabench.nq")
    etag = svc.etag("dump", str(generation))
    if "Range" not in request.headers and caching.accepts_gzip():
        packed = compressed_dump(svc, generation, plain)
        response = _file_response(packed, MEDIA_TYPE, etag + caching.GZIP_SUFFIX, svc)
        response.headers["Content-Encoding"] = "gzip"
    else:
        response = _file_response(plain, MEDIA_TYPE, etag, svc)
    response.vary.add("Accept-Encoding")
    return _licensed(response, "qabench.nq")


@bp.route("/dump.nq.gz")
def dump_compressed() -> Response:
    """The public dump as a gzip file."""
    svc = services()
    generation, plain = public_dump(svc)
    packed = compressed_dump(svc, generation, plain)
    etag = svc.etag("dump.gz", str(generation))
    return _licensed(_file_response(packed, "application/gzip", etag, svc), "qabench.nq.gz")


def _with_private(svc: Services, plain: Path, unlocked: tuple[NamedNode, ...]) -> Response:
    def _stream() -> Iterator[bytes]:
        with plain.open("rb") as fh:
            yield from iter(lambda: fh.read(_CHUNK), b"")
        for graph in unlocked:
            yield from (str(q).encode("utf-8") + b" .\n" for q in svc.store.quads(graph=graph))

    response = Response(_stream(), mimetype=MEDIA_TYPE)
    response.headers["Cache-Control"] = "private, no-store"
    return response


def _file(path: Path) -> Iterator[bytes]:
    # Opened inside the generator, so the file is closed however the download ends.
    with path.open("rb") as fh:
        yield from iter(lambda: fh.read(1 << 16), b"")

"""The public dump at ``/dump.nq``: every quad the reader may see, as N-Quads.

Anonymous readers get the N-Quads file of the current public SPARQL view
(``server.sparql.views``), written once per view, streamed with its length and an ETag. A reader
whose tokens open private experiments gets that file followed by the opened experiments'
graphs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from flask import Blueprint, Response

from server.services import services
from server.web.auth import request_tokens

bp = Blueprint("dump", __name__)

_MEDIA = "application/n-quads"
_DISPOSITION = 'attachment; filename="qabench.nq"'


@bp.route("/dump.nq")
def dump() -> Response:
    """Every quad the reader may see, as N-Quads (public graphs plus opened private ones)."""
    svc = services()
    vis = svc.visibility(request_tokens())
    view = svc.view()
    path = svc.views.dump(view)

    def _stream() -> Iterator[bytes]:
        yield from _file(path)
        for graph in vis.unlocked:
            yield from (str(q).encode("utf-8") + b" .\n" for q in svc.store.quads(graph=graph))

    response = Response(_stream(), mimetype=_MEDIA)
    response.headers["Content-Disposition"] = _DISPOSITION
    if vis.unlocked:
        response.headers["Cache-Control"] = "private, no-cache"
    else:
        response.headers["Content-Length"] = str(path.stat().st_size)
        response.set_etag(svc.etag("dump", str(view.generation)))
    return response


def _file(path: Path) -> Iterator[bytes]:
    # Opened inside the generator, so the file is closed however the download ends.
    with path.open("rb") as fh:
        yield from iter(lambda: fh.read(1 << 16), b"")

"""The public dump at ``/dump.nq``: every quad the reader may see, as N-Quads."""

from __future__ import annotations

from collections.abc import Iterator

from flask import Blueprint, Response

from server.services import services
from server.web.auth import request_tokens

bp = Blueprint("dump", __name__)


@bp.route("/dump.nq")
def dump() -> Response:
    """Every quad the reader may see, as N-Quads (public graphs plus opened private ones)."""
    svc = services()
    vis = svc.visibility(request_tokens())
    snapshot = svc.snapshot()

    def _stream() -> Iterator[bytes]:
        with snapshot.public.open("rb") as fh:
            yield from iter(lambda: fh.read(1 << 16), b"")
        for graph in vis.unlocked:
            yield from (str(q).encode("utf-8") + b" .\n" for q in svc.store.quads(graph=graph))

    response = Response(_stream(), mimetype="application/n-quads")
    response.headers["Content-Disposition"] = 'attachment; filename="qabench.nq"'
    return response

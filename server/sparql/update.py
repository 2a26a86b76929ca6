"""SPARQL 1.1 Update at ``/update``, for holders of the admin token only.

The public endpoint is read-only; this path accepts POST ``application/sparql-update`` or a form
field ``update`` with ``Authorization: Bearer <admin token>`` (the token comes from the
environment variable ``QABENCH_ADMIN_TOKEN`` at start-up; without it every request is refused).
``using-graph-uri``/``using-named-graph-uri`` become ``USING`` clauses; combining them with
``USING``/``WITH`` in the update is a 400 (SPARQL 1.1 Protocol, section 2.2.3). ``SERVICE`` and
``LOAD`` (the server would fetch a URL) are refused, decided on the update's tokens. Each update
is one transaction on the main store, then ``notify_write``.
"""

from __future__ import annotations

import re

from flask import Blueprint, Response, request
from pyoxigraph import NamedNode

from server.services import services
from server.sparql import analysis
from server.web.auth import admin_enabled, is_admin
from server.web.problems import Problem
from store.errors import QuerySyntaxError, StoreError, StoreFullError

bp = Blueprint("update", __name__)

_FORM = "application/x-www-form-urlencoded"


def _graphs(name: str) -> list[NamedNode]:
    values = request.args.getlist(name)
    if request.mimetype == _FORM:
        values += request.form.getlist(name)
    try:
        return [NamedNode(v) for v in values]
    except ValueError as exc:
        raise Problem(400, f"{name}: not an absolute IRI: {exc}") from exc


def _read_update() -> str:
    if request.mimetype == _FORM:
        found = request.form.getlist("update")
        if len(found) != 1:
            raise Problem(400, f"Send exactly one 'update' field; this request has {len(found)}.")
        return found[0]
    if request.mimetype != "application/sparql-update":
        raise Problem(
            415,
            f"POST an update as application/sparql-update or as {_FORM} (field "
            f"'update'); got {request.mimetype or 'no Content-Type'!r}.",
            extensions={"accepted": ["application/sparql-update", _FORM]},
        )
    charset = request.mimetype_params.get("charset", "utf-8").lower()
    if charset not in ("utf-8", "utf8"):
        raise Problem(415, f"Updates must be UTF-8 (SPARQL 1.1 Protocol); got charset={charset}.")
    try:
        return request.get_data().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Problem(400, f"The update is not valid UTF-8 at byte {exc.start}.") from exc


@bp.route("/update", methods=["POST"])
def update() -> Response:
    """Run one SPARQL update on the main store."""
    svc = services()
    if not admin_enabled():
        raise Problem(
            403,
            "SPARQL Update is switched off on this server: set the environment "
            "variable QABENCH_ADMIN_TOKEN before starting it.",
        )
    if not is_admin():
        raise Problem(
            401,
            "Send the admin token as 'Authorization: Bearer <token>'.",
            headers={"WWW-Authenticate": 'Bearer realm="qabench"'},
        )
    text = _read_update()
    if len(text) > svc.config.server.max_upload_bytes:
        raise Problem(413, "The update is larger than server.max_upload_bytes.")
    if analysis.uses_service(text):
        raise Problem(400, "SERVICE is disabled on this server.")
    if analysis.uses_load(text):
        # LOAD would make the server fetch any URL it is given, like SERVICE.
        raise Problem(
            400,
            "LOAD is disabled on this server: it would fetch other sites. Load a file with "
            "`qabench kb load FILE` or send its triples in INSERT DATA.",
        )
    default, named = _graphs("using-graph-uri"), _graphs("using-named-graph-uri")
    if (default or named) and analysis.has_dataset_keywords(text):
        raise Problem(
            400,
            "using-graph-uri/using-named-graph-uri cannot be combined with "
            "USING or WITH in the update (SPARQL 1.1 Protocol, section 2.2.3).",
        )
    text = analysis.add_using(text, default, named)
    try:
        svc.store.update(_with_base(text, f"{svc.base}/update"))
    except QuerySyntaxError as exc:
        raise _shifted(exc) from exc
    except StoreFullError:
        raise  # 507 with Retry-After (server.web.problems): the server's state, not the update's
    except StoreError as exc:
        raise Problem(400, f"The update failed and changed nothing: {exc}") from exc
    finally:
        svc.notify_write()
    return Response(status=204)


def _shifted(exc: QuerySyntaxError) -> QuerySyntaxError:
    # Positions refer to the text with the BASE line added; report them for the client's text.
    line = exc.line - 1 if exc.line else exc.line
    message = re.sub(r"error at (\d+):", lambda m: f"error at {int(m.group(1)) - 1}:", str(exc))
    return QuerySyntaxError(message, line, exc.column)


def _with_base(text: str, base: str) -> str:
    # SPARQL 1.1 Protocol: the service defines the base IRI; it "MAY be the service endpoint".
    return f"BASE {NamedNode(base)}\n{text}"

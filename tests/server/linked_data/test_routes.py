"""The extension point of resource pages (Flask client): a kind of resource offers a further
form (here CSV, on tasks, which offer none of their own) next to HTML and RDF, and negotiation, extensions and links follow."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response
from pyoxigraph import NamedNode

from server.linked_data.routes import serve_resource
from server.services import Services, Visibility
from server.web.representations import CSV

TASK = "202401010001/1"


def _table(svc: Services, iri: NamedNode, vis: Visibility) -> bytes:
    return f"resource\r\n{iri.value}\r\n".encode()


def test_a_kind_of_resource_can_offer_another_form(app: Any) -> None:
    extra = Blueprint("tabled", __name__)

    @extra.route("/tabled/<path:rest>")
    def tabled(rest: str) -> Response:
        return serve_resource("task", rest, extra=[(CSV, _table)])

    app.register_blueprint(extra)
    client = app.test_client()
    by_accept = client.get(f"/tabled/{TASK}", headers={"Accept": "text/csv"})
    assert by_accept.mimetype == "text/csv" and TASK in by_accept.get_data(as_text=True)
    assert by_accept.headers["Content-Location"] == f"/task/{TASK}.csv"
    assert client.get(f"/tabled/{TASK}.csv").mimetype == "text/csv"
    assert client.get(f"/tabled/{TASK}", query_string={"format": "csv"}).mimetype == ("text/csv")
    default = client.get(f"/tabled/{TASK}")
    assert default.mimetype == "text/turtle"
    assert f'</task/{TASK}.csv>; rel="alternate"; type="text/csv"' in default.headers["Link"]
    # Kinds that offer no CSV (systems; tasks offer their per-question table since issue 37):
    # the extension names nothing, Accept falls back to what they have.
    assert client.get("/system/demo-system.csv").status_code == 404
    plain = client.get("/system/demo-system", headers={"Accept": "text/csv"})
    assert plain.status_code == 406

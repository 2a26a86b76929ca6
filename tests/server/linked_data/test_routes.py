"""The extension point of resource pages (Flask client): a kind of resource offers a further
form (here CSV) next to HTML and RDF, and negotiation, extensions and links follow."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response
from pyoxigraph import NamedNode

from server.linked_data.routes import serve_resource
from server.services import Services, Visibility
from server.web.negotiation import CSV

EXPERIMENT = "202401010001"


def _table(svc: Services, iri: NamedNode, vis: Visibility) -> bytes:
    return f"resource\r\n{iri.value}\r\n".encode()


def test_a_kind_of_resource_can_offer_another_form(app: Any) -> None:
    extra = Blueprint("tabled", __name__)

    @extra.route("/tabled/<path:rest>")
    def tabled(rest: str) -> Response:
        return serve_resource("experiment", rest, extra={CSV: _table})

    app.register_blueprint(extra)
    client = app.test_client()
    by_accept = client.get(f"/tabled/{EXPERIMENT}", headers={"Accept": "text/csv"})
    assert by_accept.mimetype == "text/csv" and EXPERIMENT in by_accept.get_data(as_text=True)
    assert by_accept.headers["Content-Location"] == f"/experiment/{EXPERIMENT}.csv"
    assert client.get(f"/tabled/{EXPERIMENT}.csv").mimetype == "text/csv"
    assert client.get(f"/tabled/{EXPERIMENT}", query_string={"format": "csv"}).mimetype == (
        "text/csv"
    )
    default = client.get(f"/tabled/{EXPERIMENT}")
    assert default.mimetype == "text/turtle"
    assert (
        f'</experiment/{EXPERIMENT}.csv>; rel="alternate"; type="text/csv"'
        in default.headers["Link"]
    )
    # Kinds that offer no CSV: the extension names nothing, Accept falls back to what they have.
    assert client.get(f"/experiment/{EXPERIMENT}.csv").status_code == 404
    plain = client.get(f"/experiment/{EXPERIMENT}", headers={"Accept": "text/csv"})
    assert plain.status_code == 406

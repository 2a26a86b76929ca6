"""What ``/sparql`` shows besides raw results: the service description and the HTML query page.

A bare GET negotiates between the service description (Turtle by default, every RDF form on
request) and the query page for browsers. Browsers that submit the page's form get the results
as an HTML table, with links to the same query in every machine-readable format.
"""

from __future__ import annotations

import json

from flask import Response, render_template, request
from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, parse

from server.linked_data.description import service_description
from server.linked_data.pipeline import Reader, Resource, serve
from server.linked_data.terms import query_link
from server.services import services
from server.sparql.jobs import QueryOutcome
from server.web.representations import HTML, RDF_FORMATS

EXAMPLES: tuple[tuple[str, str], ...] = (
    (
        "Experiments and their tasks",
        """PREFIX qab: <https://w3id.org/qabench/vocab#>
SELECT ?experiment ?task ?system ?state WHERE {
  ?experiment a qab:Experiment ; qab:task ?task .
  OPTIONAL { ?task qab:system ?system }
  OPTIONAL { ?task qab:state ?state }
} LIMIT 100""",
    ),
    (
        "Datasets and their versions",
        """PREFIX qab: <https://w3id.org/qabench/vocab#>
PREFIX dct: <http://purl.org/dc/terms/>
SELECT ?dataset ?title ?version ?questions WHERE {
  ?dataset a qab:Dataset ; dct:title ?title ; qab:version ?version .
  OPTIONAL { ?version qab:questionCount ?questions }
} ORDER BY ?title""",
    ),
    (
        "Observations of one measure",
        """PREFIX qb: <http://purl.org/linked-data/cube#>
PREFIX qab: <https://w3id.org/qabench/vocab#>
PREFIX gerbil: <http://w3id.org/gerbil/vocab#>
SELECT ?observation ?task ?value WHERE {
  ?observation a qb:Observation ; qab:ofTask ?task ; gerbil:macroF1 ?value .
} ORDER BY DESC(?value) LIMIT 50""",
    ),
)
_DOWNLOADS = (("JSON", "json"), ("XML", "xml"), ("CSV", "csv"), ("TSV", "tsv"))
_GRAPH_DOWNLOADS = (
    ("Turtle", "ttl"),
    ("N-Triples", "nt"),
    ("RDF/XML", "rdf"),
    ("JSON-LD", "jsonld"),
)


def _query_page(reader: Reader, _data: None) -> str:
    return render_template(
        "sparql.html",
        query=request.args.get("example", ""),
        examples=EXAMPLES,
        result=None,
        svc=reader.svc,
    )


# A GET without a query: the query page for browsers, else the service description (whose
# sd:endpoint is the URL the request reached).
ENDPOINT: Resource[None] = Resource(
    formats=(*RDF_FORMATS[:1], HTML, *RDF_FORMATS[1:]),
    load=lambda _reader: None,
    html=_query_page,
    quads=lambda reader, _data: service_description(reader.svc, request.base_url),
    documents=False,
    variant=lambda _reader: request.base_url,
    public=True,
)


def service_description_or_page() -> Response:
    """Answer a GET without a query: the query page for browsers, else the description."""
    return serve(ENDPOINT, "/sparql")


def _table(outcome: QueryOutcome) -> tuple[list[str], list[list[dict[str, str]]]]:
    if outcome.form == "graph":
        rows = [
            [_cell(t.subject), _cell(t.predicate), _cell(t.object)]
            for t in parse(outcome.data, RdfFormat.N_TRIPLES)
        ]
        return ["subject", "predicate", "object"], rows
    document = json.loads(outcome.data)
    if outcome.form == "boolean":
        return ["answer"], [[{"kind": "literal", "value": str(document["boolean"]).lower()}]]
    names: list[str] = document["head"]["vars"]
    table = []
    for binding in document["results"]["bindings"]:
        table.append([_json_cell(binding.get(name)) for name in names])
    return names, table


def _cell(term: object) -> dict[str, str]:
    if isinstance(term, NamedNode):
        return {"kind": "uri", "value": term.value}
    if isinstance(term, BlankNode):
        return {"kind": "bnode", "value": "_:" + term.value}
    if isinstance(term, Literal):
        return {
            "kind": "literal",
            "value": term.value,
            "lang": term.language or "",
            "datatype": term.datatype.value if not term.language else "",
        }
    return {"kind": "literal", "value": str(term)}


def _json_cell(value: dict[str, str] | None) -> dict[str, str]:
    if value is None:
        return {"kind": "none", "value": ""}
    kind = {"uri": "uri", "bnode": "bnode"}.get(value["type"], "literal")
    return {
        "kind": kind,
        "value": value["value"],
        "lang": value.get("xml:lang", ""),
        "datatype": value.get("datatype", ""),
    }


def results_page(query: str, outcome: QueryOutcome) -> Response:
    """Render query results as the HTML query page with a results table."""
    svc = services()
    names, rows = _table(outcome)
    downloads = _GRAPH_DOWNLOADS if outcome.form == "graph" else _DOWNLOADS
    result = {
        "names": names,
        "rows": rows,
        "truncated": outcome.truncated,
        "byte_limited": outcome.byte_limited,
        "limit": svc.config.server.max_result_rows,
        "byte_limit": svc.config.server.max_result_bytes,
        "downloads": [(label, query_link(query, fmt)) for label, fmt in downloads],
    }
    body = render_template("sparql.html", query=query, examples=EXAMPLES, result=result, svc=svc)
    response = Response(body, mimetype="text/html")
    if outcome.truncated:
        response.headers["X-Result-Truncated"] = "true"
    response.vary.add("Accept")
    return response

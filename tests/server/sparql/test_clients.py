"""Real SPARQL clients read an experiment's observations over HTTP: SPARQLWrapper and rdflib's
SPARQLStore, each with its own defaults (result formats, GET/POST), against a live server."""

from __future__ import annotations

from rdflib import Graph, Literal, URIRef
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import JSON, POST, XML, SPARQLWrapper

from tests.plugins.server import BASE, PUBLIC_EXPERIMENT, LiveServer

OBSERVATIONS = f"""
PREFIX qb: <http://purl.org/linked-data/cube#>
PREFIX qab: <https://w3id.org/qabench/vocab#>
PREFIX gerbil: <http://w3id.org/gerbil/vocab#>
SELECT ?measure ?value WHERE {{
  <{BASE}/experiment/{PUBLIC_EXPERIMENT}> qab:task ?task .
  ?obs a qb:Observation ; qab:ofTask ?task ; qb:measureType ?measure ; ?measure ?value .
  FILTER NOT EXISTS {{ ?obs gerbil:datasetElement ?q }}
}} ORDER BY ?measure
"""
EXPECTED = {
    "http://w3id.org/gerbil/vocab#Macro_F1_QALD": 0.5,
    "http://w3id.org/gerbil/vocab#macroF1": 0.5,
    "http://w3id.org/gerbil/vocab#microF1": 0.6,
}


def test_sparqlwrapper_reads_observations_as_json_and_xml(shared_live_server: LiveServer) -> None:
    client = SPARQLWrapper(f"{shared_live_server.url}/sparql")
    client.setQuery(OBSERVATIONS)
    client.setReturnFormat(JSON)
    document = client.query().convert()
    found = {
        b["measure"]["value"]: float(b["value"]["value"]) for b in document["results"]["bindings"]
    }  # type: ignore[index]
    assert found == EXPECTED
    client.setReturnFormat(XML)
    client.setMethod(POST)
    xml = client.query().convert()
    values = sorted(float(n.firstChild.data) for n in xml.getElementsByTagName("literal"))  # type: ignore[union-attr]
    assert values == sorted(EXPECTED.values())


def test_rdflib_sparqlstore_reads_observations(shared_live_server: LiveServer) -> None:
    store = SPARQLStore(f"{shared_live_server.url}/sparql")
    graph = Graph(store=store)
    rows = list(graph.query(OBSERVATIONS))
    assert {str(m): float(v) for m, v in rows} == EXPECTED
    experiment = URIRef(f"{BASE}/experiment/{PUBLIC_EXPERIMENT}")
    tasks = list(graph.objects(experiment, URIRef("https://w3id.org/qabench/vocab#task")))
    assert tasks == [URIRef(f"{BASE}/task/{PUBLIC_EXPERIMENT}/1")]
    assert (experiment, None, Literal("PRIVATE")) not in graph
    store.close()

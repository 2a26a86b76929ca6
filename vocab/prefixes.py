"""The prefix tables: one for the data we publish, one for the knowledge bases benchmarks query.

``PUBLISHED`` names the vocabularies of our own documents: the JSON-LD context, Turtle and
SPARQL results written by the server use it. ``KNOWLEDGE_BASES`` holds the prefixes the public
endpoints of DBpedia (Virtuoso) and Wikidata (Blazegraph) predeclare, which QALD queries use
without PREFIX lines; answer values in those namespaces are shown as prefixed names. Pure data.
"""

from __future__ import annotations

from vocab.project import QAB
from vocab.qb import QB
from vocab.standard import (
    DATAID,
    DCAT,
    DCTERMS,
    FOAF,
    GERBIL,
    HYDRA,
    OWL,
    PROV,
    RDF,
    RDFS,
    SD,
    VOID,
    XSD,
)

PUBLISHED: dict[str, str] = {
    "qab": QAB.iri,
    "gerbil": GERBIL.iri,
    "qb": QB.iri,
    "dct": DCTERMS.iri,
    "dcat": DCAT.iri,
    "prov": PROV.iri,
    "rdf": RDF.iri,
    "rdfs": RDFS.iri,
    "xsd": XSD.iri,
    "owl": OWL.iri,
    "void": VOID.iri,
    "sd": SD.iri,
    "foaf": FOAF.iri,
    "dataid": DATAID.iri,
    "hydra": HYDRA.iri,
}

KNOWLEDGE_BASES: dict[str, str] = {
    "rdf": RDF.iri,
    "rdfs": RDFS.iri,
    "owl": OWL.iri,
    "xsd": XSD.iri,
    "foaf": FOAF.iri,
    "dc": "http://purl.org/dc/elements/1.1/",
    "dct": DCTERMS.iri,
    "dcterms": DCTERMS.iri,
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "geo": "http://www.w3.org/2003/01/geo/wgs84_pos#",
    "dbo": "http://dbpedia.org/ontology/",
    "dbp": "http://dbpedia.org/property/",
    "dbr": "http://dbpedia.org/resource/",
    "res": "http://dbpedia.org/resource/",
    "dbc": "http://dbpedia.org/resource/Category:",
    "yago": "http://dbpedia.org/class/yago/",
    "wd": "http://www.wikidata.org/entity/",
    "wdt": "http://www.wikidata.org/prop/direct/",
    "p": "http://www.wikidata.org/prop/",
    "ps": "http://www.wikidata.org/prop/statement/",
    "pq": "http://www.wikidata.org/prop/qualifier/",
    "wikibase": "http://wikiba.se/ontology#",
    "schema": "http://schema.org/",
}

# The knowledge-base prefixes answer values are abbreviated with on pages (the full IRI stays
# the link and the tooltip).
ANSWER_ABBREVIATIONS = ("dbr", "dbo", "dbp", "wd", "wdt")

"""Terms of the standard vocabularies qabench uses (closed lists: add a term here before using it)."""

from __future__ import annotations

from vocab.namespaces import Namespace

RDF = Namespace(
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    ["type", "Property", "langString", "first", "rest", "nil", "value"],
)
RDFS = Namespace(
    "http://www.w3.org/2000/01/rdf-schema#",
    ["label", "comment", "Class", "subClassOf", "subPropertyOf", "domain", "range",
     "seeAlso", "isDefinedBy", "Literal", "Resource", "Datatype"],
)
XSD = Namespace(
    "http://www.w3.org/2001/XMLSchema#",
    ["string", "boolean", "integer", "int", "long", "decimal", "double", "float", "date",
     "dateTime", "time", "gYear", "gYearMonth", "anyURI", "nonNegativeInteger", "duration"],
)
OWL = Namespace(
    "http://www.w3.org/2002/07/owl#",
    ["sameAs", "Ontology", "Class", "ObjectProperty", "DatatypeProperty", "AnnotationProperty",
     "NamedIndividual", "equivalentClass", "equivalentProperty", "versionInfo", "Thing",
     "imports"],
)
DCTERMS = Namespace(
    "http://purl.org/dc/terms/",
    ["title", "description", "identifier", "source", "created", "issued", "modified", "license",
     "creator", "publisher", "format", "language", "hasVersion", "isVersionOf", "conformsTo",
     "subject", "type", "extent", "bibliographicCitation", "references", "isPartOf", "hasPart",
     "rights", "accessRights", "date"],
)
PROV = Namespace(
    "http://www.w3.org/ns/prov#",
    ["Activity", "Entity", "Agent", "SoftwareAgent", "Plan", "used", "wasGeneratedBy",
     "wasAssociatedWith", "wasAttributedTo", "wasDerivedFrom", "wasRevisionOf",
     "startedAtTime", "endedAtTime", "generatedAtTime", "hadPlan", "value", "atTime",
     "qualifiedAssociation", "agent", "invalidatedAtTime", "wasInformedBy"],
)
DCAT = Namespace(
    "http://www.w3.org/ns/dcat#",
    ["Catalog", "Dataset", "Distribution", "DataService", "dataset", "distribution",
     "downloadURL", "accessURL", "mediaType", "byteSize", "endpointURL", "endpointDescription",
     "servesDataset", "service", "keyword", "theme", "version", "hasVersion", "isVersionOf",
     "previousVersion", "hasCurrentVersion", "landingPage", "checksum"],
)
SPDX = Namespace(
    "http://spdx.org/rdf/terms#",
    ["Checksum", "checksum", "algorithm", "checksumValue", "checksumAlgorithm_sha256"],
)
VOID = Namespace(
    "http://rdfs.org/ns/void#",
    ["Dataset", "sparqlEndpoint", "uriSpace", "exampleResource", "triples", "entities",
     "classes", "properties", "vocabulary", "dataDump", "classPartition", "propertyPartition",
     "class", "property", "subset", "rootResource"],
)
DATAID = Namespace(
    "http://dataid.dbpedia.org/ns/core#",
    ["Dataset", "DataId", "SingleFile", "sha256sum", "associatedAgent", "group", "artifact"],
)
SD = Namespace(
    "http://www.w3.org/ns/sparql-service-description#",
    ["Service", "endpoint", "supportedLanguage", "SPARQL10Query", "SPARQL11Query",
     "resultFormat", "feature", "EmptyGraphs", "defaultDataset", "defaultGraph", "namedGraph",
     "NamedGraph", "Dataset", "Graph", "name", "graph", "defaultEntailmentRegime",
     "UnionDefaultGraph"],
)
FORMATS = Namespace(
    "http://www.w3.org/ns/formats/",
    ["SPARQL_Results_JSON", "SPARQL_Results_XML", "SPARQL_Results_CSV", "SPARQL_Results_TSV",
     "Turtle", "N-Triples", "N-Quads", "RDF_XML", "JSON-LD", "TriG"],
)
FOAF = Namespace("http://xmlns.com/foaf/0.1/", ["Agent", "name", "homepage", "page"])
SCHEMA = Namespace("https://schema.org/", ["softwareVersion", "codeRepository", "url", "name"])

# GERBIL's own vocabulary as the GERBIL QA code writes it (see docs/vocabulary.md for the mapping).
GERBIL = Namespace(
    "http://w3id.org/gerbil/vocab#",
    ["Experiment", "ExperimentTask", "QA", "AIT2KB", "AType", "P2KB", "RE2KB", "C2KB",
     "StrongEntityMatch", "dsd", "annotator", "dataset", "datasetElement", "language",
     "experimentType", "errorCount", "f1", "falseNegativeCount", "falsePositiveCount",
     "macroF1", "macroPrecision", "macroRecall", "matching", "microF1", "microPrecision",
     "microRecall", "precision", "recall", "statusCode", "subExperimentOf", "timestamp",
     "truePositiveCount", "trueNegativeCount", "Macro_F1_QALD", "avg_millis/doc"],
)

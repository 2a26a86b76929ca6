"""Describe the store and the endpoint: SPARQL 1.1 Service Description, VoID and DCAT.

VoID is served at ``/.well-known/void`` (here); the service description at a bare ``GET /sparql``
(``server.sparql.page``).

Both descriptions are built as quads from the closed vocabularies (never hand-written Turtle)
and cover only what anonymous readers can see: the public graphs of the current generation.
``SERVICE`` is refused by the endpoint, so ``sd:BasicFederatedQuery`` is not advertised.
"""

from __future__ import annotations

from flask import Blueprint, Response
from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad

from server.linked_data.serialisation import serialize_document
from server.services import Services, services
from server.web import caching
from server.web.negotiation import RDF_FORMATS, decorate, negotiate
from store import graphs
from vocab import iris
from vocab.project import QAB
from vocab.qb import QB
from vocab.standard import DCAT, DCTERMS, FORMATS, GERBIL, PROV, RDF, RDFS, SD, VOID, XSD

bp = Blueprint("description", __name__)

Term = NamedNode | BlankNode | Literal

_RESULT_FORMATS = (
    "SPARQL_Results_JSON",
    "SPARQL_Results_XML",
    "SPARQL_Results_CSV",
    "SPARQL_Results_TSV",
    "Turtle",
    "N-Triples",
    "RDF_XML",
    "JSON-LD",
    "N-Quads",
)
_MEDIA_TYPES = "https://www.iana.org/assignments/media-types/"
# Licence stated for the published descriptions and results (benchmark questions keep the
# licences of their sources, which each dataset version names with dct:source).
DATA_LICENSE = "https://creativecommons.org/licenses/by/4.0/"


def _quad(s: NamedNode | BlankNode, p: NamedNode, o: Term) -> Quad:
    return Quad(s, p, o, DefaultGraph())


def _count(value: int) -> Literal:
    return Literal(str(value), datatype=XSD.integer)


def void_iri(base: str) -> NamedNode:
    """Return the IRI of the VoID description (it also names the described dataset)."""
    return iris.page_iri(base, ".well-known", "void")


def endpoint_iri(base: str) -> NamedNode:
    """Return the IRI of the public SPARQL endpoint."""
    return iris.page_iri(base, "sparql")


def service_description(svc: Services, endpoint_url: str) -> list[Quad]:
    """Return the SPARQL 1.1 Service Description of ``/sparql``.

    Args:
        svc: the services (for counts of the public data).
        endpoint_url: the URL the client used to reach the endpoint (``sd:endpoint``).
    """
    service = endpoint_iri(svc.base)
    dataset, default = BlankNode(), BlankNode()
    quads = [
        _quad(service, RDF.type, SD.Service),
        _quad(service, SD.endpoint, NamedNode(endpoint_url)),
        _quad(service, SD.supportedLanguage, SD.SPARQL11Query),
        _quad(service, SD.feature, SD.UnionDefaultGraph),
        _quad(service, SD.defaultDataset, dataset),
        _quad(service, RDFS.seeAlso, void_iri(svc.base)),
        _quad(
            service,
            RDFS.comment,
            Literal(
                "Read-only. SERVICE is refused; queries run with a time limit of "
                f"{svc.config.server.query_timeout_seconds:g} s and return at most "
                f"{svc.config.server.max_result_rows} rows (X-Result-Truncated says when more "
                "existed). The default graph is the union of the public named graphs."
            ),
        ),
        _quad(dataset, RDF.type, SD.Dataset),
        _quad(dataset, SD.defaultGraph, default),
        _quad(default, RDF.type, SD.Graph),
        _quad(default, VOID.triples, _count(svc.snapshot().public_quads)),
    ]
    quads += [_quad(service, SD.resultFormat, FORMATS[name]) for name in _RESULT_FORMATS]
    return quads


def _datasets(svc: Services) -> list[tuple[NamedNode, Literal | None]]:
    catalog = graphs.catalog_graph(svc.base)
    if not svc.visibility().can_see(catalog):
        return []
    found: dict[str, tuple[NamedNode, Literal | None]] = {}
    for quad in svc.store.quads(predicate=RDF.type, obj=QAB.Dataset, graph=catalog):
        if isinstance(quad.subject, NamedNode):
            titles = list(svc.store.quads(quad.subject, DCTERMS.title, None, catalog))
            title = titles[0].object if titles and isinstance(titles[0].object, Literal) else None
            found[quad.subject.value] = (quad.subject, title)
    return [found[k] for k in sorted(found)]


def void_description(svc: Services) -> list[Quad]:
    """Return the VoID + DCAT description of the public data."""
    base = svc.base
    doc, service, home = void_iri(base), endpoint_iri(base), iris.page_iri(base, "")
    dump = iris.page_iri(base, "dump.nq")
    vis = svc.visibility()
    experiments = [
        g for g in vis.graphs if g.value.startswith(graphs.experiment_graph_prefix(base))
    ]
    quads = [
        _quad(doc, RDF.type, VOID.Dataset),
        _quad(doc, RDF.type, DCAT.Dataset),
        _quad(
            doc,
            DCTERMS.title,
            Literal("qabench: question answering benchmarks and results", language="en"),
        ),
        _quad(
            doc,
            DCTERMS.description,
            Literal(
                "Benchmark datasets, their questions and gold answers, and the results of "
                "experiments that ran question answering systems on them, as RDF Data Cube "
                "observations.",
                language="en",
            ),
        ),
        _quad(doc, DCTERMS.license, NamedNode(DATA_LICENSE)),
        _quad(doc, VOID.sparqlEndpoint, service),
        _quad(doc, VOID.uriSpace, Literal(base + "/")),
        _quad(doc, VOID.triples, _count(svc.snapshot().public_quads)),
        _quad(doc, VOID.dataDump, dump),
        _quad(doc, DCAT.distribution, dump),
        _quad(dump, RDF.type, DCAT.Distribution),
        _quad(dump, DCAT.downloadURL, dump),
        _quad(dump, DCAT.mediaType, NamedNode(_MEDIA_TYPES + "application/n-quads")),
        _quad(home, RDF.type, DCAT.Catalog),
        _quad(home, DCAT.dataset, doc),
        _quad(home, DCAT.service, service),
        _quad(service, RDF.type, DCAT.DataService),
        _quad(service, DCAT.endpointURL, service),
        _quad(service, DCAT.endpointDescription, service),
        _quad(service, DCAT.servesDataset, doc),
    ]
    for vocabulary in (QAB.iri, QB.iri, PROV.iri, DCAT.iri, DCTERMS.iri, GERBIL.iri):
        quads.append(_quad(doc, VOID.vocabulary, NamedNode(vocabulary)))
    partition = BlankNode()
    quads += [
        _quad(doc, VOID.classPartition, partition),
        _quad(partition, VOID["class"], QAB.Experiment),
        _quad(partition, VOID.entities, _count(len(experiments))),
    ]
    if experiments:
        first = experiments[0].value.rsplit("/", 1)[-1]
        quads.append(_quad(doc, VOID.exampleResource, iris.experiment_iri(base, first)))
    for dataset, title in _datasets(svc):
        quads.append(_quad(home, DCAT.dataset, dataset))
        quads.append(_quad(doc, VOID.subset, dataset))
        if title is not None:
            quads.append(_quad(dataset, DCTERMS.title, title))
    return quads


@bp.route("/.well-known/void")
@bp.route("/.well-known/void.<ext>")
def void(ext: str | None = None) -> Response:
    """The VoID and DCAT description of the public data."""
    svc = services()
    choice = negotiate(RDF_FORMATS, ext)
    rep = choice.rep
    etag = svc.etag("void", rep.key, str(choice.as_graph))
    fresh = caching.not_modified(etag, svc.modified)
    if fresh:
        response = Response(status=304)
    else:
        body = svc.cache.get_or_make(
            svc.generation,
            f"void {rep.key} {choice.as_graph}",
            lambda: serialize_document(void_description(svc), rep, as_graph=choice.as_graph),
        )
        response = Response(body, mimetype=rep.media_type)
    caching.finish(response, etag, last_modified=svc.modified, not_modified_now=fresh)
    return decorate(response, "/.well-known/void", RDF_FORMATS, choice)

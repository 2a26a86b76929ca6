"""Describe the store and the endpoint: SPARQL 1.1 Service Description, VoID and DCAT.

VoID is served at ``/.well-known/void`` (here, with its suffix forms and an HTML table for
browsers); the same DCAT catalog is the RDF form of the home page (``server.pages.lists``); the
service description answers a bare ``GET /sparql`` (``server.sparql.page``).

The descriptions are built as quads from the closed vocabularies (never hand-written Turtle)
and cover only what anonymous readers can see: the public graphs of the current generation.
``SERVICE`` is refused by the endpoint, so ``sd:BasicFederatedQuery`` is not advertised.
Resources keep their IRIs under ``server.base_iri``; the URLs a client must *reach* (endpoint,
dump, descriptions) are resolved from the request when the server answers on another host or
port than the base names (``access_root``), so a client of a test or development server is
never sent to a port nothing listens on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from flask import Blueprint, Response, render_template, request
from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad

from server.linked_data.pipeline import Reader, Resource, serve
from server.linked_data.terms import describe
from server.services import Services, services
from server.web.representations import HTML, RDF_FORMATS, Representation
from store import graphs
from vocab import iris
from vocab.project import QAB
from vocab.qb import QB
from vocab.standard import (
    DCAT,
    DCTERMS,
    FOAF,
    FORMATS,
    GERBIL,
    PROV,
    RDF,
    RDFS,
    RESULTS_LICENSE,
    SD,
    VOID,
    XSD,
)

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
# The forms of the VoID description: RDF first (machines), HTML for browsers.
VOID_FORMATS = (*RDF_FORMATS[:1], HTML, *RDF_FORMATS[1:])
DATA_DESCRIPTION = (
    "Benchmark datasets, their questions and gold answers, and the results of experiments that "
    "ran question answering systems on them, as RDF Data Cube observations."
)
CATALOG_DESCRIPTION = (
    "Question answering benchmarks, the experiments that ran systems on them, and their "
    "results, as linked data with a public SPARQL endpoint."
)
# Licence stated for the published descriptions and results (benchmark questions keep the
# licences of their sources, which each dataset version names with dct:source).
DATA_LICENSE = RESULTS_LICENSE.value


def _quad(s: NamedNode | BlankNode, p: NamedNode, o: Term) -> Quad:
    return Quad(s, p, o, DefaultGraph())


def _count(value: int) -> Literal:
    return Literal(str(value), datatype=XSD.integer)


def _triples_stated(subject: NamedNode | BlankNode, svc: Services) -> list[Quad]:
    """``void:triples`` of the public data, or nothing while the SPARQL view's count is not
    known (its view not ready within the wait, or the count being redone): never a guess."""
    quads = svc.public_quads()
    return [] if quads is None else [_quad(subject, VOID.triples, _count(quads))]


def access_root(base: str) -> str:
    """Return the URL prefix clients of the current request reach the server at.

    The configured base when the request came to its host and port (a reverse proxy may have
    changed the scheme, which the base states better); otherwise the request's own scheme,
    host, port and mount point.
    """
    here = urlsplit(request.host_url)
    if here.netloc.lower() == urlsplit(base).netloc.lower():
        return base
    return f"{here.scheme}://{here.netloc}{request.script_root}"


def reachable(base: str, iri: NamedNode) -> NamedNode:
    """Return ``iri`` (under ``base``) at the address the current request reached."""
    root = access_root(base)
    if root == base or not iri.value.startswith(base):
        return iri
    return NamedNode(root + iri.value[len(base) :])


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
        _quad(service, RDFS.seeAlso, reachable(svc.base, void_iri(svc.base))),
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
        *_triples_stated(default, svc),
    ]
    quads += [_quad(service, SD.resultFormat, FORMATS[name]) for name in _RESULT_FORMATS]
    return quads


def _datasets(svc: Services) -> list[tuple[NamedNode, Literal | None, Literal | None]]:
    """Each benchmark of the catalog with its first title and description, if any."""
    catalog = graphs.catalog_graph(svc.base)
    if not svc.visibility().can_see(catalog):
        return []

    def first(subject: NamedNode, predicate: NamedNode) -> Literal | None:
        found = next(svc.store.quads(subject, predicate, None, catalog), None)
        return found.object if found is not None and isinstance(found.object, Literal) else None

    found: dict[str, tuple[NamedNode, Literal | None, Literal | None]] = {}
    for quad in svc.store.quads(predicate=RDF.type, obj=QAB.Dataset, graph=catalog):
        if isinstance(quad.subject, NamedNode):
            subject = quad.subject
            found[subject.value] = (
                subject,
                first(subject, DCTERMS.title),
                first(subject, DCTERMS.description),
            )
    return [found[k] for k in sorted(found)]


@dataclass(frozen=True, slots=True)
class _Places:
    """The IRIs a description names, and the URLs the current request reaches them at."""

    base: str
    doc: NamedNode
    service: NamedNode
    home: NamedNode
    dump: NamedNode
    packed: NamedNode
    licence: NamedNode

    def reached(self, iri: NamedNode) -> NamedNode:
        return reachable(self.base, iri)


def _places(base: str) -> _Places:
    return _Places(
        base,
        void_iri(base),
        endpoint_iri(base),
        iris.page_iri(base, ""),
        iris.page_iri(base, "dump.nq"),
        iris.page_iri(base, "dump.nq.gz"),
        NamedNode(DATA_LICENSE),
    )


def _void_quads(svc: Services, at: _Places) -> list[Quad]:
    """The VoID dataset: what the data is, where to query and download it, what it uses."""
    doc = at.doc
    title = Literal("qabench: question answering benchmarks and results", language="en")
    quads = [
        _quad(doc, RDF.type, VOID.Dataset),
        _quad(doc, RDF.type, DCAT.Dataset),
        _quad(doc, DCTERMS.title, title),
        _quad(doc, DCTERMS.description, Literal(DATA_DESCRIPTION, language="en")),
        _quad(doc, DCTERMS.license, at.licence),
        _quad(doc, VOID.sparqlEndpoint, at.reached(at.service)),
        _quad(doc, VOID.uriSpace, Literal(at.base + "/")),
        *_triples_stated(doc, svc),
        _quad(doc, VOID.dataDump, at.reached(at.dump)),
        _quad(doc, VOID.dataDump, at.reached(at.packed)),
    ]
    for vocabulary in (QAB.iri, QB.iri, PROV.iri, DCAT.iri, DCTERMS.iri, GERBIL.iri):
        quads.append(_quad(doc, VOID.vocabulary, NamedNode(vocabulary)))
    # Names, not graphs: thousands at scale, and one pass finds the count and the first.
    prefix = graphs.experiment_graph_prefix(at.base)
    experiments = [n for n in svc.visibility().names if n.startswith(prefix)]
    partition = BlankNode()
    quads += [
        _quad(doc, VOID.classPartition, partition),
        _quad(partition, VOID["class"], QAB.Experiment),
        _quad(partition, VOID.entities, _count(len(experiments))),
    ]
    if experiments:
        first = min(experiments)[len(prefix) :]
        quads.append(_quad(doc, VOID.exampleResource, iris.experiment_iri(at.base, first)))
    return quads


def _catalog_quads(at: _Places) -> list[Quad]:
    """The DCAT catalog with its publisher, licence and SPARQL service (DCAT-AP's musts)."""
    home, service = at.home, at.service
    # the operator, described here: a hash IRI on the home page (it dereferences to the catalog)
    publisher = NamedNode(at.home.value + "#publisher")
    return [
        _quad(home, RDF.type, DCAT.Catalog),
        _quad(home, DCTERMS.title, Literal("qabench", language="en")),
        _quad(home, DCTERMS.description, Literal(CATALOG_DESCRIPTION, language="en")),
        _quad(home, DCTERMS.publisher, publisher),
        _quad(publisher, RDF.type, FOAF.Agent),
        # the operator of this server, named by its address
        _quad(publisher, FOAF.name, Literal(f"qabench at {urlsplit(at.base).netloc}")),
        _quad(home, DCTERMS.license, at.licence),
        _quad(at.licence, RDF.type, DCTERMS.LicenseDocument),
        _quad(home, DCAT.dataset, at.doc),
        _quad(home, DCAT.service, service),
        _quad(service, RDF.type, DCAT.DataService),
        _quad(service, DCTERMS.title, Literal("qabench SPARQL endpoint", language="en")),
        _quad(service, DCAT.endpointURL, at.reached(service)),
        _quad(service, DCAT.endpointDescription, at.reached(service)),
        # DCAT-AP's shapes check these values' class without inference: say it
        _quad(at.reached(service), RDF.type, RDFS.Resource),
        _quad(service, DCAT.servesDataset, at.doc),
    ]


def _distribution_quads(at: _Places) -> list[Quad]:
    """The dump and its gzip file as DCAT distributions."""
    n_quads = NamedNode(_MEDIA_TYPES + "application/n-quads")
    quads = []
    for distribution, compressed in ((at.dump, False), (at.packed, True)):
        quads += [
            _quad(at.doc, DCAT.distribution, distribution),
            _quad(distribution, RDF.type, DCAT.Distribution),
            _quad(distribution, DCTERMS.license, at.licence),
            _quad(distribution, DCAT.downloadURL, at.reached(distribution)),
            _quad(distribution, DCAT.accessURL, at.reached(distribution)),
            _quad(at.reached(distribution), RDF.type, RDFS.Resource),
            _quad(distribution, DCAT.mediaType, n_quads),
            _quad(n_quads, RDF.type, DCTERMS.MediaType),
        ]
        if compressed:
            compress = NamedNode(_MEDIA_TYPES + "application/gzip")
            quads.append(_quad(distribution, DCAT.compressFormat, compress))
            quads.append(_quad(compress, RDF.type, DCTERMS.MediaType))
    return quads


def _dataset_quads(svc: Services, at: _Places) -> list[Quad]:
    """The benchmarks of the catalog, each a DCAT dataset with a title and a description."""
    quads = []
    for dataset, title, description in _datasets(svc):
        name = title or Literal(dataset.value.rsplit("/", 1)[-1])
        # the catalog's own description (versions written before had none)
        described = description or Literal(
            f"The questions of the benchmark {name.value}.", language="en"
        )
        quads += [
            _quad(at.home, DCAT.dataset, dataset),
            _quad(at.doc, VOID.subset, dataset),
            _quad(dataset, RDF.type, DCAT.Dataset),
            _quad(dataset, DCTERMS.title, name),
            _quad(dataset, DCTERMS.description, described),
        ]
    return quads


def void_description(svc: Services) -> list[Quad]:
    """Return the VoID + DCAT description of the public data, for the current request.

    Access URLs (endpoint, dumps) are those the request reached (``reachable``).
    """
    at = _places(svc.base)
    return [
        *_void_quads(svc, at),
        *_catalog_quads(at),
        *_distribution_quads(at),
        *_dataset_quads(svc, at),
    ]


def render_description(
    stem: str,
    title: str,
    ext: str | None,
    focus: NamedNode,
    offered: Sequence[Representation] = VOID_FORMATS,
    page: Callable[[], str] | None = None,
    public: bool = False,
) -> Response:
    """Answer a request for the DCAT catalog and VoID description at ``stem`` in any form.

    Args:
        stem: the path of the resource without extension.
        title: the title of its HTML table.
        ext: the format extension of the URL, if any.
        focus: the resource described first in the HTML table.
        offered: the forms, in preference order.
        page: renders the HTML form instead of the table of triples (the home page).
        public: the same for every reader, whatever tokens they present (the description of
            the public data; the home page counts what the reader's tokens opened).
    """

    def _html(reader: Reader, _data: None) -> str:
        if page is not None:
            return page()
        return render_template(
            "resource.html",
            iri=focus.value,
            title=title,
            subjects=describe(void_description(reader.svc), focus, reader.base),
            alternates=[(f"{stem}.{r.extension}", r.media_type, r.label) for r in offered],
        )

    resource: Resource[None] = Resource(
        formats=tuple(offered),
        load=lambda _reader: None,
        html=_html,
        quads=lambda reader, _data: void_description(reader.svc),
        # Access URLs are those the request reached.
        variant=lambda reader: access_root(reader.base),
        public=public,
    )
    return serve(resource, stem, ext)


@bp.route("/.well-known/void")
@bp.route("/.well-known/void.<ext>")
def void(ext: str | None = None) -> Response:
    """The VoID and DCAT description of the public data."""
    base = services().base
    return render_description(
        "/.well-known/void", "VoID description", ext, void_iri(base), public=True
    )

"""How crawlers find the data: ``/robots.txt`` and a paginated sitemap of public resources.

The sitemap (``/sitemap.xml``, a sitemap index, and ``/sitemap/{n}.xml``, at most
``server.sitemap_page_size`` URLs each) lists the pages worth indexing: home, lists, the
vocabulary and VoID, every dataset and dataset version, every published experiment, every
system that took part in one and every knowledge base. The list is built once per store
generation from the catalog graph's type index and the list of visible graphs (never a scan of
the data) and cached; a page is a slice of it. URLs are the resources' IRIs at the address the
request reached (the sitemap protocol wants them on the sitemap's host). ``robots.txt`` keeps
crawlers off queries, forms, downloads and per-format duplicates. Only anonymous visibility
counts: private experiments are never listed, whatever tokens the crawler holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar
from xml.etree import ElementTree as ET

from flask import Blueprint, Response
from pyoxigraph import NamedNode

from server.linked_data.description import access_root, reachable
from server.linked_data.pipeline import Reader, Resource, serve
from server.services import Services
from server.web.problems import Problem
from server.web.representations import Representation
from store import graphs
from vocab import iris
from vocab.project import QAB
from vocab.standard import RDF

bp = Blueprint("discovery", __name__)
D = TypeVar("D")

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
# Pages that exist whatever the data.
FIXED_PATHS = ("", "datasets", "experiments", "systems", "vocab", ".well-known/void", "sparql")
# Kept off by robots.txt: evaluation on demand, forms, writes, big downloads, raw graphs, and
# the same pages again in other forms or with tokens.
DISALLOWED = (
    "/sparql?",
    "/update",
    "/ask",
    "/api/",
    "/experiments/new",
    "/upload",
    "/compare",
    "/dump.nq",
    "/graph/",
    "/*?format=",
    "/*?token=",
)


def _typed(svc: Services, kind: NamedNode, graph: NamedNode) -> list[NamedNode]:
    return sorted(
        {
            q.subject.value: q.subject
            for q in svc.store.quads(predicate=RDF.type, obj=kind, graph=graph)
            if isinstance(q.subject, NamedNode)
        }.values(),
        key=lambda node: node.value,
    )


def public_resources(svc: Services) -> list[NamedNode]:
    """Return the IRIs the sitemap lists, in a stable order (cached per store generation)."""

    def _collect() -> list[NamedNode]:
        base = svc.base
        vis = svc.visibility()
        found = [iris.page_iri(base, *p.split("/")) for p in FIXED_PATHS]
        catalog = graphs.catalog_graph(base)
        if vis.can_see(catalog):
            for kind in (QAB.Dataset, QAB.DatasetVersion, QAB.KnowledgeBase):
                found += _typed(svc, kind, catalog)
        prefix = graphs.experiment_graph_prefix(base)
        systems: dict[str, NamedNode] = {}
        if vis.can_see(catalog):
            systems.update((s.value, s) for s in _typed(svc, QAB.System, catalog))
        for graph in vis.graphs_under(prefix):
            found.append(iris.experiment_iri(base, graph.value[len(prefix) :]))
            for system in _typed(svc, QAB.System, graph):
                systems.setdefault(system.value, system)
        found += [systems[k] for k in sorted(systems)]
        # Only resources whose pages this server answers (an external IRI is not ours to list).
        return [iri for iri in dict.fromkeys(found) if iri.value.startswith(base + "/")]

    return svc.remember("sitemap", _collect)


def _xml(root: ET.Element) -> bytes:
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data


# The forms of the crawler files: each offers one, named by its URL's extension, so it is
# served whatever the request's Accept says (as a static file would be).
XML = Representation("xml", "application/xml", "xml", "XML", aliases=("text/xml",))
TEXT = Representation("text", "text/plain", "txt", "text")


def _sitemap_pages(reader: Reader) -> int:
    size = reader.svc.config.server.sitemap_page_size
    return max(1, math.ceil(len(public_resources(reader.svc)) / size))


def _index_xml(reader: Reader, pages: int) -> bytes:
    root = ET.Element("sitemapindex", xmlns=SITEMAP_NS)
    here = access_root(reader.svc.base)
    for number in range(1, pages + 1):
        entry = ET.SubElement(root, "sitemap")
        ET.SubElement(entry, "loc").text = f"{here}/sitemap/{number}.xml"
    return _xml(root)


def _page_slice(reader: Reader) -> list[NamedNode]:
    """The resources of the sitemap page the request names.

    Raises:
        Problem: 404 for a page past the end (or before the first).
    """
    svc = reader.svc
    number = int(reader.stem.rsplit("/", 1)[-1])
    size = svc.config.server.sitemap_page_size
    resources = public_resources(svc)
    pages = max(1, math.ceil(len(resources) / size))
    if not 1 <= number <= pages:
        raise Problem(404, f"The sitemap has {pages} page(s); there is no page {number}.")
    return resources[(number - 1) * size : number * size]


def _page_xml(reader: Reader, resources: list[NamedNode]) -> bytes:
    root = ET.Element("urlset", xmlns=SITEMAP_NS)
    for iri in resources:
        ET.SubElement(ET.SubElement(root, "url"), "loc").text = reachable(
            reader.svc.base, iri
        ).value
    return _xml(root)


def _robots_text(reader: Reader, _data: None) -> bytes:
    lines = ["User-agent: *", *(f"Disallow: {path}" for path in DISALLOWED), "Allow: /", ""]
    lines.append(f"Sitemap: {access_root(reader.svc.base)}/sitemap.xml")
    return ("\n".join(lines) + "\n").encode("utf-8")


def _here(reader: Reader) -> str:
    """The bodies name URLs at the address the request reached: part of the cache key."""
    return access_root(reader.svc.base)


def _crawler_file(
    form: Representation, load: Callable[[Reader], D], render: Callable[[Reader, D], bytes]
) -> Resource[D]:
    """A crawler file: one form, public (tokens never change it), no document URLs, an hour of
    freshness, its body naming the address the request reached."""
    return Resource(
        formats=(form,),
        load=load,
        extra=((form, render),),
        documents=False,
        public=True,
        max_age=3600,
        variant=_here,
    )


SITEMAP_INDEX = _crawler_file(XML, _sitemap_pages, _index_xml)
SITEMAP_PAGE = _crawler_file(XML, _page_slice, _page_xml)
ROBOTS = _crawler_file(TEXT, lambda _reader: None, _robots_text)


@bp.route("/sitemap.xml")
def sitemap_index() -> Response:
    """The sitemap index: one entry per page of at most ``server.sitemap_page_size`` URLs."""
    return serve(SITEMAP_INDEX, "/sitemap", "xml")


@bp.route("/sitemap/<int:number>.xml")
def sitemap_page(number: int) -> Response:
    """One page of the sitemap (404 past the end)."""
    return serve(SITEMAP_PAGE, f"/sitemap/{number}", "xml")


@bp.route("/robots.txt")
def robots() -> Response:
    """What crawlers may fetch, and where the sitemap is."""
    return serve(ROBOTS, "/robots", "txt")

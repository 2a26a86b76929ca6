"""The named-graph policy: which graph holds what, and which graphs the public may read.

    <base>/graph/vocab                       the qabench vocabulary (vocab/project.ttl)
    <base>/graph/catalog                     datasets, their versions' metadata, systems, KBs
    <base>/graph/dataset/{name}/v{n}         the questions of one dataset version (never rewritten)
    <base>/graph/check/{name}/v{n}           the latest check report of a dataset version
    <base>/graph/experiment/{id}             one experiment: tasks, provenance, Data Cube results
    <base>/graph/kb/{name}/{load}            one load of a knowledge base (owl:sameAs, labels)
    <base>/graph/rag                         stored runs of the built-in RAG system
    <base>/graph/admin                       private: access-token hashes, ownership, publication
    <base>/graph/staging/{name}              private: a bulk load in progress (never read)

Private experiments are the experiment graphs whose experiment is not published; the admin graph is
never public. Dataset and knowledge-base graphs are *gated*: they are written first (large ones with
the bulk loader, outside any transaction) and become public only once the catalog names them with
``qab:graph`` (one small transaction); a gated graph the catalog does not name is an orphan of a
load that failed or was killed, invisible and removed at the next start. Every public read (pages,
RDF documents, SPARQL, dumps) evaluates over ``public_graphs``, so private data is unreachable
whatever a query names.
"""

from __future__ import annotations

import functools
from collections.abc import Collection

from pyoxigraph import NamedNode

from vocab import iris


def vocab_graph(base: str) -> NamedNode:
    """Return the graph of our vocabulary."""
    return iris.graph_iri(base, "vocab")


def catalog_graph(base: str) -> NamedNode:
    """Return the catalog graph (datasets, versions, systems, knowledge bases)."""
    return iris.graph_iri(base, "catalog")


def dataset_graph(base: str, name: str, version: int) -> NamedNode:
    """Return the graph holding the questions of one dataset version."""
    return iris.graph_iri(base, "dataset", name, f"v{version}")


def check_graph(base: str, name: str, version: int) -> NamedNode:
    """Return the graph holding the latest check report of a dataset version."""
    return iris.graph_iri(base, "check", name, f"v{version}")


def experiment_graph(base: str, experiment_id: str) -> NamedNode:
    """Return the graph of one experiment."""
    return iris.graph_iri(base, "experiment", experiment_id)


def experiment_graph_of(base: str, iri: str) -> NamedNode | None:
    """Return the graph of the experiment ``iri`` names (None: it names no experiment itself).

    >>> experiment_graph_of("http://x.test", "http://x.test/experiment/42").value
    'http://x.test/graph/experiment/42'
    >>> experiment_graph_of("http://x.test", "http://x.test/experiment/42/cube") is None
    True
    """
    ref = iris.parse(base, iri)
    if ref is None or ref.kind != "experiment" or not ref.exact:
        return None
    return experiment_graph(base, ref.parts[0])


def kb_graph(base: str, name: str, load: str | None = None) -> NamedNode:
    """Return the graph of one load of a knowledge base (without ``load``: its common prefix).

    The catalog names the graph of a knowledge base's current load; stores written before loads
    were numbered use the prefix itself, which the catalog then names.
    """
    if load is None:
        return iris.graph_iri(base, "kb", name)
    return iris.graph_iri(base, "kb", name, load)


def rag_graph(base: str) -> NamedNode:
    """Return the graph of stored RAG runs."""
    return iris.graph_iri(base, "rag")


@functools.cache
def admin_graph(base: str) -> NamedNode:
    """Return the private administration graph (never public)."""
    return iris.graph_iri(base, "admin")


def graph_prefix(base: str) -> str:
    """Return the IRI prefix shared by every graph qabench writes (a remote store's scope)."""
    return iris.graph_iri(base).value + "/"


def experiment_graph_prefix(base: str) -> str:
    """Return the IRI prefix shared by every experiment graph."""
    return iris.graph_iri(base, "experiment").value + "/"


def staging_graph(base: str, name: str) -> NamedNode:
    """Return a staging graph: bulk loads write there first, and nobody reads it."""
    return iris.graph_iri(base, "staging", name)


@functools.cache
def _staging_prefix(base: str) -> str:
    return iris.graph_iri(base, "staging").value + "/"


@functools.cache
def gated_prefixes(base: str) -> tuple[str, ...]:
    """Return the IRI prefixes of the graphs that are public only once the catalog names them."""
    return tuple(iris.graph_iri(base, kind).value + "/" for kind in ("dataset", "kb"))


def is_public_graph(
    base: str, graph: str, private_graphs: Collection[str], catalogued: Collection[str]
) -> bool:
    """Return whether anonymous readers may see ``graph`` (an IRI).

    Every graph is public except the admin graph, staging graphs, the graphs of private
    experiments (``private_graphs`` holds their IRIs), and dataset and knowledge-base graphs
    the catalog does not name (``catalogued`` holds the graphs it names).
    """
    if graph == admin_graph(base).value or graph in private_graphs:
        return False
    if graph.startswith(_staging_prefix(base)):
        return False
    return graph in catalogued or not graph.startswith(gated_prefixes(base))


def public_graphs(
    base: str,
    all_graphs: list[NamedNode],
    private_experiments: set[str],
    catalogued: Collection[str],
) -> list[NamedNode]:
    """Return the graphs anonymous readers may see.

    Args:
        base: the base IRI.
        all_graphs: every named graph in the store.
        private_experiments: ids of experiments that are not published.
        catalogued: the graphs the catalog names with ``qab:graph``.

    Returns:
        ``all_graphs`` without the graphs ``is_public_graph`` hides.
    """
    prefix = experiment_graph_prefix(base)
    hidden = {prefix + e for e in private_experiments}
    return [g for g in all_graphs if is_public_graph(base, g.value, hidden, catalogued)]

"""The named-graph policy: which graph holds what, and which graphs the public may read.

    <base>/graph/vocab                       the qabench vocabulary (vocab/project.ttl)
    <base>/graph/catalog                     datasets, their versions' metadata, systems, KBs
    <base>/graph/dataset/{name}/v{n}         the questions of one dataset version (never rewritten)
    <base>/graph/check/{name}/v{n}           the latest check report of a dataset version
    <base>/graph/experiment/{id}             one experiment: tasks, provenance, Data Cube results
    <base>/graph/kb/{name}                   a knowledge base a user loaded (owl:sameAs, labels)
    <base>/graph/rag                         stored runs of the built-in RAG system
    <base>/graph/admin                       private: access-token hashes, ownership, publication

Private experiments are the experiment graphs whose experiment is not published; the admin graph
is never public. Every public read (pages, RDF documents, SPARQL, dumps) evaluates over
``public_graphs``, so private data is unreachable whatever a query names.
"""

from __future__ import annotations

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


def kb_graph(base: str, name: str) -> NamedNode:
    """Return the graph of a knowledge base loaded into the store."""
    return iris.graph_iri(base, "kb", name)


def rag_graph(base: str) -> NamedNode:
    """Return the graph of stored RAG runs."""
    return iris.graph_iri(base, "rag")


def admin_graph(base: str) -> NamedNode:
    """Return the private administration graph (never public)."""
    return iris.graph_iri(base, "admin")


def graph_prefix(base: str) -> str:
    """Return the IRI prefix shared by every graph qabench writes (a remote store's scope)."""
    return iris.graph_iri(base).value + "/"


def experiment_graph_prefix(base: str) -> str:
    """Return the IRI prefix shared by every experiment graph."""
    return iris.graph_iri(base, "experiment").value + "/"


def public_graphs(
    base: str, all_graphs: list[NamedNode], private_experiments: set[str]
) -> list[NamedNode]:
    """Return the graphs anonymous readers may see.

    Args:
        base: the base IRI.
        all_graphs: every named graph in the store.
        private_experiments: ids of experiments that are not published.

    Returns:
        ``all_graphs`` without the admin graph and without private experiment graphs.
    """
    admin = admin_graph(base)
    prefix = experiment_graph_prefix(base)
    hidden = {prefix + e for e in private_experiments}
    return [g for g in all_graphs if g != admin and g.value not in hidden]

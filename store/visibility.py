"""Which named graphs a reader may see: public graphs, plus private experiments opened by a token.

The private admin graph (``store.graphs.admin_graph``) states, per experiment IRI,
``qab:published`` (``xsd:boolean``) and ``qab:accessTokenHash`` (SHA-256 hex of the owner's
token). An experiment whose ``qab:published`` is false is private: its graph is hidden unless
the request presents a token whose hash matches. This module computes graph lists only; it
never evaluates user queries and never reads HTTP requests.

``VisibilityIndex`` keeps that knowledge current from a store's change log at the cost of the
change (a write to the admin graph re-reads only the experiments it names), so no reader has to
scan the store after a write; only an arbitrary SPARQL update makes it read everything again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode

from store import graphs, queries
from store.changes import Change
from store.protocol import RdfStore
from vocab import iris
from vocab.project import QAB


@dataclass(frozen=True, slots=True)
class PrivateExperiment:
    """One unpublished experiment: its id, its graph and the hashes of its access tokens."""

    experiment_id: str
    graph: NamedNode
    token_hashes: frozenset[str]


def token_hash(token: str) -> str:
    """Return the SHA-256 hex digest under which a token is stored.

    >>> token_hash("secret")[:12]
    '2bb80d537b1d'
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _is_false(term: object) -> bool:
    return isinstance(term, Literal) and term.value.strip().lower() in ("false", "0")


def _admin_entry(store: RdfStore, base: str, experiment: NamedNode) -> PrivateExperiment | None:
    """Return the private-experiment entry of ``experiment`` from the admin graph, if private."""
    admin = graphs.admin_graph(base)
    flags = [q.object for q in store.quads(experiment, QAB.published, None, admin)]
    if not flags or not all(_is_false(f) for f in flags):
        return None
    hashes = frozenset(
        q.object.value.strip().lower()
        for q in store.quads(experiment, QAB.accessTokenHash, None, admin)
        if isinstance(q.object, Literal)
    )
    eid = iris.experiment_id_of(experiment.value)
    return PrivateExperiment(eid, graphs.experiment_graph(base, eid), hashes)


def private_experiments(store: RdfStore, base: str) -> list[PrivateExperiment]:
    """Return every unpublished experiment with its token hashes.

    Args:
        store: the store holding the admin graph.
        base: the base IRI.

    Returns:
        One entry per experiment whose ``qab:published`` is false, sorted by id.
    """
    rows = store.select(queries.load("visibility_experiments"), admin=graphs.admin_graph(base))
    hashes: dict[str, set[str]] = {}
    for row in rows:
        experiment = row["experiment"]
        if not isinstance(experiment, NamedNode) or not _is_false(row.get("published")):
            continue
        found = hashes.setdefault(iris.experiment_id_of(experiment.value), set())
        token = row.get("hash")
        if isinstance(token, Literal):
            found.add(token.value.strip().lower())
    return [
        PrivateExperiment(eid, graphs.experiment_graph(base, eid), frozenset(found))
        for eid, found in sorted(hashes.items())
    ]


def private_experiment_ids(store: RdfStore, base: str) -> set[str]:
    """Return the ids of unpublished experiments.

    Args:
        store: the store holding the admin graph.
        base: the base IRI.
    """
    return {p.experiment_id for p in private_experiments(store, base)}


def unlocked(private: Iterable[PrivateExperiment], tokens: Iterable[str]) -> list[NamedNode]:
    """Return the graphs of the private experiments that one of ``tokens`` opens.

    Args:
        private: the private experiments (``private_experiments``).
        tokens: the tokens a request presented (clear text).
    """
    presented = {token_hash(t) for t in tokens if t}
    return [p.graph for p in private if p.token_hashes & presented]


def catalogued_graphs(store: RdfStore, base: str) -> set[str]:
    """Return the graphs the catalog names with ``qab:graph`` (dataset versions, KB loads)."""
    catalog = graphs.catalog_graph(base)
    return {
        q.object.value
        for q in store.quads(None, QAB.graph, None, catalog)
        if isinstance(q.object, NamedNode)
    }


def orphan_graphs(store: RdfStore, base: str) -> list[NamedNode]:
    """Return the gated graphs the catalog does not name: leftovers of failed or killed loads."""
    named = catalogued_graphs(store, base)
    prefixes = graphs.gated_prefixes(base)
    staging = iris.graph_iri(base, "staging").value + "/"
    return [
        g
        for g in store.graphs()
        if (g.value.startswith(prefixes) and g.value not in named) or g.value.startswith(staging)
    ]


def visible_graphs(store: RdfStore, base: str, tokens: Iterable[str] = ()) -> list[NamedNode]:
    """Return the named graphs a reader with ``tokens`` may see.

    Args:
        store: the store.
        base: the base IRI.
        tokens: access tokens presented by the reader (none for anonymous readers).

    Returns:
        Every public graph (all graphs but the admin graph and private experiments), plus the
        graphs of private experiments whose token hash matches one of ``tokens``.
    """
    private = private_experiments(store, base)
    public = graphs.public_graphs(
        base, store.graphs(), {p.experiment_id for p in private}, catalogued_graphs(store, base)
    )
    return public + unlocked(private, tokens)


class VisibilityIndex:
    """The named graphs of a store and which of them are private, kept current from its changes.

    ``refresh`` reads everything (at start-up, and after a write whose effect is unknown);
    ``apply`` brings the index up to date with changes at their own cost: graphs named by a
    change are looked up, and experiments named in the admin graph are re-read. ``version``
    goes up whenever the public graphs or the private experiments change. Not thread-safe:
    one owner applies changes (the server's ``Services``) and hands out immutable values.
    """

    def __init__(self, store: RdfStore, base: str) -> None:
        self._store = store
        self._base = base
        self._admin = graphs.admin_graph(base)
        self._graphs: set[str] = set()
        self._private: dict[str, PrivateExperiment] = {}
        self._catalogued: set[str] = set()
        self._catalog = graphs.catalog_graph(base)
        self.version = 0
        self._public_now: set[str] = set()  # kept per graph as changes arrive
        self._public: tuple[int, frozenset[str]] = (-1, frozenset())
        self.refresh()

    def refresh(self) -> None:
        """Read every named graph and every private experiment again."""
        self._graphs = {g.value for g in self._store.graphs()}
        self._private = {p.graph.value: p for p in private_experiments(self._store, self._base)}
        self._catalogued = catalogued_graphs(self._store, self._base)
        self._public_now = {g for g in self._graphs if self.is_public(g)}
        self.version += 1

    def apply(self, changes: list[Change]) -> bool:
        """Bring the index up to date with ``changes``; return whether visibility changed."""
        if any(c.everything for c in changes):
            self.refresh()
            return True
        touched: set[NamedNode] = set()
        experiments: set[NamedNode] = set()
        named: set[NamedNode] = set()
        prefix = iris.page_iri(self._base, "experiment").value + "/"
        for change in changes:
            touched |= change.touched()
            for quad in (*change.added, *change.removed):
                subject = quad.subject
                if (
                    quad.graph_name == self._catalog
                    and quad.predicate == QAB.graph
                    and isinstance(quad.object, NamedNode)
                ):
                    named.add(quad.object)
                if (
                    quad.graph_name == self._admin
                    and isinstance(subject, NamedNode)
                    and subject.value.startswith(prefix)
                    and "/" not in subject.value[len(prefix) :]
                ):
                    experiments.add(subject)
        changed = False
        for graph in touched:
            present = graph.value in self._graphs
            if self._store.has_graph(graph) != present:
                changed = True
                if present:
                    self._graphs.discard(graph.value)
                else:
                    self._graphs.add(graph.value)
        for experiment in experiments:
            eid = iris.experiment_id_of(experiment.value)
            key = graphs.experiment_graph(self._base, eid).value
            entry = _admin_entry(self._store, self._base, experiment)
            if entry != self._private.get(key):
                changed = True
                if entry is None:
                    del self._private[key]
                else:
                    self._private[key] = entry
        for graph in named:
            is_named = next(self._store.quads(None, QAB.graph, graph, self._catalog), None)
            if (is_named is not None) != (graph.value in self._catalogued):
                changed = True
                if is_named is None:
                    self._catalogued.discard(graph.value)
                else:
                    self._catalogued.add(graph.value)
        if changed:
            # Only the graphs named above can have changed side: re-decide those alone.
            owned = (
                graphs.experiment_graph(self._base, iris.experiment_id_of(e.value))
                for e in experiments
            )
            for name in {g.value for g in (*touched, *named, *owned)}:
                if self.is_public(name):
                    self._public_now.add(name)
                else:
                    self._public_now.discard(name)
            self.version += 1
        return changed

    def is_public(self, graph: str) -> bool:
        """Return whether anonymous readers may see the named graph ``graph`` (an IRI)."""
        return graph in self._graphs and graphs.is_public_graph(
            self._base, graph, self._private, self._catalogued
        )

    def public_names(self) -> frozenset[str]:
        """Return the IRIs of the graphs anonymous readers may see (computed once per version)."""
        if self._public[0] != self.version:
            self._public = (self.version, frozenset(self._public_now))
        return self._public[1]

    def public_graphs(self) -> list[NamedNode]:
        """Return the graphs anonymous readers may see, sorted."""
        return [NamedNode(g) for g in sorted(self.public_names())]

    def private(self) -> tuple[PrivateExperiment, ...]:
        """Return the private experiments, by id."""
        return tuple(sorted(self._private.values(), key=lambda p: p.experiment_id))

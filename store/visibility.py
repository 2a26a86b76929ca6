"""Which named graphs a reader may see: public graphs, plus private experiments opened by a token.

The private admin graph (``store.graphs.admin_graph``) states, per experiment IRI,
``qab:published`` (``xsd:boolean``) and ``qab:accessTokenHash`` (SHA-256 hex of the owner's
token). An experiment whose ``qab:published`` is false is private: its graph is hidden unless
the request presents a token whose hash matches. This module computes graph lists only; it
never evaluates user queries and never reads HTTP requests.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote

from pyoxigraph import Literal, NamedNode

from store import graphs, queries
from store.protocol import RdfStore


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


def _experiment_id(iri: NamedNode) -> str:
    return unquote(iri.value.rstrip("/").rsplit("/", 1)[-1])


def _is_false(term: object) -> bool:
    return isinstance(term, Literal) and term.value.strip().lower() in ("false", "0")


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
        found = hashes.setdefault(_experiment_id(experiment), set())
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
    public = graphs.public_graphs(base, store.graphs(), {p.experiment_id for p in private})
    return public + unlocked(private, tokens)

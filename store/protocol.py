"""`RdfStore`: the store interface the rest of qabench codes against.

Two implementations satisfy it structurally: ``store.triplestore.TripleStore`` (the embedded
Oxigraph store) and ``store.remote.RemoteStore`` (an external SPARQL 1.1 Protocol + Update +
Graph Store Protocol server). This module only declares the role; it opens nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Protocol

from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, RdfFormat

from store.changes import ChangeLog
from store.layouts import PAGE_QUADS, GraphLayout
from store.triplestore import QueryResult

Term = NamedNode | BlankNode | Literal
GraphName = NamedNode | DefaultGraph


class RdfStore(Protocol):
    """What pages, experiments and commands need from a quad store."""

    # Set by a follower to learn of every committed write (``store.changes``); None otherwise.
    changes: ChangeLog | None

    def query(
        self,
        sparql: str,
        *,
        substitutions: Mapping[str, Term] | None = None,
        default_graph: list[GraphName] | None = None,
        named_graphs: list[NamedNode] | None = None,
        union_default_graph: bool = False,
        base_iri: str | None = None,
    ) -> QueryResult:
        """Evaluate a SPARQL query (``QuerySyntaxError`` if it does not parse)."""
        ...

    def select(self, sparql: str, **substitutions: Term) -> list[dict[str, Term]]:
        """Run a SELECT over the union of all graphs; rows map variable names to terms."""
        ...

    def ask(self, sparql: str, **substitutions: Term) -> bool:
        """Run an ASK over the union of all graphs."""
        ...

    def quads(
        self,
        subject: NamedNode | BlankNode | None = None,
        predicate: NamedNode | None = None,
        obj: Term | None = None,
        graph: GraphName | None = None,
    ) -> Iterator[Quad]:
        """Iterate the quads matching a pattern (``None`` is a wildcard)."""
        ...

    def layout(self, graph: NamedNode, page_quads: int = PAGE_QUADS) -> GraphLayout:
        """Return the page layout of ``graph`` (``store.layouts``)."""
        ...

    def snapshot(self, graphs: Iterable[NamedNode] | None = None) -> list[Quad]:
        """Return all quads (or those of ``graphs``) in a canonical order."""
        ...

    def graphs(self) -> list[NamedNode]:
        """Return every named graph."""
        ...

    def has_graph(self, graph: NamedNode) -> bool:
        """Return whether the named graph exists."""
        ...

    def add(self, quads: Iterable[Quad]) -> None:
        """Add quads in one transaction."""
        ...

    def apply(self, remove: Iterable[Quad] = (), add: Iterable[Quad] = ()) -> None:
        """Remove then add quads in one transaction."""
        ...

    def update(self, sparql_update: str) -> None:
        """Run a SPARQL update in one transaction."""
        ...

    def replace_graph(self, graph: NamedNode, quads: Iterable[Quad]) -> None:
        """Replace the content of ``graph`` with ``quads`` in one transaction."""
        ...

    def drop_graphs(self, graphs: Iterable[NamedNode]) -> None:
        """Remove whole named graphs in one transaction."""
        ...

    def load(
        self,
        data: bytes | IO[bytes],
        rdf_format: RdfFormat,
        *,
        graph: NamedNode | None = None,
        base_iri: str | None = None,
    ) -> None:
        """Parse and add RDF in one transaction."""
        ...

    def bulk_load(
        self,
        source: Path | IO[bytes],
        rdf_format: RdfFormat,
        *,
        graph: NamedNode,
        base_iri: str | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        """Load a large file into a fresh ``graph`` as fast as the store can (maybe not atomic);
        ``progress`` is called with the bytes of a file read, as reading goes on."""
        ...

    def bulk_add(self, quads: Iterable[Quad]) -> None:
        """Add many quads to fresh graphs as fast as the store can (maybe not atomic)."""
        ...

    def dump(
        self,
        output: IO[bytes] | Path,
        rdf_format: RdfFormat = RdfFormat.N_QUADS,
        *,
        graphs: Iterable[NamedNode] | None = None,
    ) -> int:
        """Write all quads (or those of ``graphs``) and return how many were written."""
        ...

    def close(self) -> None:
        """Release the store."""
        ...

    def __len__(self) -> int:
        """Return the number of quads."""
        ...

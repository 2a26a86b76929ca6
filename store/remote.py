"""`RemoteStore`: the ``RdfStore`` role over an external SPARQL 1.1 server (Protocol, Update, GSP).

For deployments that outgrow one machine: Oxigraph server, Fuseki, Virtuoso or QLever behind
three URLs (query, update, Graph Store Protocol). Results come back as SPARQL JSON (SELECT/ASK)
or N-Triples (CONSTRUCT/DESCRIBE) and are turned into the same pyoxigraph values the embedded
store returns. Differences a caller may notice: ``substitutions`` are sent as a trailing
``VALUES`` clause (the variable must be projected, as with the embedded store), and the union
default graph is requested by naming every graph with ``default-graph-uri`` (and, as the
protocol would otherwise empty them, the named graphs with ``named-graph-uri``). Writes are SPARQL
updates (one request each, so one transaction on servers that make updates atomic).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO

import httpx
from pyoxigraph import (
    BlankNode,
    DefaultGraph,
    NamedNode,
    Quad,
    QueryBoolean,
    QueryResultsFormat,
    QuerySolutions,
    RdfFormat,
    Store,
    Variable,
    parse,
    parse_query_results,
    serialize,
)

from store.errors import QuerySyntaxError, RdfSyntaxError, RemoteStoreError, StoreError
from store.formats import write_quads
from store.protocol import GraphName, Term
from store.triplestore import QueryResult, _position, _quad_text

_ACCEPT = "application/sparql-results+json, application/n-triples;q=0.9"
_UPDATE_CHUNK = 2000


def _values(substitutions: Mapping[str, Term]) -> str:
    names = " ".join(str(Variable(k)) for k in substitutions)
    row = " ".join(str(v) for v in substitutions.values())
    return f"\nVALUES ({names}) {{ ({row}) }}"


class RemoteStore:
    """A store reached over HTTP; satisfies ``store.protocol.RdfStore``."""

    def __init__(
        self,
        query_url: str,
        update_url: str,
        store_url: str = "",
        *,
        timeout: float = 60.0,
        client: httpx.Client | None = None,
    ) -> None:
        self.query_url = query_url
        self.update_url = update_url
        self.store_url = store_url
        self._client = client or httpx.Client(timeout=timeout)

    # ------------------------------------------------------------------ reading
    def _post_query(
        self, sparql: str, params: list[tuple[str, str | int | float | bool | None]]
    ) -> httpx.Response:
        try:
            response = self._client.post(
                self.query_url,
                params=params,
                content=sparql.encode("utf-8"),
                headers={"Content-Type": "application/sparql-query", "Accept": _ACCEPT},
            )
        except httpx.HTTPError as exc:
            raise RemoteStoreError(f"Cannot reach {self.query_url}: {exc}") from exc
        if response.status_code == 400:
            line, column = _position(response.text)
            raise QuerySyntaxError(f"Malformed SPARQL: {response.text[:500]}", line, column)
        if response.status_code >= 300:
            raise RemoteStoreError(
                f"{self.query_url} answered {response.status_code}: {response.text[:300]}"
            )
        return response

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
        """Evaluate a SPARQL query on the remote server.

        Raises:
            QuerySyntaxError: if the server reports a malformed query (400).
            RemoteStoreError: if the server cannot be reached or fails.
        """
        if substitutions:
            sparql += _values(substitutions)
        if base_iri:
            sparql = f"BASE {NamedNode(base_iri)}\n{sparql}"
        if (union_default_graph and default_graph is None) or (
            default_graph is not None and named_graphs is None
        ):
            # The protocol empties the named graphs when only default-graph-uri is given, and
            # has no union default graph: name every graph to match the embedded store.
            every = self.graphs()
            if default_graph is None:
                default_graph = list(every)
            named_graphs = every
        params: list[tuple[str, str | int | float | bool | None]] = [
            ("default-graph-uri", g.value) for g in default_graph or [] if isinstance(g, NamedNode)
        ]
        params += [("named-graph-uri", g.value) for g in named_graphs or []]
        response = self._post_query(sparql, params)
        media = response.headers.get("Content-Type", "").split(";")[0].strip()
        if media in ("application/sparql-results+json", "application/json"):
            return parse_query_results(response.content, QueryResultsFormat.JSON)
        # A graph result: give callers the same QueryTriples type the embedded store returns.
        scratch = Store()
        scratch.load(response.content, RdfFormat.N_TRIPLES)
        return scratch.query("CONSTRUCT WHERE { ?s ?p ?o }")

    def select(self, sparql: str, **substitutions: Term) -> list[dict[str, Term]]:
        """Run a SELECT over the union of all graphs; rows map variable names to terms."""
        result = self.query(sparql, substitutions=substitutions, union_default_graph=True)
        if not isinstance(result, QuerySolutions):
            raise StoreError("select() needs a SELECT query")
        names = [v.value for v in result.variables]
        return [{n: s[n] for n in names if s[n] is not None} for s in result]

    def ask(self, sparql: str, **substitutions: Term) -> bool:
        """Run an ASK over the union of all graphs."""
        result = self.query(sparql, substitutions=substitutions, union_default_graph=True)
        if not isinstance(result, QueryBoolean):
            raise StoreError("ask() needs an ASK query")
        return bool(result)

    def quads(
        self,
        subject: NamedNode | BlankNode | None = None,
        predicate: NamedNode | None = None,
        obj: Term | None = None,
        graph: GraphName | None = None,
    ) -> Iterator[Quad]:
        """Iterate the quads matching a pattern (``None`` is a wildcard)."""
        s = str(subject) if subject is not None else "?s"
        p = str(predicate) if predicate is not None else "?p"
        o = str(obj) if obj is not None else "?o"
        if isinstance(graph, DefaultGraph):
            text = f"SELECT ?s ?p ?o WHERE {{ {s} {p} {o} }}"
        else:
            g = str(graph) if graph is not None else "?g"
            text = f"SELECT ?s ?p ?o ?g WHERE {{ GRAPH {g} {{ {s} {p} {o} }} }}"
        result = self.query(text)
        assert isinstance(result, QuerySolutions)
        for row in result:
            yield Quad(
                subject if subject is not None else row["s"],
                predicate if predicate is not None else row["p"],
                obj if obj is not None else row["o"],
                graph if graph is not None else row["g"],
            )

    def snapshot(self, graphs: Iterable[NamedNode] | None = None) -> list[Quad]:
        """Return all quads of the named graphs (or of ``graphs``) in a canonical order."""
        if graphs is None:
            quads = list(self.quads())
        else:
            quads = [q for g in graphs for q in self.quads(graph=g)]
        return sorted(quads, key=str)

    def graphs(self) -> list[NamedNode]:
        """Return every named graph."""
        result = self.query("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")
        assert isinstance(result, QuerySolutions)
        return [row["g"] for row in result if isinstance(row["g"], NamedNode)]

    def has_graph(self, graph: NamedNode) -> bool:
        """Return whether the named graph exists (holds at least one quad)."""
        return bool(self.query(f"ASK {{ GRAPH {graph} {{ ?s ?p ?o }} }}"))

    def __len__(self) -> int:
        result = self.query("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }")
        assert isinstance(result, QuerySolutions)
        return int(next(iter(result))["n"].value)

    # ------------------------------------------------------------------ writing
    def update(self, sparql_update: str) -> None:
        """Run a SPARQL update on the remote server.

        Raises:
            QuerySyntaxError: if the server reports a malformed update (400).
            RemoteStoreError: if the server cannot be reached or fails.
        """
        try:
            response = self._client.post(
                self.update_url,
                content=sparql_update.encode("utf-8"),
                headers={"Content-Type": "application/sparql-update"},
            )
        except httpx.HTTPError as exc:
            raise RemoteStoreError(f"Cannot reach {self.update_url}: {exc}") from exc
        if response.status_code == 400:
            line, column = _position(response.text)
            raise QuerySyntaxError(f"Malformed SPARQL update: {response.text[:500]}", line, column)
        if response.status_code >= 300:
            raise RemoteStoreError(
                f"{self.update_url} answered {response.status_code}: {response.text[:300]}"
            )

    def add(self, quads: Iterable[Quad]) -> None:
        """Add quads with one update request."""
        self.apply(add=quads)

    def apply(self, remove: Iterable[Quad] = (), add: Iterable[Quad] = ()) -> None:
        """Remove then add quads with one update request (blank nodes cannot be removed)."""
        parts: list[str] = []
        for keyword, quads in (("DELETE DATA", list(remove)), ("INSERT DATA", list(add))):
            for start in range(0, len(quads), _UPDATE_CHUNK):
                body = "\n".join(_quad_text(q) for q in quads[start : start + _UPDATE_CHUNK])
                parts.append(f"{keyword} {{\n{body}\n}}")
        if parts:
            self.update(" ;\n".join(parts))

    def replace_graph(self, graph: NamedNode, quads: Iterable[Quad]) -> None:
        """Replace the content of ``graph`` with ``quads`` in one update request."""
        new = [Quad(q.subject, q.predicate, q.object, graph) for q in quads]
        parts = [f"DROP SILENT GRAPH {graph}"]
        for start in range(0, len(new), _UPDATE_CHUNK):
            body = "\n".join(_quad_text(q) for q in new[start : start + _UPDATE_CHUNK])
            parts.append(f"INSERT DATA {{\n{body}\n}}")
        self.update(" ;\n".join(parts))

    def drop_graphs(self, graphs: Iterable[NamedNode]) -> None:
        """Remove whole named graphs with one update request."""
        statements = [f"DROP SILENT GRAPH {g}" for g in graphs]
        if statements:
            self.update(" ;\n".join(statements))

    def load(
        self,
        data: bytes | IO[bytes],
        rdf_format: RdfFormat,
        *,
        graph: NamedNode | None = None,
        base_iri: str | None = None,
    ) -> None:
        """Parse RDF locally (so syntax errors surface here) and add it in one update."""
        raw = data if isinstance(data, bytes) else data.read()
        try:
            parsed = list(parse(raw, rdf_format, base_iri=base_iri))
        except SyntaxError as exc:
            line, column = _position(str(exc))
            raise RdfSyntaxError(f"Malformed RDF: {exc}", line, column) from exc
        if self.store_url and graph is not None and not rdf_format.supports_datasets:
            # Graph Store Protocol: POST merges the triples into the named graph.
            self._gsp_post(graph, serialize(parsed, format=RdfFormat.N_TRIPLES) or b"")
            return
        quads = [
            Quad(t.subject, t.predicate, t.object, graph or DefaultGraph())
            if not isinstance(t, Quad)
            else t
            for t in parsed
        ]
        self.add(quads)

    def _gsp_post(self, graph: NamedNode, ntriples: bytes) -> None:
        try:
            response = self._client.post(
                self.store_url,
                params={"graph": graph.value},
                content=ntriples,
                headers={"Content-Type": "application/n-triples"},
            )
        except httpx.HTTPError as exc:
            raise RemoteStoreError(f"Cannot reach {self.store_url}: {exc}") from exc
        if response.status_code >= 300:
            raise RemoteStoreError(
                f"{self.store_url} answered {response.status_code}: {response.text[:300]}"
            )

    def dump(
        self,
        output: IO[bytes] | Path,
        rdf_format: RdfFormat = RdfFormat.N_QUADS,
        *,
        graphs: Iterable[NamedNode] | None = None,
    ) -> int:
        """Write the named graphs (or only ``graphs``) and return the number of quads."""
        return write_quads(self.snapshot(graphs), output, rdf_format)

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()

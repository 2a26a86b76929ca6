"""`RemoteStore`: the ``RdfStore`` role over an external SPARQL 1.1 server (Protocol, Update, GSP).

For deployments that outgrow one machine: Oxigraph server or Virtuoso (both tested; Fuseki and
QLever speak the same protocols) behind three URLs (query, update, Graph Store Protocol).
Results come back as SPARQL JSON (SELECT/ASK) or N-Triples (CONSTRUCT/DESCRIBE) and are turned
into the same pyoxigraph values the embedded store returns (``store.wire`` smooths over engine
deviations; an answer the engine flags as cut short raises ``RemoteStoreError``).

Differences a caller may notice: ``substitutions`` are sent as a trailing ``VALUES`` clause (the
variable must be projected, as with the embedded store), and the union default graph is
requested by naming every graph with ``default-graph-uri`` (and, as the protocol would otherwise
empty them, the named graphs with ``named-graph-uri``). With ``graph_prefix`` the store sees only
the graphs whose IRI starts with it (an engine shared with other data, engine-internal graphs);
Virtuoso's own graphs are never listed.

``SparqlClient`` is the one SPARQL-over-HTTP client: the store's own requests and the queries
that knowledge-base lookups and systems send to an endpoint (``fetch_results``, for
``evaluators.knowledge``: by GET, then once by POST) are its exchanges, each within one
deadline and a byte cap, the body read as it streams.

Atomicity: every write is one HTTP request. Servers that run a request in one transaction
(Oxigraph) make every write all-or-nothing. Virtuoso commits each *operation* of a request on
its own, so writes are shaped to fail safely there: ``add`` is one operation, and when an
``apply`` (a removal, then an addition) is refused after its removal ran, the removed quads are
put back (docs/virtuoso.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, NamedTuple

import httpx
from pyoxigraph import (
    BlankNode,
    DefaultGraph,
    NamedNode,
    Quad,
    QueryBoolean,
    QuerySolutions,
    RdfFormat,
    Store,
    Variable,
    parse,
    serialize,
)

from store import wire
from store.changes import Change, ChangeLog
from store.errors import (
    QuerySyntaxError,
    RdfSyntaxError,
    RemoteStoreError,
    RemoteWriteRefusedError,
    StoreError,
)
from store.formats import write_quads, xml_checked
from store.layouts import PAGE_QUADS, GraphLayout, count_subjects, in_memory
from store.protocol import GraphName, Term
from store.triplestore import QueryResult, _position

_RESULTS = "application/sparql-results+json"
# Bytes one reply of a remote store may hold (a whole graph's snapshot comes in one).
REMOTE_MAX_BYTES = 1 << 30
_TRIPLES = "application/n-triples"
# Virtuoso's authenticated endpoint compiles update constants into SQL text (it prepends
# ``define sql:big-data-const 0``), which caps one operation at about 1,200 quads; this pragma
# (Virtuoso's own syntax, sent to Virtuoso only) passes them as data again.
VIRTUOSO_UPDATE_PRAGMA = "DEFINE sql:big-data-const 1\n"
VIRTUOSO = "virtuoso"
# Named as the only graph of a query whose dataset must be empty (the protocol has no other way
# to say so: without any graph parameter the engine picks its whole store).
_NO_GRAPH = "urn:x-qabench:no-graph"
_UNKNOWN = (
    "; a write sent this way may or may not have taken effect (on Virtuoso each operation "
    "either did or did not)"
)
# Graphs Virtuoso keeps for itself in the quad store (its schema, LDP, URIQA): never ours.
ENGINE_GRAPHS = frozenset(
    {
        "http://www.openlinksw.com/schemas/virtrdf#",
        "http://www.w3.org/ns/ldp#",
        "http://localuriqaserver/sparql",
    }
)


def _values(substitutions: Mapping[str, Term]) -> str:
    names = " ".join(str(Variable(k)) for k in substitutions)
    row = " ".join(wire.term_text(v) or "UNDEF" for v in substitutions.values())
    return f"\nVALUES ({names}) {{ ({row}) }}"


class RemoteStore:
    """A store reached over HTTP; satisfies ``store.protocol.RdfStore``."""

    def __init__(
        self,
        query_url: str,
        update_url: str,
        store_url: str = "",
        *,
        user: str = "",
        password: str = "",
        graph_prefix: str = "",
        engine: str = "",
        timeout: float = 60.0,
        max_bytes: int = REMOTE_MAX_BYTES,
        client: httpx.Client | None = None,
    ) -> None:
        """Reach a SPARQL server at three URLs.

        Args:
            query_url: the SPARQL 1.1 Protocol query endpoint.
            update_url: the SPARQL 1.1 Update endpoint.
            store_url: the Graph Store Protocol endpoint (empty: loads go through updates).
            user: user for HTTP digest authentication (empty: none), e.g. Virtuoso's
                ``/sparql-auth``.
            password: that user's password.
            graph_prefix: see only graphs whose IRI starts with this (empty: every graph).
            engine: ``virtuoso`` to use Virtuoso's update pragma, ``sparql`` for none; empty
                (the default) reads it from the server's ``Server`` header.
            timeout: seconds one request may take (the whole exchange, not each read).
            max_bytes: bytes a reply may hold (a larger one is refused as it streams).
            client: an HTTP client to use instead of a new one.
        """
        self.query_url = query_url
        self.update_url = update_url
        self.store_url = store_url
        self.graph_prefix = graph_prefix
        self.engine = engine
        self._http = SparqlClient(
            timeout=timeout, max_bytes=max_bytes, user=user, password=password, client=client
        )
        # Set by a follower (the server's public mirror) to learn of every committed write.
        self.changes: ChangeLog | None = None

    def _record(self, change: Change) -> None:
        if self.changes is not None:
            self.changes.record(change)

    # ------------------------------------------------------------------ reading
    def _post(
        self,
        url: str,
        *,
        data: dict[str, str | list[str]] | None = None,
        content: bytes | None = None,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        try:
            response = self._http.send(
                "POST", url, data=data, content=content, params=params, headers=headers
            )
        except EndpointFailure as exc:
            raise RemoteStoreError(f"{exc}{_UNKNOWN}") from exc
        except httpx.ConnectError as exc:
            raise RemoteStoreError(f"Cannot reach {url}: {exc}") from exc
        except httpx.TimeoutException as exc:
            raise RemoteStoreError(f"{url} did not answer in time ({exc}){_UNKNOWN}") from exc
        except httpx.HTTPError as exc:
            raise RemoteStoreError(f"{url} broke off the exchange ({exc}){_UNKNOWN}") from exc
        if not self.engine:
            self.engine = wire.engine_of(response.headers) or "sparql"
        return response

    def _results(
        self, sparql: str, default_graph: list[str], named_graphs: list[str]
    ) -> QueryResult:
        form_of_query = wire.query_form(sparql)
        lexical: list[str] = []
        if form_of_query == "SELECT" and self._is_virtuoso():
            sparql, lexical = wire.with_lexical_forms(sparql)
        # The protocol's form-encoded POST: every engine accepts it (Virtuoso 7.2 never answers
        # a POST whose body is the bare query).
        form: dict[str, str | list[str]] = {"query": sparql}
        if default_graph:
            form["default-graph-uri"] = default_graph
        if named_graphs:
            form["named-graph-uri"] = named_graphs
        graph_result = form_of_query in ("CONSTRUCT", "DESCRIBE")
        accept = _TRIPLES if graph_result else _RESULTS
        response = self._post(self.query_url, data=form, headers={"Accept": accept})
        if response.status_code == 400:
            line, column = _position(response.text)
            raise QuerySyntaxError(f"Malformed SPARQL: {response.text[:500]}", line, column)
        if response.status_code >= 300:
            raise RemoteStoreError(
                f"{self.query_url} answered {response.status_code}: {response.text[:300]}"
            )
        cut = wire.incomplete(response.headers)
        if cut:
            raise RemoteStoreError(f"{self.query_url} returned incomplete results: {cut}")
        media = response.headers.get("Content-Type", "").split(";")[0].strip()
        if media in (_RESULTS, "application/json"):
            return wire.parse_json_results(response.content, lexical)
        # A graph result: give callers the same QueryTriples type the embedded store returns.
        scratch = Store()
        try:
            scratch.load(response.content, RdfFormat.N_TRIPLES)
        except SyntaxError as exc:
            raise RemoteStoreError(f"{self.query_url} sent unreadable N-Triples: {exc}") from exc
        return scratch.query("CONSTRUCT WHERE { ?s ?p ?o }")

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

        On Virtuoso a SELECT whose projection is a list of variables also asks for their STR(),
        so that doubles come back exact (its result writers round them).

        Raises:
            QuerySyntaxError: if the server reports a malformed query (400).
            RemoteStoreError: if the server cannot be reached, fails or cuts the result short.
        """
        if substitutions:
            sparql += _values(substitutions)
        if base_iri:
            sparql = f"BASE {NamedNode(base_iri)}\n{sparql}"
        if named_graphs is None:
            # The protocol empties the named graphs when only default-graph-uri is given, has no
            # union default graph, and without any graph parameter lets the engine pick its
            # whole store (Virtuoso: every graph, its own included, as the default graph): name
            # every graph this store sees, to match the embedded store.
            named_graphs = self.graphs()
            if union_default_graph and default_graph is None:
                default_graph = list(named_graphs)
        default = [g.value for g in default_graph or [] if isinstance(g, NamedNode)]
        named = [g.value for g in named_graphs]
        return self._results(sparql, default, named or ([] if default else [_NO_GRAPH]))

    def _select(self, sparql: str) -> QuerySolutions:
        # Our own SELECTs over GRAPH ?g with the graph filter: the engine's whole store.
        result = self._results(sparql, [], [])
        assert isinstance(result, QuerySolutions)
        return result

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

    def _sees(self, graph: NamedNode) -> bool:
        return graph.value.startswith(self.graph_prefix) and graph.value not in ENGINE_GRAPHS

    def _graph_filter(self) -> str:
        hidden = ", ".join(f"<{g}>" for g in sorted(ENGINE_GRAPHS))
        text = f"FILTER (?g NOT IN ({hidden}))"
        if self.graph_prefix:
            prefix = wire.term_text(NamedNode(self.graph_prefix))
            text += f"\nFILTER (STRSTARTS(STR(?g), STR({prefix})))"
        return text

    def quads(
        self,
        subject: NamedNode | BlankNode | None = None,
        predicate: NamedNode | None = None,
        obj: Term | None = None,
        graph: GraphName | None = None,
    ) -> Iterator[Quad]:
        """Iterate the quads matching a pattern (``None`` is a wildcard).

        A blank node no query can name (one read from another store) matches nothing.
        """
        s = wire.term_text(subject) if subject is not None else "?s"
        p = str(predicate) if predicate is not None else "?p"
        o = wire.term_text(obj) if obj is not None else "?o"
        if s is None or o is None or (isinstance(graph, NamedNode) and not self._sees(graph)):
            return
        if isinstance(graph, DefaultGraph):
            text = f"SELECT ?s ?p ?o WHERE {{ {s} {p} {o} }}"
        elif graph is not None:
            text = f"SELECT ?s ?p ?o WHERE {{ GRAPH {graph} {{ {s} {p} {o} }} }}"
        else:
            text = (
                f"SELECT ?s ?p ?o ?g WHERE {{ GRAPH ?g {{ {s} {p} {o} }}\n{self._graph_filter()} }}"
            )
        for row in self._select(text):
            yield Quad(
                subject if subject is not None else row["s"],
                predicate if predicate is not None else row["p"],
                obj if obj is not None else row["o"],
                graph if graph is not None else row["g"],
            )

    def layout(self, graph: NamedNode, page_quads: int = PAGE_QUADS) -> GraphLayout:
        """Return the page layout of ``graph``, made now (the engine counts, in memory here)."""
        return in_memory(count_subjects(self, graph), page_quads)

    def snapshot(self, graphs: Iterable[NamedNode] | None = None) -> list[Quad]:
        """Return all quads of the named graphs (or of ``graphs``) in a canonical order."""
        if graphs is None:
            quads = list(self.quads())
        else:
            quads = [q for g in graphs for q in self.quads(graph=g)]
        return sorted(quads, key=str)

    def graphs(self) -> list[NamedNode]:
        """Return every named graph this store sees."""
        rows = self._select(
            f"SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ ?s ?p ?o }}\n{self._graph_filter()} }}"
        )
        return [row["g"] for row in rows if isinstance(row["g"], NamedNode)]

    def has_graph(self, graph: NamedNode) -> bool:
        """Return whether the named graph exists (holds at least one quad)."""
        if not self._sees(graph):
            return False
        text = f"SELECT ?s WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }} LIMIT 1"
        return any(True for _ in self._select(text))

    def __len__(self) -> int:
        result = self.query(
            f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH ?g {{ ?s ?p ?o }}\n{self._graph_filter()} }}"
        )
        assert isinstance(result, QuerySolutions)
        return int(next(iter(result))["n"].value)

    # ------------------------------------------------------------------ writing
    def _send_update(self, text: str, *, ours: bool) -> None:
        if ours and self._is_virtuoso():
            text = VIRTUOSO_UPDATE_PRAGMA + text
        response = self._post(
            self.update_url,
            content=text.encode("utf-8"),
            headers={"Content-Type": "application/sparql-update"},
        )
        if response.status_code == 400 and not ours:
            line, column = _position(response.text)
            raise QuerySyntaxError(f"Malformed SPARQL update: {response.text[:500]}", line, column)
        if response.status_code >= 300:
            raise RemoteWriteRefusedError(
                f"{self.update_url} refused the write ({response.status_code}): "
                f"{response.text[:300]}"
            )

    def _is_virtuoso(self) -> bool:
        if not self.engine:
            self._post(self.query_url, data={"query": "ASK {}"})
        return self.engine == VIRTUOSO

    def update(self, sparql_update: str) -> None:
        """Run a SPARQL update on the remote server, as one request.

        Virtuoso commits each operation of a request on its own: a request of several
        operations that fails part-way keeps the operations before the failing one.

        Raises:
            QuerySyntaxError: if the server reports a malformed update (400).
            RemoteStoreError: if the server cannot be reached or fails.
        """
        self._send_update(sparql_update, ours=False)
        self._record(Change(everything=True))

    def add(self, quads: Iterable[Quad]) -> None:
        """Add quads with one update operation (all or nothing on every engine).

        Raises:
            RemoteStoreError: if the server refuses the write; nothing is written then.
        """
        new = list(dict.fromkeys(quads))
        if not new:
            return
        if any(isinstance(t, BlankNode) for q in new for t in (q.subject, q.object)):
            # New blank nodes: a template (INSERT DATA may not hold them on Virtuoso).
            self._send_update(
                f"INSERT {{\n{wire.block(new, fresh_blank_nodes=True)}\n}} WHERE {{}}", ours=True
            )
            # The server names the blank nodes: followers re-read the graphs.
            touched = {q.graph_name for q in new if isinstance(q.graph_name, NamedNode)}
            self._record(Change(graphs=tuple(sorted(touched, key=str))))
            return
        self._send_update(f"INSERT DATA {{\n{wire.block(new)}\n}}", ours=True)
        self._record(Change(added=tuple(new)))

    def apply(self, remove: Iterable[Quad] = (), add: Iterable[Quad] = ()) -> None:
        """Remove then add quads with one request (blank nodes cannot be removed).

        A ``DELETE DATA`` then an ``INSERT DATA``: the engine decides which stored quads the
        removed ones are (a dateTime written with ``+00:00`` is stored as the one with ``Z``),
        as in the embedded store. (Not one ``DELETE … INSERT … WHERE {}``: Virtuoso 7.2 runs its
        insertion before its deletion, so a value in both would be lost.) An engine that commits
        operation by operation (Virtuoso) may have removed the old quads when it refuses the
        insertion, so after a refusal the old quads are added again; on an engine that ran the
        request as one transaction they are still there, and adding them changes nothing.

        Raises:
            RemoteStoreError: if the server refuses the write; the store is then as it was,
                unless the message says that putting the old quads back failed too.
        """
        new = list(dict.fromkeys(add))
        fresh = set(new)
        old = [q for q in dict.fromkeys(remove) if q not in fresh]
        if not old:
            self.add(new)
            return
        text = f"DELETE DATA {{\n{wire.block(old)}\n}}"
        if new:
            text += f" ;\nINSERT DATA {{\n{wire.block(new)}\n}}"
        try:
            self._send_update(text, ours=True)
        except RemoteWriteRefusedError as refused:
            if not new:
                raise
            try:
                self.add(old)
            except RemoteStoreError as exc:
                raise RemoteStoreError(
                    f"{refused}; putting back the {len(old)} quads it may have removed failed "
                    f"too, so they may be missing: {exc}"
                ) from exc
            raise
        self._record(Change(added=tuple(new), removed=tuple(old)))

    def replace_graph(self, graph: NamedNode, quads: Iterable[Quad]) -> None:
        """Replace the content of ``graph`` with ``quads`` (``apply`` of old and new)."""
        new = [Quad(q.subject, q.predicate, q.object, graph) for q in quads]
        self.apply(remove=list(self.quads(graph=graph)), add=new)

    def drop_graphs(self, graphs: Iterable[NamedNode]) -> None:
        """Remove whole named graphs with one request (on Virtuoso, graph by graph)."""
        dropped = list(graphs)
        statements = [f"DROP SILENT GRAPH {g}" for g in dropped]
        if statements:
            self._send_update(" ;\n".join(statements), ours=True)
            self._record(Change(graphs=tuple(dropped)))

    def load(
        self,
        data: bytes | IO[bytes],
        rdf_format: RdfFormat,
        *,
        graph: NamedNode | None = None,
        base_iri: str | None = None,
    ) -> None:
        """Parse RDF locally (so syntax errors surface here), then add it with one request.

        Triples bound for a named graph go to the Graph Store Protocol endpoint when there is
        one (one POST of N-Triples, blank nodes included); anything else is ``add``.

        Raises:
            RdfSyntaxError: if the input does not parse; nothing is sent then.
            RemoteStoreError: if the server refuses the write.
        """
        raw = data if isinstance(data, bytes) else data.read()
        if rdf_format == RdfFormat.RDF_XML:
            xml_checked(raw)
        try:
            parsed = list(parse(raw, rdf_format, base_iri=base_iri))
        except SyntaxError as exc:
            line, column = _position(str(exc))
            raise RdfSyntaxError(f"Malformed RDF: {exc}", line, column) from exc
        if self.store_url and graph is not None and not rdf_format.supports_datasets:
            # Graph Store Protocol: POST merges the triples into the named graph.
            self._gsp_post(graph, serialize(parsed, format=RdfFormat.N_TRIPLES) or b"")
            self._record(Change(graphs=(graph,)))
            return
        quads = [
            Quad(t.subject, t.predicate, t.object, graph or DefaultGraph())
            if not isinstance(t, Quad)
            else t
            for t in parsed
        ]
        self.add(quads)

    def bulk_load(
        self,
        source: Path | IO[bytes],
        rdf_format: RdfFormat,
        *,
        graph: NamedNode,
        base_iri: str | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        """Load a file into ``graph`` (the remote server has no faster path than ``load``)."""
        data = source.read_bytes() if isinstance(source, Path) else source.read()
        if progress is not None and isinstance(source, Path):
            progress(len(data))
        self.load(data, rdf_format, graph=graph, base_iri=base_iri)

    def bulk_add(self, quads: Iterable[Quad]) -> None:
        """Add many quads (``add``)."""
        self.add(quads)

    def _gsp_post(self, graph: NamedNode, ntriples: bytes) -> None:
        response = self._post(
            self.store_url,
            params={"graph": graph.value},
            content=ntriples,
            headers={"Content-Type": "application/n-triples"},
        )
        if response.status_code >= 300:
            raise RemoteStoreError(
                f"{self.store_url} refused the load ({response.status_code}): {response.text[:300]}"
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
        self._http.close()


class EndpointFailure(RemoteStoreError):
    """A SPARQL endpoint did not give results (``final``: no other method would help)."""

    def __init__(self, message: str, *, final: bool = False) -> None:
        super().__init__(message)
        self.final = final


RESULTS_JSON = "application/sparql-results+json"


class Reply(NamedTuple):
    """What a server answered: status, headers and the whole body."""

    status_code: int
    headers: httpx.Headers
    content: bytes

    @property
    def text(self) -> str:
        """Return the body as text (bytes that are no UTF-8 replaced)."""
        return self.content.decode("utf-8", "replace")


class SparqlClient:
    """The one SPARQL-over-HTTP client: a remote store's queries, updates and loads, and the
    queries that knowledge-base lookups and systems send to an endpoint (``fetch_results``),
    are exchanges of ``send``: one deadline for the whole exchange (httpx's timeout bounds
    each read, so a server sending a byte now and then held a reader as long as it liked)
    and a cap on the bytes of the body, read as it streams (never more)."""

    def __init__(
        self,
        *,
        timeout: float,
        max_bytes: int,
        user: str = "",
        password: str = "",
        client: httpx.Client | None = None,
    ) -> None:
        """Exchange within ``timeout`` seconds and ``max_bytes`` of body each (HTTP digest
        authentication as ``user`` when one is given)."""
        auth = httpx.DigestAuth(user, password) if user else None
        self._client = client or httpx.Client(timeout=timeout, auth=auth)
        self.timeout = timeout
        self.max_bytes = max_bytes

    def send(
        self,
        method: str,
        url: str,
        *,
        params: dict[str, str] | None = None,
        data: dict[str, str | list[str]] | None = None,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
        deadline: float | None = None,
    ) -> Reply:
        """Send one request and return the reply, by ``deadline`` (``time.monotonic``; by
        default ``timeout`` seconds from now).

        Raises:
            EndpointFailure: (``final``) the body passed ``max_bytes`` or the deadline passed.
            httpx.HTTPError: the exchange failed (no connection, a read timed out, …).
        """
        if deadline is None:
            deadline = time.monotonic() + self.timeout
        chunks: list[bytes] = []
        total = 0
        with self._client.stream(
            method,
            url,
            params=params,
            data=data,
            content=content,
            headers=headers,
            timeout=max(0.001, deadline - time.monotonic()),
        ) as response:
            for chunk in response.iter_bytes():
                total += len(chunk)
                if total > self.max_bytes:
                    raise EndpointFailure(
                        f"the result is larger than {self.max_bytes} bytes", final=True
                    )
                if time.monotonic() > deadline:
                    raise EndpointFailure(
                        f"the query ran longer than {self.timeout:g} s", final=True
                    )
                chunks.append(chunk)
        return Reply(response.status_code, response.headers, b"".join(chunks))

    def results(
        self,
        url: str,
        query: str,
        *,
        methods: tuple[str, ...] = ("GET", "POST"),
        accept: str = RESULTS_JSON,
    ) -> bytes:
        """Return the body an endpoint answers ``query`` with: sent by each of ``methods`` in
        turn until one succeeds (long queries, endpoints refusing GET), all by one deadline.

        Raises:
            EndpointFailure: every method failed (the last one's reason), or the result was
                too large or too slow (``final``).
        """
        deadline = time.monotonic() + self.timeout
        failure = EndpointFailure(f"no method to ask {url}")
        for method in methods:
            form = {"query": query}
            try:
                reply = self.send(
                    method,
                    url,
                    params=form if method == "GET" else None,
                    data=dict(form) if method != "GET" else None,
                    headers={"Accept": accept},
                    deadline=deadline,
                )
            except EndpointFailure as exc:
                if exc.final:
                    raise
                failure = exc
                continue
            except (httpx.HTTPError, OSError) as exc:
                failure = EndpointFailure(f"the endpoint failed: {str(exc)[:300]}")
                continue
            if reply.status_code == 200:
                return reply.content
            failure = EndpointFailure(f"the endpoint answered HTTP {reply.status_code}")
        raise failure

    def close(self) -> None:
        """Close the connections."""
        self._client.close()

    def __enter__(self) -> SparqlClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def fetch_results(
    url: str,
    query: str,
    *,
    timeout: float,
    max_bytes: int,
    methods: tuple[str, ...] = ("GET", "POST"),
    accept: str = RESULTS_JSON,
) -> bytes:
    """Return the body a SPARQL endpoint answers ``query`` with (``SparqlClient.results``,
    within ``timeout`` seconds and ``max_bytes`` of body).

    Raises:
        EndpointFailure: every method failed, or the result was too large or too slow.
    """
    with SparqlClient(timeout=timeout, max_bytes=max_bytes) as client:
        return client.results(url, query, methods=methods, accept=accept)

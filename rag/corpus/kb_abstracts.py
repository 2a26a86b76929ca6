"""Abstracts of a knowledge base as corpus records (for QALD hybrid questions).

Reads ``dbo:abstract`` (and the resource's ``rdfs:label`` as the title) from named graphs of our
store or from a SPARQL endpoint, in one language, as ``(IRI, title, abstract)`` records for
``rag.corpus.article.articles_from_records``. The endpoint is contacted only when a user names it.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
from pyoxigraph import Literal, NamedNode, QuerySolutions

from rag.errors import RagError
from store import queries
from store.protocol import RdfStore
from store.triplestore import GraphName

DBO_ABSTRACT = "http://dbpedia.org/ontology/abstract"
PAGE = 5000


def _query(language: str) -> str:
    # Bind ?lang with a VALUES row; the language is serialised by pyoxigraph, never pasted raw.
    binding = f"WHERE {{ VALUES ?lang {{ {Literal(language)} }}"
    return queries.load("kb_abstracts").replace("WHERE {", binding, 1)


def _page(language: str, offset: int) -> str:
    return f"{_query(language)} ORDER BY ?s LIMIT {PAGE} OFFSET {offset}"


def store_abstracts(
    store: RdfStore, graphs: list[NamedNode], language: str = "en"
) -> Iterator[tuple[str, str, str]]:
    """Yield ``(IRI, label, abstract)`` for every resource with an abstract in ``graphs``."""
    default: list[GraphName] = list(graphs)
    result = store.query(_query(language), default_graph=default)
    if not isinstance(result, QuerySolutions):
        raise RagError("the abstract query did not return solutions")
    seen: set[str] = set()
    for row in result:
        subject, label, abstract = row["s"], row["label"], row["abstract"]
        if isinstance(subject, NamedNode) and abstract is not None and subject.value not in seen:
            seen.add(subject.value)
            yield subject.value, label.value if label is not None else "", abstract.value


def endpoint_abstracts(
    url: str, language: str = "en", *, timeout: float = 60.0
) -> Iterator[tuple[str, str, str]]:
    """Yield ``(IRI, label, abstract)`` from a SPARQL endpoint, page by page.

    Raises:
        RagError: if the endpoint fails or answers something else than SPARQL JSON results.
    """
    seen: set[str] = set()
    offset = 0
    while True:
        try:
            response = httpx.post(
                url,
                data={"query": _page(language, offset)},
                headers={"Accept": "application/sparql-results+json"},
                timeout=timeout,
            )
            response.raise_for_status()
            rows = response.json()["results"]["bindings"]
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            raise RagError(f"Reading abstracts from {url} failed: {exc}") from exc
        for row in rows:
            iri = row["s"]["value"]
            if iri in seen:
                continue
            seen.add(iri)
            yield iri, row.get("label", {}).get("value", ""), row["abstract"]["value"]
        if len(rows) < PAGE:
            return
        offset += PAGE

"""A remote SPARQL endpoint as a knowledge base and answer source, through the one bounded
SPARQL-over-HTTP exchange of the store (``store.remote.fetch_results``: a deadline and a byte
cap per request, JSON results only, so no XML of an endpoint's is ever parsed).

Lookups are cached per instance (never module-wide); nothing is contacted until a lookup or query
is made on an instance a caller built. Failures become ``KnowledgeBaseError``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pyoxigraph import Literal, NamedNode

from evaluators.errors import KnowledgeBaseError
from evaluators.model import AnswerSet, AnswerValue
from store.remote import EndpointFailure, fetch_results
from vocab.prefixes import KNOWLEDGE_BASES
from vocab.standard import OWL, RDFS


def is_endpoint(spec: str) -> bool:
    """Return whether a knowledge-base spec names a SPARQL endpoint (an http(s) URL), not a
    knowledge base loaded into the store (decided here alone).

    >>> is_endpoint("https://dbpedia.org/sparql"), is_endpoint("HTTP://x.test")
    (True, True)
    >>> is_endpoint("dbpedia")
    False
    """
    return spec[:8].lower().startswith(("http://", "https://"))


def with_known_prefixes(sparql: str) -> str:
    """Return ``sparql`` preceded by PREFIX lines for ``KNOWLEDGE_BASES`` (its own ones win).

    >>> with_known_prefixes("ASK { res:A ?p ?o }").endswith("ASK { res:A ?p ?o }")
    True
    """
    declared = {m.group(1) for m in re.finditer(r"(?i)\bPREFIX\s+([\w.-]*):", sparql)}
    lines = [f"PREFIX {p}: <{iri}>" for p, iri in KNOWLEDGE_BASES.items() if p not in declared]
    return "\n".join([*lines, sparql])


# JSON results are untyped dictionaries: this is the edge of what an endpoint sends.
def _json_term(binding: Mapping[str, Any]) -> AnswerValue | None:
    kind = binding.get("type")
    value = str(binding.get("value", ""))
    try:
        if kind == "uri":
            return NamedNode(value)
        if kind in ("literal", "typed-literal"):
            if binding.get("xml:lang"):
                return Literal(value, language=str(binding["xml:lang"]))
            if binding.get("datatype"):
                return Literal(value, datatype=NamedNode(str(binding["datatype"])))
            return Literal(value)
    except ValueError:
        return Literal(value)
    return None


# The column Virtuoso answers an ASK query in (see store.wire).
ASK_COLUMN = "__ASK_RETVAL"


def answer_set_from_json(document: Mapping[str, Any]) -> AnswerSet:
    """Return the answer set of a SPARQL 1.1 JSON results document.

    Raises:
        KnowledgeBaseError: if the document is neither a SELECT nor an ASK result.
    """
    if isinstance(document.get("boolean"), bool):
        return AnswerSet(boolean=document["boolean"])
    head = document.get("head") or {}
    bindings = (document.get("results") or {}).get("bindings")
    if not isinstance(bindings, list):
        raise KnowledgeBaseError("The endpoint's answer is not a SPARQL JSON result")
    names = [str(v) for v in head.get("vars", [])]
    if [n.upper() for n in names] == [ASK_COLUMN]:
        # Virtuoso answers ASK as a one-column SELECT: 1 in one row, or no row (store.wire)
        row = bindings[0] if bindings and isinstance(bindings[0], dict) else {}
        cell = row.get(names[0]) if row else None
        value = cell.get("value") if isinstance(cell, dict) else None
        return AnswerSet(boolean=value not in (None, "0", "false"))
    values: dict[AnswerValue, None] = {}
    for row in bindings:
        for name in names or list(row):
            term = _json_term(row[name]) if name in row else None
            if term is not None:
                values.setdefault(term)
    return AnswerSet(tuple(values), None, tuple(names))


class EndpointKnowledgeBase:
    """A remote SPARQL endpoint, asked by POST (JSON results); lookups are cached per instance."""

    def __init__(self, url: str, *, timeout: float = 30.0, max_bytes: int = 50 << 20) -> None:
        """Use the SPARQL endpoint at ``url`` with a per-request ``timeout`` in seconds and at
        most ``max_bytes`` of results per request."""
        self.url = url
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.requests = 0  # HTTP requests sent (cache misses)
        self._cache: dict[tuple[str, str, str], frozenset[str]] = {}

    def _json(self, sparql: str) -> Mapping[str, Any]:
        self.requests += 1
        try:
            body = fetch_results(
                self.url, sparql, timeout=self.timeout, max_bytes=self.max_bytes, methods=("POST",)
            )
            document = json.loads(body)
        except EndpointFailure as exc:
            raise KnowledgeBaseError(f"SPARQL endpoint {self.url} failed: {exc}") from exc
        except ValueError as exc:
            raise KnowledgeBaseError(
                f"SPARQL endpoint {self.url} did not return JSON results"
            ) from exc
        if not isinstance(document, dict):
            raise KnowledgeBaseError(f"SPARQL endpoint {self.url} did not return JSON results")
        return document

    def _iris(self, kind: str, key: str, lang: str, sparql: str) -> frozenset[str]:
        cached = self._cache.get((kind, key, lang))
        if cached is None:
            found = answer_set_from_json(self._json(sparql)).values
            cached = frozenset(v.value for v in found if isinstance(v, NamedNode))
            self._cache[(kind, key, lang)] = cached
        return cached

    def same_as(self, iri: str) -> frozenset[str]:
        """Return the owl:sameAs closure of ``iri`` (one property-path query).

        Raises:
            KnowledgeBaseError: if the endpoint fails.
        """
        try:
            node = NamedNode(iri)
        except ValueError:
            return frozenset({iri})
        path = f"({OWL.sameAs}|^{OWL.sameAs})*"
        query = f"SELECT DISTINCT ?x WHERE {{ {node} {path} ?x }}"
        return self._iris("sameAs", iri, "", query) | {iri}

    def resources_for_label(self, label: str, language: str) -> frozenset[str]:
        """Return resources labelled ``label`` in ``language`` or without a tag.

        Raises:
            KnowledgeBaseError: if the endpoint fails.
        """
        options = f"{Literal(label, language=language)} {Literal(label)}"
        query = f"SELECT DISTINCT ?r WHERE {{ VALUES ?l {{ {options} }} ?r {RDFS.label} ?l }}"
        return self._iris("label", label, language, query)

    def answer(self, sparql: str) -> AnswerSet:
        """Run a gold query on the endpoint (undeclared common prefixes are added).

        Raises:
            KnowledgeBaseError: if the endpoint fails or answers something else than results.
        """
        return answer_set_from_json(self._json(with_known_prefixes(sparql)))

"""Mint instance IRIs from a base IRI. This is the only place where IRIs are built from strings.

URL layout (every path below is relative to the configured base IRI, which has no trailing slash):

    /dataset/{name}                             a benchmark (qab:Dataset)
    /dataset/{name}/v{n}                        one loaded version (qab:DatasetVersion)
    /dataset/{name}/v{n}/question/{id}          a question of that version
    /experiment/{YYYYMMDDNNNN}                  an experiment
    /task/{experiment}/{n}                      one task of an experiment
    /system/{slug}                              a QA system
    /kb/{name}                                  a knowledge base
    /rag/run/{id}                               one answer of the built-in RAG system
    /graph/...                                  named graphs (see store.graphs)
"""

from __future__ import annotations

import re
from urllib.parse import quote

from pyoxigraph import NamedNode

_SLUG_BAD = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str) -> str:
    """Return a lowercase URL-safe slug of ``text`` (runs of other characters become ``-``).

    >>> slug("QALD-9 Test (multilingual)")
    'qald-9-test-multilingual'
    """
    cleaned = _SLUG_BAD.sub("-", text.strip()).strip("-.").lower()
    return cleaned or "unnamed"


def segment(text: str) -> str:
    """Return ``text`` percent-encoded as one path segment.

    >>> segment("a b/c")
    'a%20b%2Fc'
    """
    return quote(text, safe="-._~!$&'()*+,;=:@")


def _join(base: str, *parts: str) -> NamedNode:
    return NamedNode(base.rstrip("/") + "/" + "/".join(parts))


def dataset_iri(base: str, name: str) -> NamedNode:
    """Return the IRI of the benchmark called ``name``."""
    return _join(base, "dataset", segment(name))


def dataset_version_iri(base: str, name: str, version: int) -> NamedNode:
    """Return the IRI of version ``version`` of benchmark ``name``."""
    return _join(base, "dataset", segment(name), f"v{version}")


def question_iri(base: str, name: str, version: int, question_id: str) -> NamedNode:
    """Return the IRI of one question of a dataset version."""
    return _join(base, "dataset", segment(name), f"v{version}", "question", segment(question_id))


def sub_iri(parent: NamedNode, *parts: str) -> NamedNode:
    """Return an IRI below ``parent`` (answer sets, annotations, findings, observations).

    >>> sub_iri(NamedNode("http://x/q/1"), "answers", "0").value
    'http://x/q/1/answers/0'
    """
    return NamedNode(parent.value + "/" + "/".join(segment(p) for p in parts))


def experiment_iri(base: str, experiment_id: str) -> NamedNode:
    """Return the IRI of an experiment (``YYYYMMDDNNNN``)."""
    return _join(base, "experiment", segment(experiment_id))


def task_iri(base: str, experiment_id: str, number: int) -> NamedNode:
    """Return the IRI of task ``number`` of an experiment."""
    return _join(base, "task", segment(experiment_id), str(number))


def system_iri(base: str, name: str) -> NamedNode:
    """Return the IRI of the system called ``name``."""
    return _join(base, "system", slug(name))


def kb_iri(base: str, name: str) -> NamedNode:
    """Return the IRI of the knowledge base called ``name``."""
    return _join(base, "kb", segment(name))


def rag_run_iri(base: str, run_id: str) -> NamedNode:
    """Return the IRI of one stored RAG answer."""
    return _join(base, "rag", "run", segment(run_id))


def graph_iri(base: str, *parts: str) -> NamedNode:
    """Return the IRI of a named graph (the policy lives in ``store.graphs``)."""
    return _join(base, "graph", *(segment(p) for p in parts))


def page_iri(base: str, *parts: str) -> NamedNode:
    """Return an IRI for a server document such as ``/sparql`` or ``/.well-known/void``."""
    return _join(base, *parts)

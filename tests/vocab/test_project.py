"""The closed term list in vocab/project.py and the Turtle file define the same terms."""

from __future__ import annotations

from importlib import resources

import pyoxigraph as ox
import pytest

from vocab.namespaces import Namespace
from vocab.project import QAB, QAB_IRI
from vocab.standard import RDF


def _ttl_subjects() -> set[str]:
    data = resources.files("vocab").joinpath("project.ttl").read_bytes()
    quads = list(ox.parse(data, ox.RdfFormat.TURTLE))
    return {
        q.subject.value[len(QAB_IRI) :]
        for q in quads
        if isinstance(q.subject, ox.NamedNode)
        and q.subject.value.startswith(QAB_IRI)
        and q.predicate == RDF.type
        and len(q.subject.value) > len(QAB_IRI)
    }


def test_every_python_term_is_defined_in_the_turtle_file() -> None:
    defined = _ttl_subjects()
    missing = sorted(set(QAB.terms) - defined)
    assert not missing, f"terms without a definition in project.ttl: {missing}"


def test_every_turtle_term_is_in_the_closed_list() -> None:
    extra = sorted(_ttl_subjects() - set(QAB.terms))
    assert not extra, f"terms in project.ttl missing from vocab/project.py: {extra}"


def test_misspelt_term_raises() -> None:
    with pytest.raises(AttributeError, match="known terms"):
        _ = QAB.Experimnet


def test_namespace_membership() -> None:
    ns = Namespace("http://e/", ["a"])
    assert ns.a in ns
    assert ox.NamedNode("http://e/b") not in ns
    assert ns.local_name(ns.a) == "a"

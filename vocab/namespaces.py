"""A namespace helper whose term list is closed, so a misspelt term fails loudly."""

from __future__ import annotations

from collections.abc import Iterable

from pyoxigraph import NamedNode


class Namespace:
    """A namespace IRI with a fixed set of local names.

    Attribute access (``RDF.type``) and item access (``GERBIL["avg_millis/doc"]``) return
    ``pyoxigraph.NamedNode`` terms. Unknown names raise ``AttributeError`` / ``KeyError``
    instead of minting a wrong IRI.

    >>> EX = Namespace("http://example.org/", ["a", "b"])
    >>> EX.a
    <NamedNode value=http://example.org/a>
    >>> EX.c
    Traceback (most recent call last):
    ...
    AttributeError: 'c' is not a term of <http://example.org/>; known terms: a, b
    """

    __slots__ = ("_iri", "_terms")

    def __init__(self, iri: str, terms: Iterable[str]) -> None:
        self._iri = iri
        self._terms = {name: NamedNode(iri + name) for name in terms}

    @property
    def iri(self) -> str:
        """Return the namespace IRI."""
        return self._iri

    @property
    def terms(self) -> dict[str, NamedNode]:
        """Return a copy of the local-name to term mapping."""
        return dict(self._terms)

    def __getattr__(self, name: str) -> NamedNode:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._terms[name]
        except KeyError:
            known = ", ".join(sorted(self._terms))
            raise AttributeError(
                f"{name!r} is not a term of <{self._iri}>; known terms: {known}"
            ) from None

    def __getitem__(self, name: str) -> NamedNode:
        try:
            return self._terms[name]
        except KeyError:
            raise KeyError(f"{name!r} is not a term of <{self._iri}>") from None

    def __contains__(self, term: object) -> bool:
        if isinstance(term, NamedNode):
            return term.value.startswith(self._iri) and term.value[len(self._iri) :] in self._terms
        return isinstance(term, str) and term in self._terms

    def local_name(self, term: NamedNode) -> str:
        """Return the local name of ``term`` in this namespace.

        Raises:
            KeyError: if the term is not in this namespace.
        """
        if term not in self:
            raise KeyError(f"{term.value!r} is not a term of <{self._iri}>")
        return term.value[len(self._iri) :]

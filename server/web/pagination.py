"""Pages of a list: which page was asked for, its rows, and the links to the other pages.

Every list (experiments, systems, datasets, leaderboards, the questions of a dataset version)
shows ``server.page_size`` rows per page, chosen with ``?page=N`` (1 is the first). A page past
the end is a 404, never an empty "page 99 of 3". The other pages are linked the same way for
every reader: ``rel="prev"``/``"next"`` in the HTML and in a ``Link`` header (RFC 8288), and in
the RDF forms a ``hydra:view`` (a ``hydra:PartialCollectionView`` with first, previous, next and
last) of the list as a ``hydra:Collection`` with its ``hydra:totalItems``. Callers pass rows that
were produced lazily, so a page costs what it shows.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar
from urllib.parse import urlencode

from flask import request
from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad

from server.web.problems import Problem
from vocab.standard import HYDRA, RDF, XSD

T = TypeVar("T")


def page_number() -> int:
    """Return the page the request asks for (``?page=N``, default 1).

    Raises:
        Problem: 400 when ``page`` is not a positive integer.
    """
    raw = request.args.get("page", "1").strip() or "1"
    if not raw.isdigit() or int(raw) < 1 or len(raw) > 9:
        raise Problem(400, f"page must be a positive integer, found {raw[:20]!r}")
    return int(raw)


# Query parameters never copied into a generated link: an access token stays where its holder
# put it (a header, the cookie, the one URL they typed), never spreads into links.
NOT_COPIED = frozenset({"token"})


def here(stem: str | None = None, **changes: str | None) -> str:
    """Return the current URL (or ``stem`` with the current arguments), some arguments changed.

    ``None`` removes an argument; access tokens are never copied.
    """
    args = [
        (k, v)
        for k, v in request.args.items(multi=True)
        if k not in changes and k not in NOT_COPIED
    ]
    args += [(k, v) for k, v in changes.items() if v is not None]
    path = request.path if stem is None else stem
    return path + ("?" + urlencode(args) if args else "")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a list: its number, size, the total number of rows, and its rows."""

    number: int
    size: int
    total: int
    rows: list[T]

    @property
    def pages(self) -> int:
        """Return the number of pages (at least 1: an empty list has one, empty, page)."""
        return max(1, -(-self.total // self.size))

    @property
    def offset(self) -> int:
        """Return how many rows come before this page."""
        return (self.number - 1) * self.size

    def url(self, stem: str, number: int) -> str:
        """Return the URL of page ``number`` of the list at ``stem`` (other arguments kept)."""
        return here(stem, page=str(number) if number > 1 else None)

    def neighbours(self, stem: str) -> dict[str, str]:
        """Return the URLs of the first, previous, next and last pages that exist."""
        links = {"first": self.url(stem, 1), "last": self.url(stem, self.pages)}
        if self.number > 1:
            links["prev"] = self.url(stem, self.number - 1)
        if self.number < self.pages:
            links["next"] = self.url(stem, self.number + 1)
        return links


def paginate(rows: Iterable[T], total: int, number: int, size: int) -> Page[T]:
    """Return page ``number`` of ``rows`` (taken lazily) given how many rows there are.

    Raises:
        Problem: 404 when the page lies past the end.
    """
    page: Page[T] = Page(number, size, total, [])
    if number > page.pages:
        raise Problem(404, f"There is no page {number}; the list has {page.pages}.")
    chosen = list(itertools.islice(rows, page.offset, page.offset + size))
    return Page(number, size, total, chosen)


def page_links(page: Page[object], stem: str) -> list[str]:
    """Return the ``Link`` header entries (RFC 8288) of the pages around ``page``."""
    return [f'<{url}>; rel="{rel}"' for rel, url in page.neighbours(stem).items()]


def view_quads(collection: NamedNode, page: Page[object], stem: str, base: str) -> list[Quad]:
    """Return the Hydra description of ``page`` of ``collection`` (the list's IRI)."""
    here = NamedNode(base + page.url(stem, page.number))
    g = DefaultGraph()
    quads = [
        Quad(collection, RDF.type, HYDRA.Collection, g),
        Quad(collection, HYDRA.totalItems, Literal(str(page.total), datatype=XSD.integer), g),
        Quad(collection, HYDRA.view, here, g),
        Quad(here, RDF.type, HYDRA.PartialCollectionView, g),
    ]
    names = {"first": HYDRA.first, "last": HYDRA.last, "prev": HYDRA.previous, "next": HYDRA.next}
    for rel, url in page.neighbours(stem).items():
        quads.append(Quad(here, names[rel], NamedNode(base + url), g))
    return quads

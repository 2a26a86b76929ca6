"""Named SPARQL queries kept as ``store/queries/*.rq`` files and loaded by name."""

from __future__ import annotations

from functools import cache
from importlib import resources

from store.errors import StoreError


@cache
def load(name: str) -> str:
    """Return the text of the query ``store/queries/<name>.rq``.

    Raises:
        StoreError: if there is no such query.
    """
    try:
        return resources.files("store").joinpath("queries", f"{name}.rq").read_text("utf-8")
    except FileNotFoundError:
        raise StoreError(f"No named query {name!r} in store/queries") from None

"""The W3C RDF Data Cube integrity constraints IC-1 … IC-21 as ASK queries, run over any data.

``tests/data/qb-ic`` holds one query per constraint (IC-19 in two forms: code lists that are
concept schemes and collections), and linear-time forms of the pairwise IC-12 and IC-17 for
data with thousands of observations (``grouped``). IC-20 and IC-21 are templates the specification instantiates
once per parent-child property of a hierarchical code list; ``constraint_queries`` finds those
properties with each template's ``.instances.rq`` query and fills them in. Every constraint
answers ``true`` exactly when the data violates it. The callers give the two ways of asking (a
store's ``ask``/``select``, or HTTP against ``/sparql``), so the same checks run over a store and
over what a live server serves.
"""

from __future__ import annotations

from collections.abc import Callable

from tests import TEST_DATA

IC_DIR = TEST_DATA / "qb-ic"
# IC-1 … IC-21, with IC-19 as two files.
CONSTRAINT_FILES = 22


def constraint_queries(
    instances: Callable[[str], list[str]], *, grouped: bool = False
) -> list[tuple[str, str]]:
    """Return ``(name, ASK query)`` for every constraint, templates instantiated.

    Args:
        instances: runs a SELECT with one variable ``?p`` and returns its IRIs.
        grouped: use the linear-time forms of IC-12 and IC-17 (``.grouped.rq``) instead of the
            specification's pairwise ones, which take minutes on a few thousand observations.
    """
    plain = sorted(p for p in IC_DIR.glob("ic-*.rq") if p.name.count(".") == 1)
    if grouped:
        faster = {p.name.replace(".grouped", ""): p for p in IC_DIR.glob("ic-*.grouped.rq")}
        assert len(faster) == 2, faster
        plain = [faster.get(p.name, p) for p in plain]
    templates = sorted(IC_DIR.glob("ic-*.template.rq"))
    assert len(plain) + len(templates) == CONSTRAINT_FILES, (plain, templates)
    out = [(p.name, p.read_text()) for p in plain]
    for template in templates:
        finder = template.with_name(template.name.replace(".template.", ".instances."))
        for iri in instances(finder.read_text()):
            out.append((f"{template.name} <{iri}>", template.read_text().replace("$p", iri)))
    return out


def violations(
    ask: Callable[[str], bool], instances: Callable[[str], list[str]], *, grouped: bool = False
) -> list[str]:
    """Return the names of the constraints the data violates (empty: it satisfies all)."""
    return [name for name, query in constraint_queries(instances, grouped=grouped) if ask(query)]

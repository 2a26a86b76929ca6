"""Comparing query markings of one question: IRIs (C2KB, P2KB, AIT2KB) and relations (RE2KB).

Pure given a ``Lookups``. With ``gerbil=True`` the rules are GERBIL's: URI sets closed under its
static sameAs retrievers and the KB, InKB markings match by overlap, any two emerging entities
(outside the well-known KBs) match, relations match greedily in gold order. Otherwise the strict
rules: ``uri_key`` plus owl:sameAs on both sides, and a maximum one-to-one matching.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode

from evaluators.metrics import Counts
from evaluators.qa.answer_matching import Comparison, Lookups, Rule, greedy, maximum_matching
from evaluators.qa.gerbil_counter import Meaning, greedy_meanings, is_in_kb
from evaluators.qa.markings import Relation, Term
from evaluators.qa.normalisation import uri_key, value_key
from evaluators.results import Match


@dataclass(frozen=True, slots=True)
class IriComparison:
    """All markings, and (GERBIL only) the InKB-only and EE-only parts."""

    all: Comparison
    in_kb: Comparison | None = None
    emerging: Comparison | None = None


def count_equal(gold: Sequence[str], system: Sequence[str]) -> Comparison:
    """Count one question where elements match when equal (GERBIL's greedy one-to-one)."""
    pairs = greedy(gold, system, key=lambda s: s)
    counts = Counts(len(pairs), len(system) - len(pairs), len(gold) - len(pairs))
    matches = tuple(Match(gold[i], system[j], Rule.EXACT) for i, j in pairs)
    return Comparison(counts, tuple(gold), tuple(system), matches)


def _counted(
    gold: Sequence[str], system: Sequence[str], pairs: list[tuple[int, int, Rule]]
) -> Comparison:
    counts = Counts(len(pairs), len(system) - len(pairs), len(gold) - len(pairs))
    matches = tuple(Match(gold[i], system[j], rule) for i, j, rule in sorted(pairs))
    return Comparison(counts, tuple(gold), tuple(system), matches)


def compare_iris(
    gold: Sequence[str], system: Sequence[str], lookups: Lookups, *, gerbil: bool
) -> IriComparison:
    """Compare the IRIs of one question (resources, properties or answer item types)."""
    if gerbil:
        g = [Meaning(u, lookups.gerbil_expand(u)) for u in gold]
        s = [Meaning(u, lookups.gerbil_expand(u)) for u in system]
        parts = []
        for keep in (None, True, False):
            gg = [m for m in g if keep is None or is_in_kb(m) == keep]
            ss = [m for m in s if keep is None or is_in_kb(m) == keep]
            pairs = greedy_meanings(gg, ss, emerging=True)
            parts.append(_counted([m.text for m in gg], [m.text for m in ss], pairs))
        return IriComparison(*parts)
    gold_keys = [{uri_key(u) for u in lookups.same_as(iri)} for iri in gold]
    system_keys = [{uri_key(u) for u in lookups.same_as(iri)} for iri in system]
    edges = [[j for j, sk in enumerate(system_keys) if gk & sk] for gk in gold_keys]

    def rule(g: str, s: str) -> Rule:
        return Rule.EXACT if g == s else Rule.URI if uri_key(g) == uri_key(s) else Rule.SAME_AS

    matched = maximum_matching(edges, len(system)).items()
    return IriComparison(
        _counted(gold, system, [(i, j, rule(gold[i], system[j])) for i, j in matched])
    )


def _position_keys(term: Term | None, lookups: Lookups, gerbil: bool) -> frozenset[object] | None:
    if term is None:
        return None
    if isinstance(term, NamedNode):
        if gerbil:
            return frozenset(lookups.gerbil_expand(term.value))
        return frozenset(("iri", uri_key(u)) for u in lookups.same_as(term.value))
    return frozenset({("literal", term.value)}) if gerbil else frozenset({value_key(term)})


def _relation_equal(g: Relation, s: Relation, lookups: Lookups, gerbil: bool) -> bool:
    gp, sp = g.predicate, s.predicate
    if (gp is None) != (sp is None):
        return False
    # GERBIL compares predicates as written; strict through uri_key (http/https, ...)
    if gp != sp and (gerbil or uri_key(gp or "") != uri_key(sp or "")):
        return False
    for a, b in ((g.subject, s.subject), (g.object, s.object)):
        ka, kb = _position_keys(a, lookups, gerbil), _position_keys(b, lookups, gerbil)
        if (ka is None) != (kb is None) or (ka is not None and kb is not None and not ka & kb):
            return False
    return True


def show_relation(r: Relation) -> str:
    """Return a relation as ``subject predicate object`` with ``?`` for a variable."""

    def term(t: Term | None) -> str:
        return "?" if t is None else str(t)

    return f"{term(r.subject)} {r.predicate or '?'} {term(r.object)}"


def compare_relations(
    gold: Sequence[Relation], system: Sequence[Relation], lookups: Lookups, *, gerbil: bool
) -> Comparison:
    """Compare the triple patterns of one question; variables equal variables only."""
    edges = [
        [j for j, sr in enumerate(system) if _relation_equal(gr, sr, lookups, gerbil)]
        for gr in gold
    ]
    if gerbil:  # GERBIL: the first unused equal element, in gold order
        used: set[int] = set()
        pairs: dict[int, int] = {}
        for i, options in enumerate(edges):
            j = next((j for j in options if j not in used), None)
            if j is not None:
                used.add(j)
                pairs[i] = j
    else:
        pairs = maximum_matching(edges, len(system))
    rules = [(i, j, Rule.EXACT if gold[i] == system[j] else Rule.SAME_AS) for i, j in pairs.items()]
    return _counted([show_relation(r) for r in gold], [show_relation(r) for r in system], rules)

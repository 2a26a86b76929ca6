"""GERBIL QA's answer counter (``QAMatchingsCounter``), as it behaves today and before 2024.

A string phase, then URI-set overlap of resource annotations with owl:sameAs closure of the
*system* URIs only; unmatched system strings become annotations (a URL as such, otherwise through
a label lookup, otherwise the literal itself). ``legacy=True`` gives the matching before
September 2024: unmatched gold strings are forced too, string-phase false negatives are dropped
and two emerging entities (outside the well-known KBs) always match. Pure given a ``Lookups``.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass

from evaluators.metrics import Counts
from evaluators.model import AnswerReading, AnswerSet
from evaluators.qa.answer_matching import Comparison, Lookups, Rule, answer_strings
from evaluators.qa.normalisation import gerbil_uri_variants, is_gerbil_iri, is_url
from evaluators.results import Match

# GERBIL's "well-known KBs": a marking with a URI in one of these namespaces is InKB, else EE.
WELL_KNOWN_KBS = (
    "http://dbpedia.org/resource/",
    "http://dbpedia.org/ontology/",
    "http://ontologydesignpatterns.org/ont/dul/",
    "http://www.ontologydesignpatterns.org/ont/d0.owl",
    "http://www.wikidata.org/entity/",
)


@dataclass(frozen=True, slots=True)
class Meaning:
    """A GERBIL annotation: what was written, the URIs it stands for, and how it was made."""

    text: str
    uris: frozenset[str]
    origin: Rule = Rule.EXACT


@dataclass(frozen=True, slots=True)
class GerbilAnswers:
    """An answer set as GERBIL's counter sees it: plain strings and resource annotations."""

    strings: tuple[str, ...] = ()
    annotations: tuple[Meaning, ...] = ()


def gerbil_gold(
    answers: Sequence[AnswerSet] | None, reading: AnswerReading = AnswerReading.UNION
) -> GerbilAnswers:
    """Return gold answers: all annotations if every answer looks like an IRI, else all strings.

    As GERBIL's loader (NLIWOD ``EJQuestionFactory``), a result's boolean and its binding values
    both count (``AnswerReading.UNION``).
    """
    strings = answer_strings(answers, reading)
    if strings and all(is_gerbil_iri(s) for s in strings):
        return GerbilAnswers((), tuple(Meaning(s, frozenset({s})) for s in strings))
    return GerbilAnswers(strings, ())


def gerbil_system(
    answers: Sequence[AnswerSet] | None,
    lookups: Lookups,
    reading: AnswerReading = AnswerReading.UNION,
) -> GerbilAnswers:
    """Return system answers: IRIs (or URL strings) as owl:sameAs-expanded annotations."""
    strings = answer_strings(answers, reading)
    every_iri = bool(strings) and all(is_gerbil_iri(s) for s in strings)
    kept = tuple(s for s in strings if not every_iri and not is_url(s))
    resources = [s for s in strings if every_iri or is_url(s)]
    return GerbilAnswers(kept, tuple(Meaning(s, lookups.gerbil_expand(s)) for s in resources))


def _forced(text: str, lookups: Lookups) -> list[Meaning]:
    if is_url(text):
        return [Meaning(text, frozenset({text}))]
    found = lookups.gerbil_labels(text)
    if found:
        return [Meaning(text, frozenset({r}), Rule.LABEL) for r in sorted(found)]
    return [Meaning(text, frozenset({text}))]


def is_in_kb(meaning: Meaning) -> bool:
    """Return whether a marking is InKB (a URI in a well-known KB namespace) rather than EE."""
    return any(u.startswith(WELL_KNOWN_KBS) for u in meaning.uris)


def greedy_meanings(
    gold: Sequence[Meaning], system: Sequence[Meaning], *, emerging: bool
) -> list[tuple[int, int, Rule]]:
    """Match GERBIL-style: each gold marking takes the first unused system marking it equals.

    Two markings are equal when their URI sets overlap; with ``emerging`` (GERBIL's classifying
    searcher), InKB markings only match InKB ones and any two EE markings match.

    Returns:
        ``(gold index, system index, rule)`` for every matched pair.
    """
    by_uri: dict[str, list[int]] = defaultdict(list)
    for j, m in enumerate(system):
        for u in m.uris:
            by_uri[u].append(j)
    in_kb = [is_in_kb(m) for m in system] if emerging else []
    free_ee = deque(j for j, flag in enumerate(in_kb) if not flag)
    used: set[int] = set()
    pairs: list[tuple[int, int, Rule]] = []
    for i, g in enumerate(gold):
        if emerging and not is_in_kb(g):
            while free_ee and free_ee[0] in used:
                free_ee.popleft()
            if free_ee:
                j = free_ee.popleft()
                used.add(j)
                rule = _meaning_rule(g, system[j]) if g.uris & system[j].uris else Rule.EMERGING
                pairs.append((i, j, rule))
            continue
        candidates = sorted({j for u in g.uris for j in by_uri.get(u, ()) if j not in used})
        if candidates:
            used.add(candidates[0])
            pairs.append((i, candidates[0], _meaning_rule(g, system[candidates[0]])))
    return pairs


def _meaning_rule(gold: Meaning, system: Meaning) -> Rule:
    if system.origin is Rule.LABEL or gold.origin is Rule.LABEL:
        return Rule.LABEL
    if gold.text == system.text:
        return Rule.EXACT
    if gold.text in gerbil_uri_variants(system.text):
        return Rule.URI
    return Rule.SAME_AS


def gerbil_count(
    gold: GerbilAnswers, system: GerbilAnswers, lookups: Lookups, *, legacy: bool = False
) -> Comparison:
    """Count one question as GERBIL QA's ``QAMatchingsCounter`` does (see the module docstring).

    Returns:
        TP = string matches + annotation matches, FN = unmatched gold strings (not in legacy) +
        unmatched gold annotations, FP = unmatched system annotations (forced strings included).
    """
    gold_strings = set(gold.strings)
    matched = [s for s in system.strings if s in gold_strings]
    matches = [Match(s, s, Rule.EXACT) for s in matched]
    forced_system = [
        m for s in system.strings if s not in gold_strings for m in _forced(s, lookups)
    ]
    system_meanings = [*system.annotations, *forced_system]
    gold_meanings = list(gold.annotations)
    string_fn = len(gold.strings) - len(matched)
    if legacy:
        done = set(matched)
        gold_meanings += [m for s in gold.strings if s not in done for m in _forced(s, lookups)]
        string_fn = 0
    pairs = greedy_meanings(gold_meanings, system_meanings, emerging=legacy)
    matches += [Match(gold_meanings[i].text, system_meanings[j].text, r) for i, j, r in pairs]
    counts = Counts(
        len(matched) + len(pairs),
        len(system_meanings) - len(pairs),
        string_fn + len(gold_meanings) - len(pairs),
    )
    shown_gold = (*gold.strings, *(m.text for m in gold.annotations))
    shown_system = (*system.strings, *(m.text for m in system.annotations))
    return Comparison(counts, shown_gold, shown_system, tuple(matches))

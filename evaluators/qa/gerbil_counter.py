"""GERBIL QA's answer counter (``QAMatchingsCounter``) in the three forms it had since 2018.

A string phase, then URI-set overlap of resource annotations with owl:sameAs closure of the
*system* URIs only; unmatched system strings become annotations (a URL as such, otherwise through
a label lookup, otherwise the literal itself). Before the counter, GERBIL's ``ExperimentTask``
expands every system resource with its sameAs set and puts the answers into a set whose
equality is the URI set, so two answers that expand to the same set count once
(``gerbil_system``). The ``Era`` says which counter (dates from GERBIL's history):

* ``Y2018`` (commit cd19d387, 2018-04-16, to 846b3f12, 2019-06-21): an answer set is a set of
  resources only if Apache's ``UrlValidator`` accepts every answer; string-phase false negatives
  count; unmatched gold strings stay strings; annotations are classified InKB/EE and any two
  emerging entities (outside the well-known KBs) match.
* ``Y2019`` ("fixed #322", 846b3f12, to f42aa4f9, 2024-09-05): unmatched gold strings are forced
  into annotations too and string-phase false negatives are dropped; InKB/EE as in 2018.
* ``Y2024`` (f42aa4f9 on): as 2018 on strings, but annotations match by URI overlap only.

Pure given a ``Lookups``.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

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


class Era(StrEnum):
    """Which of GERBIL QA's answer counters (see the module docstring for the commits)."""

    Y2018 = "2018"
    Y2019 = "2019"
    Y2024 = "2024"

    @property
    def iri_test(self) -> Callable[[str], bool]:
        """Return the test that makes an answer set a set of resources (every answer passes).

        Until July 2019 GERBIL's ``QAUtils`` asked Apache's ``UrlValidator``; since then an
        answer must look like an IRI.
        """
        return is_url if self is Era.Y2018 else is_gerbil_iri


@dataclass(frozen=True, slots=True)
class Meaning:
    """A GERBIL annotation: what was written, the URIs it stands for, and how it was made."""

    text: str
    uris: frozenset[str]
    origin: Rule = Rule.EXACT


@dataclass(frozen=True, slots=True)
class GerbilAnswers:
    """An answer set as GERBIL's counter sees it: plain strings and resource annotations.

    ``merged`` holds the system answers counted once with an earlier annotation because both
    expand to the same owl:sameAs set (they are shown, never counted).
    """

    strings: tuple[str, ...] = ()
    annotations: tuple[Meaning, ...] = ()
    merged: tuple[str, ...] = ()


def gerbil_gold(
    answers: Sequence[AnswerSet] | None,
    reading: AnswerReading = AnswerReading.UNION,
    *,
    era: Era = Era.Y2024,
) -> GerbilAnswers:
    """Return gold answers: all annotations if every answer looks like an IRI, else all strings.

    As GERBIL's loader (NLIWOD ``EJQuestionFactory``), a result's boolean and its binding values
    both count (``AnswerReading.UNION``). ``era`` chooses the IRI test (``Era.iri_test``).
    """
    strings = answer_strings(answers, reading)
    if strings and all(era.iri_test(s) for s in strings):
        return GerbilAnswers((), tuple(Meaning(s, frozenset({s})) for s in strings))
    return GerbilAnswers(strings, ())


def gerbil_system(
    answers: Sequence[AnswerSet] | None,
    lookups: Lookups,
    reading: AnswerReading = AnswerReading.UNION,
    *,
    era: Era = Era.Y2024,
) -> GerbilAnswers:
    """Return system answers: IRIs (or URL strings) as owl:sameAs-expanded annotations.

    GERBIL reads a system's answer set like a gold one (all resources if every answer passes
    ``era.iri_test``), then its ``ExperimentTask`` turns every URL string into a resource,
    expands each resource with the owl:sameAs closure (static retrievers and the knowledge base)
    and keeps the answers in a set whose equality is that closure: two answers that expand to
    the same set are one (the second goes to ``merged``).
    """
    strings = answer_strings(answers, reading)
    every_iri = bool(strings) and all(era.iri_test(s) for s in strings)
    kept = tuple(s for s in strings if not every_iri and not is_url(s))
    meanings: dict[frozenset[str], Meaning] = {}
    merged: list[str] = []
    for text in (s for s in strings if every_iri or is_url(s)):
        uris = lookups.gerbil_expand(text)
        if uris in meanings:
            merged.append(text)
        else:
            meanings[uris] = Meaning(text, uris)
    lookups.merged += len(merged)
    return GerbilAnswers(kept, tuple(meanings.values()), tuple(merged))


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
    gold: GerbilAnswers, system: GerbilAnswers, lookups: Lookups, *, era: Era = Era.Y2024
) -> Comparison:
    """Count one question as GERBIL QA's ``QAMatchingsCounter`` of ``era`` does.

    Returns:
        TP = string matches + annotation matches, FN = unmatched gold strings (not in
        ``Era.Y2019``) + unmatched gold annotations, FP = unmatched system annotations (forced
        strings included).
    """
    legacy = era is Era.Y2019
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
    pairs = greedy_meanings(gold_meanings, system_meanings, emerging=era is not Era.Y2024)
    matches += [Match(gold_meanings[i].text, system_meanings[j].text, r) for i, j, r in pairs]
    counts = Counts(
        len(matched) + len(pairs),
        len(system_meanings) - len(pairs),
        string_fn + len(gold_meanings) - len(pairs),
    )
    shown_gold = (*gold.strings, *(m.text for m in gold.annotations))
    shown_system = (*system.strings, *(m.text for m in system.annotations), *system.merged)
    return Comparison(counts, shown_gold, shown_system, tuple(matches))

"""Answer matching: which system answers count as correct for one question, and by which rule.

Three families, each pure given a ``Lookups`` object (the per-evaluation memo of knowledge-base
lookups that ``scoring.evaluate`` creates):

* GERBIL QA: in ``gerbil_counter`` (it builds on the types here);
* the classic QALD script (``classic_count``): distinct values, ``8`` read as ``8.0``,
  percent-decoding and trimming, then exact equality.
* strict (``strict_count``): typed keys from ``normalisation``, a one-to-one pass on equal keys,
  then a maximum matching through owl:sameAs (both sides) and label lookups.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict, deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar
from urllib.parse import unquote

from pyoxigraph import Literal, NamedNode

from evaluators.errors import KnowledgeBaseError
from evaluators.knowledge.bases import KnowledgeBase
from evaluators.metrics import Counts
from evaluators.model import AnswerReading, AnswerSet, AnswerValue
from evaluators.qa.normalisation import (
    Key,
    display,
    gerbil_uri_variants,
    uri_key,
    value_key,
)
from evaluators.results import Match
from vocab.standard import XSD

_log = logging.getLogger(__name__)

_TAGGED = re.compile(r'"(.*)"@([A-Za-z]+(?:-[A-Za-z0-9]+)*)', re.DOTALL)
T = TypeVar("T")


class Rule(StrEnum):
    """Why a gold and a system element were counted as the same."""

    EXACT = "exact"
    STRING = "exact-string"  # same text, a language tag or datatype on one side only
    NUMERIC = "numeric-value"
    DATE = "normalised-date"
    BOOLEAN = "boolean"
    URI = "uri-normalisation"
    URL = "url-as-resource"
    SAME_AS = "same-as"
    LABEL = "label-lookup"
    EMERGING = "emerging-entity"
    CLASSIC = "classic-normalisation"


@dataclass(frozen=True, slots=True)
class Comparison:
    """The counts of one question plus what was compared and what matched."""

    counts: Counts
    gold: tuple[str, ...]
    system: tuple[str, ...]
    matches: tuple[Match, ...]


class Lookups:
    """Memoised knowledge-base lookups for one evaluation; a failing KB counts as empty."""

    def __init__(self, kb: KnowledgeBase | None, language: str) -> None:
        """Wrap ``kb`` (``None``: no owl:sameAs, no labels) for questions in ``language``."""
        self.kb = kb
        self.language = language
        self.failures = 0
        self.merged = 0  # GERBIL: system answers counted once with another (same sameAs set)
        self._same: dict[str, frozenset[str]] = {}
        self._gerbil: dict[str, frozenset[str]] = {}
        self._labels: dict[tuple[str, str], frozenset[str]] = {}

    def same_as(self, iri: str) -> frozenset[str]:
        """Return the KB's owl:sameAs closure of ``iri`` (at least ``{iri}``)."""
        found = self._same.get(iri)
        if found is None:
            found = frozenset({iri})
            if self.kb is not None:
                try:
                    found = self.kb.same_as(iri) | found
                except KnowledgeBaseError as exc:
                    self.failures += 1
                    _log.warning("owl:sameAs lookup of %s failed: %s", iri, exc)
            self._same[iri] = found
        return found

    def gerbil_expand(self, iri: str) -> frozenset[str]:
        """Return GERBIL's crawl from ``iri`` over its static retrievers and the KB's owl:sameAs."""
        found = self._gerbil.get(iri)
        if found is None:
            found = gerbil_uri_variants(iri)
            if self.kb is not None:
                seen = set(found)
                frontier = list(found)
                while frontier and len(seen) < 256:
                    for other in self.same_as(frontier.pop()) - seen:
                        for variant in gerbil_uri_variants(other) - seen:
                            seen.add(variant)
                            frontier.append(variant)
                found = frozenset(seen)
            self._gerbil[iri] = found
        return found

    def labels(self, text: str, language: str | None = None) -> frozenset[str]:
        """Return the resources labelled ``text`` (in ``language``, default the evaluation's)."""
        lang = language or self.language
        found = self._labels.get((text, lang))
        if found is None:
            found = frozenset()
            if self.kb is not None:
                try:
                    found = self.kb.resources_for_label(text, lang)
                except KnowledgeBaseError as exc:
                    self.failures += 1
                    _log.warning("label lookup of %r failed: %s", text, exc)
            self._labels[(text, lang)] = found
        return found

    def gerbil_labels(self, text: str) -> frozenset[str]:
        """Return GERBIL's label lookup: a ``"x"@en`` string is looked up as ``x`` in ``en``."""
        tagged = _TAGGED.fullmatch(text)
        if tagged:
            return self.labels(tagged.group(1), tagged.group(2).lower())
        return self.labels(text)


def answer_strings(
    answers: Sequence[AnswerSet] | None, reading: AnswerReading = AnswerReading.UNION
) -> tuple[str, ...]:
    """Return answer strings: every value of every answer set, once; ASK as true/false.

    ``reading`` decides whether a boolean next to bindings counts (GERBIL: ``UNION``).
    """
    out: dict[str, None] = {}
    for answer_set in answers or ():
        values, boolean = answer_set.read(reading)
        for value in values:
            out.setdefault(value.value)
        if boolean is not None:
            out.setdefault("true" if boolean else "false")
    return tuple(out)


def classic_value(text: str) -> str:
    """Return a value as the classic QALD script compares it.

    >>> classic_value("8"), classic_value(" http://dbpedia.org/resource/Caf%C3%A9 ")
    ('8.0', 'http://dbpedia.org/resource/Café')
    """
    if re.fullmatch(r"\d+", text):
        return text + ".0"
    return unquote(text).strip()


def classic_count(
    gold: Sequence[AnswerSet] | None,
    system: Sequence[AnswerSet] | None,
    reading: AnswerReading = AnswerReading.BINDINGS_FIRST,
) -> Comparison:
    """Count one question as the classic QALD script: distinct normalised values, exact equality.

    The script reads the bindings whenever a result has a ``bindings`` key, even an empty one,
    and the boolean only without it (``AnswerReading.BINDINGS_FIRST``).
    """
    gold_values = {classic_value(s): s for s in answer_strings(gold, reading)}
    system_values = {classic_value(s): s for s in answer_strings(system, reading)}
    common = [v for v in system_values if v in gold_values]
    matches = tuple(
        Match(
            gold_values[v],
            system_values[v],
            Rule.EXACT if gold_values[v] == system_values[v] else Rule.CLASSIC,
        )
        for v in common
    )
    counts = Counts(len(common), len(system_values) - len(common), len(gold_values) - len(common))
    return Comparison(counts, tuple(gold_values.values()), tuple(system_values.values()), matches)


def strict_values(
    answers: Sequence[AnswerSet] | None, reading: AnswerReading = AnswerReading.BINDINGS_FIRST
) -> list[AnswerValue]:
    """Return every value of every answer set once; an ASK result as an ``xsd:boolean``."""
    out: dict[AnswerValue, None] = {}
    for answer_set in answers or ():
        values, boolean = answer_set.read(reading)
        for value in values:
            out.setdefault(value)
        if boolean is not None:
            out.setdefault(Literal("true" if boolean else "false", datatype=XSD.boolean))
    return list(out)


def _language(value: AnswerValue) -> str | None:
    return value.language if isinstance(value, Literal) else None


def key_rule(gold: AnswerValue, system: AnswerValue, key: Key) -> Rule:
    """Return the rule that made two values with the same strict key equal."""
    if gold == system:
        return Rule.EXACT
    kind = key[0]
    if kind == "iri":
        return (
            Rule.URI if isinstance(gold, NamedNode) == isinstance(system, NamedNode) else Rule.URL
        )
    return {"num": Rule.NUMERIC, "date": Rule.DATE, "bool": Rule.BOOLEAN}.get(kind, Rule.STRING)


def maximum_matching(edges: Sequence[Sequence[int]], right: int) -> dict[int, int]:
    """Return a maximum one-to-one matching of a bipartite graph (BFS augmenting paths).

    Args:
        edges: for each left node, the right nodes it may match.
        right: the number of right nodes.

    Returns:
        ``{left: right}`` for the matched pairs.

    >>> maximum_matching([[0, 1], [0]], 2)
    {0: 1, 1: 0}
    """
    of_right = [-1] * right
    of_left = [-1] * len(edges)
    for start in range(len(edges)):
        came_from: dict[int, int] = {}
        queue = deque([start])
        visited = {start}
        free = -1
        while queue and free < 0:
            left = queue.popleft()
            for r in edges[left]:
                if r in came_from:
                    continue
                came_from[r] = left
                if of_right[r] < 0:
                    free = r
                    break
                if of_right[r] not in visited:
                    visited.add(of_right[r])
                    queue.append(of_right[r])
        while free >= 0:
            left = came_from[free]
            previous = of_left[left]
            of_left[left], of_right[free] = free, left
            free = previous
    return {left: r for left, r in enumerate(of_left) if r >= 0}


def _expansion(value: AnswerValue, key: Key, lookups: Lookups) -> set[str]:
    if key[0] == "iri":
        return {uri_key(u) for u in lookups.same_as(value.value)} | {key[1]}
    if key[0] == "str" and lookups.kb is not None:
        found = lookups.labels(value.value, _language(value))
        return {uri_key(u) for u in found}
    return set()


def _keyed(values: list[AnswerValue]) -> tuple[list[AnswerValue], list[Key]]:
    # values that are equal under the strict rules (same key and tag) count once
    seen: dict[tuple[Key, str | None], AnswerValue] = {}
    for v in values:
        lang = _language(v)
        seen.setdefault((value_key(v), lang.lower() if lang else None), v)
    return list(seen.values()), [k for k, _ in seen]


def _tag(value: AnswerValue) -> str | None:
    lang = _language(value)
    return lang.lower() if lang else None


def _first_pass(
    gold_values: list[AnswerValue],
    gold_keys: list[Key],
    system_values: list[AnswerValue],
    system_keys: list[Key],
) -> dict[int, tuple[int, Rule]]:
    """Pair each system value with the first open gold value of its key and a compatible tag.

    Linear: the gold values of one key are kept by tag (and all together for untagged system
    values), and a matched value is dropped from the front of its queues when met, so many
    equal literals with distinct tags cost no more than distinct literals.
    """
    by_tag: dict[tuple[Key, str | None], deque[int]] = defaultdict(deque)
    by_key: dict[Key, deque[int]] = defaultdict(deque)
    for i, k in enumerate(gold_keys):
        by_tag[(k, _tag(gold_values[i]))].append(i)
        by_key[k].append(i)
    pairs: dict[int, tuple[int, Rule]] = {}

    def _front(queue: deque[int] | None) -> int | None:
        while queue and queue[0] in pairs:
            queue.popleft()
        return queue[0] if queue else None

    for j, k in enumerate(system_keys):
        tag = _tag(system_values[j])
        if tag is None:
            found = _front(by_key.get(k))
        else:
            options = [_front(by_tag.get((k, tag))), _front(by_tag.get((k, None)))]
            found = min((i for i in options if i is not None), default=None)
        if found is not None:
            pairs[found] = (j, key_rule(gold_values[found], system_values[j], k))
    return pairs


def strict_count(
    gold: Sequence[AnswerSet] | None,
    system: Sequence[AnswerSet] | None,
    lookups: Lookups,
    reading: AnswerReading = AnswerReading.BINDINGS_FIRST,
) -> Comparison:
    """Count one question under the strict rules (typed keys, then owl:sameAs and labels)."""
    gold_values, gold_keys = _keyed(strict_values(gold, reading))
    system_values, system_keys = _keyed(strict_values(system, reading))
    pairs = _first_pass(gold_values, gold_keys, system_values, system_keys)
    if lookups.kb is not None and len(pairs) < min(len(gold_values), len(system_values)):
        _second_pass(gold_values, gold_keys, system_values, system_keys, pairs, lookups)
    matches = tuple(
        Match(display(gold_values[i]), display(system_values[j]), rule)
        for i, (j, rule) in sorted(pairs.items())
    )
    counts = Counts(len(pairs), len(system_values) - len(pairs), len(gold_values) - len(pairs))
    shown_gold = tuple(display(v) for v in gold_values)
    return Comparison(counts, shown_gold, tuple(display(v) for v in system_values), matches)


def _second_pass(
    gold_values: list[AnswerValue],
    gold_keys: list[Key],
    system_values: list[AnswerValue],
    system_keys: list[Key],
    pairs: dict[int, tuple[int, Rule]],
    lookups: Lookups,
) -> None:
    # owl:sameAs (both sides) and label lookups, as a maximum matching of what is still open
    taken = {j for j, _ in pairs.values()}
    open_gold = [i for i in range(len(gold_values)) if i not in pairs]
    open_system = [j for j in range(len(system_values)) if j not in taken]
    index: dict[str, list[int]] = defaultdict(list)
    for pos, j in enumerate(open_system):
        for u in _expansion(system_values[j], system_keys[j], lookups):
            index[u].append(pos)
    edges = []
    for i in open_gold:
        reachable = {p for u in _expansion(gold_values[i], gold_keys[i], lookups) for p in index[u]}
        # two literals never meet through labels: their language tags would be ignored
        edges.append(
            sorted(
                p for p in reachable if "iri" in (gold_keys[i][0], system_keys[open_system[p]][0])
            )
        )
    for left, pos in maximum_matching(edges, len(open_system)).items():
        i, j = open_gold[left], open_system[pos]
        both_iris = gold_keys[i][0] == system_keys[j][0] == "iri"
        pairs[i] = (j, Rule.SAME_AS if both_iris else Rule.LABEL)


def greedy(
    gold: Sequence[T], system: Sequence[T], key: Callable[[T], Hashable]
) -> list[tuple[int, int]]:
    """Return GERBIL's greedy one-to-one pairs of elements with equal ``key`` (in gold order)."""
    free: dict[Hashable, deque[int]] = defaultdict(deque)
    for j, s in enumerate(system):
        free[key(s)].append(j)
    pairs = []
    for i, g in enumerate(gold):
        slot = free.get(key(g))
        if slot:
            pairs.append((i, slot.popleft()))
    return pairs

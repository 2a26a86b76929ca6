"""Headline measures and rankings: what each profile ranks by, and sanity systems kept apart.

A scoring profile names the measure its community published: GERBIL-era QALD tables (QALD-8,
9, 9-plus, 10) rank by Macro F1 QALD, the classic script's tables by processed F1 with
"F-1 Global" next to it, TEXT2SPARQL's by set_F_ndcg; the strict profile follows GERBIL.
Sub-experiments rank by macro F1 (C2KB-style ones report no Macro F1 QALD, and GERBIL's pages
show none for AType and RE2KB); BioASQ types by their
official main measure. A reader may switch to any other measure. Built-in sanity systems
(``gold``) answer from the gold standard: they are shown apart and never ranked. Pure
functions, so every page and command ranks alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from evaluators.results import AIT2KB, C2KB, MEASURES, P2KB, QA, shown_in_tables
from evaluators.systems.protocol import SystemKind

# (deciding measure, tie-breaker) per BioASQ experiment type: the official main measures.
BIOASQ_RANKING: dict[str, tuple[str, str]] = {
    "documents": ("map", "mean_f1"),
    "snippets": ("map", "mean_f1"),
    "concepts": ("map", "mean_f1"),
    "yesno": ("accuracy", "macro_f1"),
    "factoid": ("mrr", "strict_accuracy"),
    "list": ("mean_f1", "mean_precision"),
    "ideal": ("rouge2_f1", "rougesu4_f1"),
}
# Profiles whose published tables rank by the classic script's processed F1.
_CLASSIC = frozenset({"qald-classic"})
# The TEXT2SPARQL profiles: the challenge ranks by set_F_ndcg.
_TEXT2SPARQL = frozenset({"text2sparql", "text2sparql-2026", "text2sparql-corrected"})
# Issue 39: SciQA's execution EM ranks by EM over all questions (EM over the successful ones
# alone would reward failing); MIRAGE by the mean accuracy over its datasets.
_FAMILIES: dict[str, tuple[str, str]] = {
    "execution-em": ("em_all", "em_successful"),
    "mirage": ("accuracy", "questions"),
}
# Sub-experiments without Macro F1 QALD (C2KB-style scorers).
_NO_QALD = frozenset({AIT2KB, C2KB, P2KB})
# Built-in systems that answer from the gold standard (sanity checks, never ranked).
SANITY_BUILTINS = frozenset({"gold"})

T = TypeVar("T")


def headline(profile: str, experiment_type: str = QA) -> tuple[str, str]:
    """Return the measure a profile ranks ``experiment_type`` by, and its tie-breaker.

    >>> headline("gerbil"), headline("qald-classic"), headline("strict", "C2KB")
    (('macro_f1_qald', 'macro_f1'), ('processed_f1', 'global_f1'), ('macro_f1', 'micro_f1'))
    >>> headline("bioasq", "factoid")
    ('mrr', 'strict_accuracy')
    """
    if experiment_type in BIOASQ_RANKING:
        return BIOASQ_RANKING[experiment_type]
    if experiment_type in _NO_QALD or not shown_in_tables(experiment_type, "macro_f1_qald"):
        return ("macro_f1", "micro_f1")
    if profile in _CLASSIC and experiment_type == QA:
        return ("processed_f1", "global_f1")
    if profile in _TEXT2SPARQL:
        return ("set_f_ndcg", "set_f")
    if profile in _FAMILIES:
        return _FAMILIES[profile]
    return ("macro_f1_qald", "macro_f1")


# The per-question measures significance tests read, in order: the first defined one counts
# (F1; TEXT2SPARQL's headline; issue 39: execution EM, MIRAGE's accuracy).
SCORED_MEASURES = ("f1", "set_f_ndcg", "em", "accuracy")


def question_score(value: Callable[[str], float | None]) -> float:
    """Return a question's score for significance tests: its F1, or (profiles that report no
    F1 per question) its ``set_f_ndcg``, ``em`` or ``accuracy``; 0 when undefined.

    >>> question_score({"set_f_ndcg": 0.5}.get), question_score({"f1": 1.0}.get)
    (0.5, 1.0)
    >>> question_score({"accuracy": 1.0}.get)
    1.0
    """
    for measure in SCORED_MEASURES:
        found = value(measure)
        if found is not None:
            return found
    return 0.0


def ranking_measures(
    profile: str, experiment_type: str = QA, chosen: str | None = None
) -> tuple[str, str]:
    """Return the measures to rank by: ``chosen`` (if any) first, else the headline.

    Raises:
        KeyError: if ``chosen`` is not a measure id.
    """
    first, second = headline(profile, experiment_type)
    if not chosen or chosen == first:
        return first, second
    if chosen not in MEASURES:
        raise KeyError(chosen)
    return chosen, first


def is_sanity(kind: SystemKind | str | None, builtin: str | None) -> bool:
    """Return whether a system is a sanity check (a built-in that answers from the gold data).

    >>> is_sanity(SystemKind.BUILT_IN, "gold"), is_sanity("built-in", "rag")
    (True, False)
    """
    return str(kind) == SystemKind.BUILT_IN.value and (builtin or "") in SANITY_BUILTINS


def _number(value: float | None) -> float:
    return -math.inf if value is None or math.isnan(value) else value


def order_key(first: float | None, second: float | None, label: str) -> tuple[float, float, str]:
    """Return the sort key that puts the best first: higher values first, undefined last."""
    return (-_number(first), -_number(second), label)


@dataclass(frozen=True, slots=True)
class Ranked(Generic[T]):
    """Ranked entries (1 = best; ties share a rank) and the sanity entries, shown apart."""

    ranked: tuple[tuple[int, T], ...]
    sanity: tuple[T, ...]


def rank(
    entries: Iterable[T],
    *,
    values: Callable[[T], tuple[float | None, float | None]],
    label: Callable[[T], str],
    sanity: Callable[[T], bool],
) -> Ranked[T]:
    """Rank entries by their two values (best first); sanity entries are set apart, unranked.

    Entries with equal values (both measures) share a rank (competition ranking: 1, 1, 3).
    """
    real: list[T] = []
    checks: list[T] = []
    for entry in entries:
        (checks if sanity(entry) else real).append(entry)
    real.sort(key=lambda e: order_key(*values(e), label(e)))
    ranked: list[tuple[int, T]] = []
    for position, entry in enumerate(real, start=1):
        if ranked and values(ranked[-1][1]) == values(entry):
            ranked.append((ranked[-1][0], entry))
        else:
            ranked.append((position, entry))
    checks.sort(key=lambda e: order_key(*values(e), label(e)))
    return Ranked(tuple(ranked), tuple(checks))


def best_of(items: Sequence[T], values: Callable[[T], tuple[float | None, float | None]]) -> T:
    """Return the item with the best values (the first among equals).

    Raises:
        ValueError: for no items.
    """
    if not items:
        raise ValueError("best_of needs at least one item")
    return min(items, key=lambda item: order_key(*values(item), ""))

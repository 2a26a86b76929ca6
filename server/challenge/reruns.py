"""Reruns as provenance: which earlier task a task runs again, and which of the two counts.

The TEXT2SPARQL organisers ran some systems again (IRIS, INFAI-ETI-AND-FRIENDS-B and -C on
DB26) and published the run that counts. Here a rerun is a task of a later experiment that asks
the same system the same dataset in the same language under the same profile as a task of an
earlier experiment; ``qabench experiment rerun NEW --of OLD --reason TEXT``
(``server.cli.experiment``) records, in the
later experiment's graph, for each such pair::

    <new task> qab:rerunOf <old task> ;          # rdfs:subPropertyOf prov:wasInformedBy
               qab:rerunReason "why" .
    <old task> qab:supersededBy <new task> .     # the old one no longer counts

The earlier experiment's graph is never touched (it may be published and cited). The rule a
leaderboard applies (``counted``): a task superseded by a task the reader may see does not
count; of the rest, the newest counts. Pure functions over task summaries and quads, plus the
read of the recorded pairs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode, Quad

from evaluators.errors import EvaluationError
from evaluators.experiments.model import TaskPlan
from store import graphs
from store.protocol import RdfStore
from vocab.project import QAB


@dataclass(frozen=True, slots=True)
class RerunPair:
    """A task of the later experiment and the earlier task it runs again."""

    new: str  # task IRI
    old: str  # task IRI
    plan: TaskPlan  # the later task's plan


def _key(plan: TaskPlan) -> tuple[str, str, str, str]:
    return (plan.system, plan.dataset, plan.language, plan.profile)


def rerun_pairs(
    new: Sequence[tuple[str, TaskPlan]], old: Sequence[tuple[str, TaskPlan]]
) -> list[RerunPair]:
    """Pair each task of ``new`` with the task of ``old`` it runs again ((IRI, plan) each).

    A pair shares system, dataset name, language and profile (the dataset version may differ:
    a rerun on a corrected version is still a rerun). Raises ``EvaluationError`` when nothing
    pairs, or when a task of ``old`` could pair with two of ``new`` or the reverse.
    """
    earlier: dict[tuple[str, str, str, str], list[str]] = {}
    for iri, plan in old:
        earlier.setdefault(_key(plan), []).append(iri)
    pairs: list[RerunPair] = []
    seen: set[tuple[str, str, str, str]] = set()
    for iri, plan in new:
        key = _key(plan)
        found = earlier.get(key, [])
        if len(found) > 1 or (found and key in seen):
            raise EvaluationError(
                f"task {iri}: {len(found)} earlier tasks of {plan.system} on {plan.dataset} "
                f"({plan.language}, {plan.profile}): which one it reruns is ambiguous"
            )
        if found:
            seen.add(key)
            pairs.append(RerunPair(iri, found[0], plan))
    if not pairs:
        raise EvaluationError(
            "no task of the later experiment asks a system, dataset, language and profile "
            "of the earlier one: nothing is a rerun"
        )
    return pairs


def rerun_quads(
    base: str, experiment_id: str, pairs: Iterable[RerunPair], reason: str
) -> list[Quad]:
    """Return the quads recording ``pairs`` in the later experiment's graph."""
    g = graphs.experiment_graph(base, experiment_id)
    out: list[Quad] = []
    for pair in pairs:
        new, old = NamedNode(pair.new), NamedNode(pair.old)
        out += [Quad(new, QAB.rerunOf, old, g), Quad(old, QAB.supersededBy, new, g)]
        if reason:
            out.append(Quad(new, QAB.rerunReason, Literal(reason), g))
    return out


def recorded_reruns(store: RdfStore) -> dict[str, str]:
    """Return old task IRI -> the IRI of the task recorded as its rerun (any graph)."""
    return {
        quad.subject.value: quad.object.value
        for quad in store.quads(None, QAB.supersededBy, None, None)
        if isinstance(quad.subject, NamedNode) and isinstance(quad.object, NamedNode)
    }


def counted(tasks: Sequence[str], reruns: dict[str, str]) -> str:
    """Return the task that counts of ``tasks`` (one system's, oldest first).

    A task whose recorded rerun is among ``tasks`` (the tasks the reader may see) does not
    count; the newest of the others does. Raises ``ValueError`` on no tasks.
    """
    if not tasks:
        raise ValueError("no task")
    visible = set(tasks)
    standing = [t for t in tasks if reruns.get(t) not in visible]
    return (standing or list(tasks))[-1]

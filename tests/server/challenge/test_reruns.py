"""Reruns as provenance: pairing a later experiment's tasks with an earlier one's, and the
rule that picks the run that counts."""

from __future__ import annotations

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from evaluators.errors import EvaluationError
from evaluators.experiments.model import TaskPlan
from server.challenge.reruns import counted, rerun_pairs, rerun_quads
from store import graphs
from vocab.project import QAB

BASE = "https://qa.example.org/"


def _plan(number: int, system: str, dataset: str = "db26", version: int = 1) -> TaskPlan:
    return TaskPlan(number, system, dataset, version, "0" * 64, "mul", "text2sparql-2026")


def _task(exp: str, number: int) -> str:
    return f"{BASE}task/{exp}/{number}"


def test_a_rerun_pairs_on_system_dataset_language_and_profile() -> None:
    old = [(_task("a", 1), _plan(1, "IRIS")), (_task("a", 2), _plan(2, "ADFR"))]
    # the rerun is on the dataset's corrected version: still a rerun of the same task
    new = [(_task("b", 1), _plan(1, "IRIS", version=2)), (_task("b", 2), _plan(2, "NEW"))]
    (pair,) = rerun_pairs(new, old)
    assert (pair.new, pair.old, pair.plan.system) == (_task("b", 1), _task("a", 1), "IRIS")
    with pytest.raises(EvaluationError, match="nothing is a rerun"):
        rerun_pairs([(_task("b", 2), _plan(2, "NEW"))], old)
    with pytest.raises(EvaluationError, match="ambiguous"):
        rerun_pairs(new, [*old, (_task("a", 3), _plan(3, "IRIS"))])


def test_the_quads_go_to_the_later_experiment_graph_only() -> None:
    (pair,) = rerun_pairs([(_task("b", 1), _plan(1, "IRIS"))], [(_task("a", 4), _plan(4, "IRIS"))])
    quads = set(rerun_quads(BASE, "b", [pair], "the endpoint was down"))
    g = graphs.experiment_graph(BASE, "b")
    new, old = NamedNode(_task("b", 1)), NamedNode(_task("a", 4))
    assert quads == {
        Quad(new, QAB.rerunOf, old, g),
        Quad(old, QAB.supersededBy, new, g),
        Quad(new, QAB.rerunReason, Literal("the endpoint was down"), g),
    }


def test_the_run_that_counts() -> None:
    a, b, c = "t/a/1", "t/b/1", "t/c/1"  # oldest first
    assert counted([a, b, c], {}) == c  # without recorded reruns: the newest
    assert counted([a, b, c], {c: b}) == b  # c was superseded by b: b counts though older
    assert counted([a, b], {b: "t/private/1"}) == b  # a rerun the reader cannot see is ignored
    assert counted([a, b], {a: b, b: a}) == b  # a cycle falls back to the newest
    with pytest.raises(ValueError):
        counted([], {})

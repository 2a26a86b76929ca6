"""A task's evaluation results in its experiment graph: written through ``evaluators.cube``,
read back as aggregate ``ExperimentTypeResult``s (for ``experiment show`` and summaries).

Writing is pure (quads out); reading queries the store. Nothing here changes the store.
"""

from __future__ import annotations

from collections import defaultdict

from pyoxigraph import NamedNode, Quad

from evaluators import cube
from evaluators.experiments.model import TaskPlan
from evaluators.results import MEASURES, EvaluationResult, ExperimentTypeResult, MeasureValue
from store import graphs, queries
from store.triplestore import TripleStore
from vocab import iris

_MEASURE_BY_TERM = {info.term.value: key for key, info in MEASURES.items()}


def result_quads(
    base: str, experiment_id: str, plan: TaskPlan, result: EvaluationResult
) -> list[Quad]:
    """Return the Data Cube quads of one finished task (aggregate and per-question)."""
    g = graphs.experiment_graph(base, experiment_id)
    question_iris = {
        score.question_id: iris.question_iri(base, plan.dataset, plan.version, score.question_id)
        for typed in result.results
        for score in typed.per_question
    }
    return cube.structure_quads(base, g) + list(
        cube.observation_quads(
            result,
            base=base,
            task=iris.task_iri(base, experiment_id, plan.number),
            graph=g,
            system=iris.system_iri(base, plan.system),
            dataset_version=iris.dataset_version_iri(base, plan.dataset, plan.version),
            question_iris=question_iris,
        )
    )


def _type_name(term: NamedNode) -> str:
    return term.value.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def stored_results(
    store: TripleStore, base: str, experiment_id: str
) -> dict[int, tuple[ExperimentTypeResult, ...]]:
    """Return the aggregate results of every finished task of an experiment, by task number."""
    rows = store.select(
        queries.load("experiment_results"), graph=graphs.experiment_graph(base, experiment_id)
    )
    found: dict[int, dict[str, list[MeasureValue]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        measure = _MEASURE_BY_TERM.get(row["measure"].value)
        if measure is None:
            continue
        number = int(row["task"].value.rsplit("/", 1)[-1])
        kind = _type_name(row["type"])  # type: ignore[arg-type]
        if "value" in row:
            value = MeasureValue(measure, float(row["value"].value))
        else:
            reason = row["reason"].value if "reason" in row else "undefined"
            value = MeasureValue(measure, None, reason)
        found[number][kind].append(value)
    return {
        number: tuple(
            ExperimentTypeResult(kind, tuple(sorted(values, key=_measure_order)))
            for kind, values in types.items()
        )
        for number, types in found.items()
    }


_ORDER = {key: n for n, key in enumerate(MEASURES)}


def _measure_order(value: MeasureValue) -> int:
    return _ORDER[value.measure]

"""TEXT2SPARQL'26 challenge tables: per dataset, per language, and the overall table.

The challenge publishes, per dataset, one table over all languages and one per language (CK26
ranked by ``set_F_ndcg``, DB26 by ``set_F``: it has no ordered question), and an overall table:
the plain mean of the two datasets' ``set_F``, ``set_recall`` and ``set_P``, with an English
table beside it (the mean of the two English values). Each cell names the run it comes from.
Pure: evaluation files (the official shape, ``evaluators.qa.text2sparql_file``) in, ranked
rows out; ``rows_of`` reads a published evaluation back into per-question rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluators.qa.text2sparql_file import Row

# (dataset prefix, the average key it is ranked by) of TEXT2SPARQL'26, in the published order
DATASETS_2026 = (("ck26", "set_F_ndcg"), ("db26", "set_F"))
# The columns of the published tables, by dataset ranking key
COLUMNS = {
    "set_F_ndcg": ("set_F_ndcg", "set_recall", "set_P", "set_F", "ndcg"),
    "set_F": ("set_F", "set_recall", "set_P"),
}
OVERALL_COLUMNS = ("set_F", "set_recall", "set_P")
_IDS = {"set_P": "set_p", "set_recall": "set_recall", "set_F": "set_f", "ndcg": "ndcg"}


def rows_of(evaluation: Mapping[str, Mapping[str, float]]) -> list[Row]:
    """Return the per-question rows of an evaluation file (language: the qname's ``-<lang>``).

    >>> rows_of({"x:1-en": {"set_P": 1.0, "set_recall": 1.0, "set_F": 1.0}, "average": {}})[0]
    Row(qname='x:1-en', language='en', values={'set_p': 1.0, 'set_recall': 1.0, 'set_f': 1.0})
    """
    return [
        Row(q, q.rsplit("-", 1)[-1], {_IDS[k]: v for k, v in values.items() if k in _IDS})
        for q, values in evaluation.items()
        if not q.startswith("average") and q != "order_required"
    ]


@dataclass(frozen=True, slots=True)
class Cell:
    """One system's values in one table, and the run they come from."""

    system: str
    values: tuple[float | None, ...]
    run: str


@dataclass(frozen=True, slots=True)
class ChallengeTable:
    """A ranked table: its dataset (or ``overall``), its language (``""``: all), columns, rows."""

    dataset: str
    language: str
    columns: tuple[str, ...]
    rows: tuple[Cell, ...]


def _ranked(cells: list[Cell]) -> tuple[Cell, ...]:
    return tuple(sorted(cells, key=lambda c: (-(c.values[0] or 0.0), c.system)))


def dataset_tables(
    dataset: str, ranking: str, runs: Mapping[str, tuple[str, Mapping[str, Any]]]
) -> list[ChallengeTable]:
    """Return a dataset's tables: all languages, then one per language (as the files name them).

    Args:
        dataset: the dataset prefix (``ck26``).
        ranking: the average key the tables are ranked by (``set_F_ndcg`` or ``set_F``).
        runs: system -> (the run used, its evaluation file in the official 2026 shape).
    """
    columns = COLUMNS[ranking]
    languages = {k for _, doc in runs.values() for k in doc if k.startswith("average-")}
    keys = ["average", *sorted(languages)]
    tables = []
    for key in keys:
        cells = [
            Cell(system, tuple(doc.get(key, {}).get(c) for c in columns), run)
            for system, (run, doc) in runs.items()
        ]
        language = key.removeprefix("average").removeprefix("-")
        tables.append(ChallengeTable(dataset, language, columns, _ranked(cells)))
    return tables


def overall_tables(
    per_dataset: Mapping[str, Mapping[str, tuple[str, Mapping[str, Any]]]],
) -> list[ChallengeTable]:
    """Return the overall table (mean of the datasets' ``average``) and the English one (mean of
    their ``average-en``), for the systems that have a run on every dataset.

    Args:
        per_dataset: dataset -> system -> (run used, evaluation file).
    """
    datasets = list(per_dataset)
    systems: Sequence[str] = sorted(set.intersection(*(set(r) for r in per_dataset.values())))
    tables = []
    for key, language in (("average", ""), ("average-en", "en")):
        cells = []
        for system in systems:
            docs = [per_dataset[d][system][1].get(key) for d in datasets]
            values = tuple(
                sum(doc[c] for doc in docs) / len(docs) if all(docs) else None  # type: ignore[index]
                for c in OVERALL_COLUMNS
            )
            run = "; ".join(f"{d}: {per_dataset[d][system][0]}" for d in datasets)
            cells.append(Cell(system, values, run))
        tables.append(ChallengeTable("overall", language, OVERALL_COLUMNS, _ranked(cells)))
    return tables

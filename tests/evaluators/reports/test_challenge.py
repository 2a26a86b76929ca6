"""The TEXT2SPARQL'26 tables (per dataset, per language, overall) from the published runs."""

from __future__ import annotations

import json

from evaluators.reports.challenge import DATASETS_2026, dataset_tables, overall_tables
from tests.plugins.formats import SYSTEMS_2026, T2s26Files

NAMES = {"": "overall", "de": "german", "en": "english", "es": "spanish"}


def test_the_official_2026_tables_row_for_row(t2s26: T2s26Files) -> None:
    runs = {
        dataset: {
            system: (str(t2s26.results(dataset, system).name),
                     json.loads(t2s26.results(dataset, system).read_text()))
            for system in SYSTEMS_2026
        }
        for dataset, _ in DATASETS_2026
    }  # fmt: skip
    tables = [t for d, r in DATASETS_2026 for t in dataset_tables(d, r, runs[d])]
    tables += overall_tables(runs)
    official = t2s26.tables()
    assert len(tables) == 8  # CK26 x3, DB26 x3, overall and overall English
    for table in tables:
        printed = official[table.dataset][NAMES[table.language]]
        mine = [
            [cell.system, *(f"{v:.6f}" for v in cell.values if v is not None)]
            for cell in table.rows
        ]
        assert mine == printed, (table.dataset, table.language)
    iris = next(c for c in tables[3].rows if c.system == "IRIS")
    assert iris.run == "db26_results2.json"  # IRIS's published DB26 cell is its second run
    overall_iris = next(c for c in tables[6].rows if c.system == "IRIS")
    assert overall_iris.run == "ck26: ck26_results.json; db26: db26_results2.json"

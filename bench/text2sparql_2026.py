"""TEXT2SPARQL'26 reproduced: the published numbers of all eight systems, checked and printed.

Without arguments it reads the files kept in ``tests/data/text2sparql-2026`` (every published
``*_results.json``, the official tables, excerpts of three systems' result sets):

1. every published evaluation file is rebuilt from its own per-question values under the
   ``text2sparql-2026`` rules (every qname, ``average``, ``average-<lang>``: equal or not);
2. the challenge tables (per dataset, per language, overall and overall English) are built from
   the published runs and compared with the official tables as printed (six decimals);
3. the per-question values of the kept result-set excerpts are scored and compared;
4. the published 2025 result sets (WSE and LACODAM on CK25, IIS-Q on DB25, read from
   ``datasets.reference_data``) are scored under ``text2sparql-2026``: every per-question value
   and ``average`` equal to the 2025 file, the 2026 per-language objects printed.

With ``--snapshot DIR`` (a checkout of ``AKSW/text2sparql.aksw.org``, branch ``2026`` or
``gh-pages``; nothing is downloaded) it also scores every system's whole published result set
against the whole reference result set of each dataset and compares every per-question value
and average with the published evaluation file.

    .venv/bin/python bench/text2sparql_2026.py [--snapshot DIR]

Exit status 1 when any number differs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from evaluators.formats import parse_file  # noqa: E402
from evaluators.formats.text2sparql.gold import with_gold_results  # noqa: E402
from evaluators.qa import text2sparql, text2sparql_file  # noqa: E402
from evaluators.qa.scoring import evaluate  # noqa: E402
from evaluators.reports.challenge import (  # noqa: E402
    DATASETS_2026,
    dataset_tables,
    overall_tables,
    rows_of,
)

KEPT = REPO / "tests" / "data" / "text2sparql-2026"
SYSTEMS = (
    "SPARQL-LLM", "INFAI-ETI-AND-FRIENDS-A", "ADFR", "LIBER-AI-CLAUDE", "IRIS", "LIBER-AI-QWEN",
    "INFAI-ETI-AND-FRIENDS-C", "INFAI-ETI-AND-FRIENDS-B",
)  # fmt: skip
# The run each published cell uses where a system has several (IRIS's DB26: its second run).
PUBLISHED_RUN = {("db26", "IRIS"): "2"}
RULES = text2sparql_file.RULES[text2sparql_file.OFFICIAL_2026]
LANGUAGE_NAMES = {"": "overall", "de": "german", "en": "english", "es": "spanish"}


def _results_name(dataset: str, system: str) -> str:
    return f"{dataset}_results{PUBLISHED_RUN.get((dataset, system), '')}.json"


def check_files() -> tuple[int, int]:
    """Rebuild every kept evaluation file from its per-question values; return (equal, all)."""
    files = sorted(KEPT.glob("*/*/*_results*.json"))
    equal = 0
    for path in files:
        published = json.loads(path.read_text())
        rebuilt = text2sparql_file.evaluation_document(rows_of(published), RULES)
        same = rebuilt == published
        equal += same
        if not same:
            print(f"  DIFFERS {path.relative_to(KEPT)}")
    return equal, len(files)


def published_runs(root: Path) -> dict[str, dict[str, tuple[str, dict[str, Any]]]]:
    """Return dataset -> system -> (run, evaluation file) of the published runs under ``root``."""
    out: dict[str, dict[str, tuple[str, dict[str, Any]]]] = {}
    for dataset, _ in DATASETS_2026:
        for system in SYSTEMS:
            name = _results_name(dataset, system)
            doc = json.loads((root / dataset / system / name).read_text())
            run = f"{dataset}/{system}/{name}"
            out.setdefault(dataset, {})[system] = (run, doc)
    return out


def check_tables(runs: dict[str, dict[str, tuple[str, dict[str, Any]]]]) -> tuple[int, int]:
    """Compare the tables with the official ones (six decimals); print them; (equal, cells)."""
    official = json.loads((KEPT / "published_tables.json").read_text())
    tables = [t for d, r in DATASETS_2026 for t in dataset_tables(d, r, runs[d])]
    tables += overall_tables(runs)
    equal = cells = 0
    for table in tables:
        label = LANGUAGE_NAMES[table.language]
        printed = {row[0]: (i, row[1:]) for i, row in enumerate(official[table.dataset][label])}
        print(f"\n{table.dataset} {label} ({', '.join(table.columns)}; the run each row uses)")
        for position, cell in enumerate(table.rows):
            shown = [f"{v:.6f}" if v is not None else "-" for v in cell.values]
            place, expected = printed[cell.system]
            same = shown == list(expected) and place == position
            equal += same
            cells += 1
            mark = "" if same else f"   DIFFERS: published {expected} at row {place + 1}"
            print(f"  {cell.system:25} {'  '.join(shown)}   {cell.run}{mark}")
    return equal, cells


def _scored(gold: Any, answers: dict[str, Any]) -> dict[str, Any]:
    result = evaluate(gold, answers, profile=text2sparql_file.OFFICIAL_2026, language="mul")
    doc = text2sparql.evaluation_json(result, gold)
    assert doc is not None
    return doc


def check_excerpts() -> tuple[int, int]:
    """Score the kept result-set excerpts; return (equal per-question values, all)."""
    equal = total = 0
    for dataset, _ in DATASETS_2026:
        reference = parse_file(KEPT / dataset / f"{dataset}_true_result_set.excerpt.json")
        for path in sorted(KEPT.glob(f"{dataset}/*/*_pred_result_set*.excerpt.json")):
            answers = parse_file(path).by_id()
            questions = parse_file(KEPT / dataset / f"questions_{dataset}.yml")
            kept = [q for q in questions.questions if q.id in answers]
            gold = with_gold_results(
                questions.__class__(questions.format, tuple(kept), questions.source_id),
                reference.__class__(
                    reference.format, tuple(q for q in reference.questions if q.id in answers)
                ),
                source=path.name,
            )
            mine = _scored(gold, answers)
            published = json.loads(
                (path.parent / _results_name(dataset, path.parent.name)).read_text()
            )
            same = sum(mine[q] == published[q] for q in answers)
            print(f"  {dataset} {path.parent.name:15} {same} / {len(answers)} qnames equal")
            equal += same
            total += len(answers)
    return equal, total


def _find(snapshot: Path, relative: str) -> Path | None:
    for prefix in ("docs/results", "2026/results", "results", ""):
        path = snapshot / prefix / relative
        if path.is_file():
            return path
    return None


def check_snapshot(snapshot: Path) -> tuple[int, int]:
    """Score every published result set of the snapshot; return (equal files, files)."""
    equal = total = 0
    for dataset, _ in DATASETS_2026:
        questions = _find(snapshot, f"{dataset}/questions_{dataset}.yml")
        reference = _find(snapshot, f"{dataset}/{dataset}_true_result_set.json")
        if questions is None or reference is None:
            print(f"  {dataset}: questions or reference result set not in {snapshot}")
            total += len(SYSTEMS)
            continue
        gold = with_gold_results(
            parse_file(questions), parse_file(reference), source=reference.name
        )
        for system in SYSTEMS:
            tail = PUBLISHED_RUN.get((dataset, system), "")
            pred = _find(snapshot, f"{dataset}/{system}/{dataset}_pred_result_set{tail}.json")
            res = _find(snapshot, f"{dataset}/{system}/{_results_name(dataset, system)}")
            total += 1
            if pred is None or res is None:
                print(f"  {dataset} {system}: result set or results file not found")
                continue
            mine = _scored(gold, parse_file(pred).by_id())
            published = json.loads(res.read_text())
            same_q = sum(mine.get(q) == v for q, v in published.items())
            print(f"  {dataset} {system:25} {same_q} / {len(published)} entries equal")
            equal += mine == published
    return equal, total


# The published 2025 result sets (system, dataset) in datasets.reference_data/text2sparql
RESULT_SETS_2025 = (("WSE", "ck25"), ("LACODAM", "ck25"), ("IIS-Q", "db25"))
QUESTIONS_2025 = {"ck25": "ck25/questions.yml", "db25": "db25/questions_db25.yaml"}


def check_2025() -> tuple[int, int]:
    """Score the published 2025 result sets under ``text2sparql-2026``: every per-question value
    and the overall ``average`` must equal the 2025 file; return (equal files, files)."""
    from server.config import load_config

    root = load_config().datasets.reference_data / "text2sparql"
    equal = 0
    for system, dataset in RESULT_SETS_2025:
        gold = with_gold_results(
            parse_file(root / QUESTIONS_2025[dataset]),
            parse_file(root / dataset / f"{dataset}_true_result_set.json"),
            source=f"{dataset}_true_result_set.json",
        )
        results = root / "2025" / "results" / system
        mine = _scored(gold, parse_file(results / f"{dataset}_system_result_set.json").by_id())
        published = json.loads((results / f"{dataset}_eval.json").read_text())
        qnames = [q for q in published if q != "average"]
        same_q = sum(mine.get(q) == published[q] for q in qnames)
        overall = {k: v for k, v in published["average"].items() if "-" not in k}
        same = same_q == len(qnames) and mine["average"] == overall
        per_language = {k: v["set_F_ndcg"] for k, v in mine.items() if k.startswith("average-")}
        print(
            f"  {system:8} {dataset}: {same_q} / {len(qnames)} qnames equal, average "
            f"{'equal' if mine['average'] == overall else 'DIFFERS'}; 2026 per language "
            f"set_F_ndcg {per_language or '(one language: none)'}"
        )
        equal += same
    return equal, len(RESULT_SETS_2025)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshot", type=Path, help="a checkout of AKSW/text2sparql.aksw.org")
    args = parser.parse_args()
    print("1. published evaluation files rebuilt from their per-question values (2026 rules)")
    files = check_files()
    print(f"  {files[0]} / {files[1]} files equal in every qname and average")
    print("2. the challenge tables from the published runs, against the official tables")
    tables = check_tables(published_runs(KEPT))
    print(f"  {tables[0]} / {tables[1]} rows equal to the six printed decimals, same order")
    print("3. per-question values from the kept result-set excerpts")
    excerpts = check_excerpts()
    print(f"  {excerpts[0]} / {excerpts[1]} qnames equal")
    print("4. the published 2025 result sets under the 2026 rules (datasets.reference_data)")
    old = check_2025()
    print(f"  {old[0]} / {old[1]} result sets with the 2025 per-question values and average")
    checks = [files, tables, excerpts, old]
    if args.snapshot is not None:
        print(f"5. every published result set in {args.snapshot}")
        snap = check_snapshot(args.snapshot)
        print(f"  {snap[0]} / {snap[1]} evaluation files equal")
        checks.append(snap)
    return 0 if all(a == b for a, b in checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())

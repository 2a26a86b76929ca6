"""Reproduce FIRESPARQL's published exact-match summaries on SciQA with ``qabench evaluate``.

FIRESPARQL (github.com/sherry-pan/FIRESPARQL) publishes, per setting, a summary
``results/step3_sparql_running_against_orkg/exact_match_summary_<setting>.csv`` (one line per
model and round: model id, questions, successful queries, EM over the successful ones, EM over
all) and, for some of its runs, the run itself (``<folder>/**/<model id>/sparql_results.csv``;
the snapshot lacks files of 4 MiB and more). For every summary line whose run is stored this
script scores the run through ``qabench evaluate``'s path (``evaluators.evaluate``, profile
``execution-em``) against SciQA's test questions with the gold results the runs recorded (the
catalog's ``sciqa-test-orkg-2025``), and compares the three numbers, rounded to four decimals
as the summaries are.

    .venv/bin/python bench/sciqa.py [--firesparql DIR | --snapshots DIR] [--json]

``--firesparql`` is a checkout of the repository (or its bare git directory).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.snapshot import checkout, find, snapshots_root  # noqa: E402
from evaluators.evaluate import Evaluation, evaluate  # noqa: E402
from evaluators.formats import parse_bytes  # noqa: E402
from evaluators.formats.sciqa.gold import with_gold  # noqa: E402
from evaluators.model import Dataset, SourceFormat  # noqa: E402

FIRESPARQL_REPO = "sherry-pan/FIRESPARQL"
RESULTS = "results/step3_sparql_running_against_orkg"
QUESTIONS = "experiment_datasets/sciqa/test/questions.json"
# the run whose gold column the catalog's sciqa-test-orkg-2025 takes (the same in every run)
GOLD_RUN = f"{RESULTS}/one_shot/llama-3.2-3b-Instruct_round1/sparql_results.csv"
# summary file -> the folder of its runs
SETTINGS = {
    "oneshot": "one_shot",
    "vanilla": "vanilla",
    "vanilla_rag": "vanilla_rag",
    "ft": "ft",
    "ft_rag": "ft_rag",
}


@dataclass(frozen=True, slots=True)
class Line:
    """One summary line, the run it was computed from (if stored) and our numbers."""

    setting: str
    model: str
    published: tuple[int, float | None, float]  # successful, EM (successful), EM (all)
    run: str | None = None
    ours: tuple[int, float | None, float] | None = None

    @property
    def exact(self) -> bool:
        """Whether our numbers, rounded as the summary is, are the published ones."""
        return self.ours is not None and _shown(self.ours) == _shown(self.published)


def _shown(values: tuple[int, float | None, float]) -> tuple[str, ...]:
    successful, em_successful, em_all = values
    return (
        str(successful),
        "nan" if em_successful is None else f"{round(em_successful, 4):.4f}",
        f"{round(em_all, 4):.4f}",
    )


def summaries(root: Path) -> list[Line]:
    """Return every published summary line, with the path of its run where it is stored."""
    lines = []
    for setting, folder in SETTINGS.items():
        path = root / RESULTS / f"exact_match_summary_{setting}.csv"
        for row in path.read_text("utf-8").splitlines():
            if not row.strip():
                continue
            model, _total, successful, em_successful, em_all = row.split(",")
            published = (
                int(successful),
                float(em_successful) if em_successful else None,
                float(em_all),
            )
            runs = sorted((root / RESULTS / folder).glob(f"**/{model}/sparql_results.csv"))
            run = str(runs[0].relative_to(root)) if runs else None
            lines.append(Line(setting, model, published, run))
    return lines


def gold(root: Path) -> Dataset:
    """Return SciQA's test questions with the gold results FIRESPARQL's runs recorded."""
    questions = parse_bytes((root / QUESTIONS).read_bytes(), source="questions.json")
    assert questions.format is SourceFormat.SCIQA
    return with_gold(questions, (root / GOLD_RUN).read_bytes(), source="sparql_results.csv")


def score(root: Path, dataset: Dataset, line: Line) -> Line:
    """Return the line with our numbers for its run (unchanged when the run is not stored)."""
    if line.run is None:
        return line
    data = (root / line.run).read_bytes()
    result = evaluate(dataset, data, Evaluation(profile="execution-em", label="sciqa-test"))
    qa = result.get("QA")
    assert qa is not None
    em_all = qa.value("em_all")
    ours = (int(qa.value("successful") or 0), qa.value("em_successful"), em_all or 0.0)
    return Line(line.setting, line.model, line.published, line.run, ours)


def main() -> None:
    """Print every summary line: published, ours, and whether they agree."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--firesparql", help="a checkout (or bare git directory) of FIRESPARQL")
    parser.add_argument("--snapshots", help="the folder of repository snapshots")
    parser.add_argument("--json", action="store_true", help="print the lines as JSON")
    args = parser.parse_args()
    given = args.firesparql
    source = Path(given) if given else find(FIRESPARQL_REPO, snapshots_root(args.snapshots))
    if source is None:
        raise SystemExit("no snapshot of FIRESPARQL: give --firesparql DIR or --snapshots DIR")
    start = time.perf_counter()
    root = checkout(source, (RESULTS, QUESTIONS))
    dataset = gold(root)
    lines = [score(root, dataset, line) for line in summaries(root)]
    if args.json:
        print(json.dumps([_line_json(x) for x in lines], indent=1))
    else:
        for x in lines:
            ours = " / ".join(_shown(x.ours)) if x.ours else "(run not stored)"
            mark = "" if x.ours is None else ("  exact" if x.exact else "  DIFFERS")
            print(f"{x.setting:<12}{x.model:<38}{' / '.join(_shown(x.published)):<26}{ours}{mark}")
        scored = [x for x in lines if x.ours is not None]
        print(f"\n{sum(x.exact for x in scored)} of {len(scored)} summaries whose run is stored "
              f"reproduced exactly ({len(lines)} published)")  # fmt: skip
    print(f"{time.perf_counter() - start:.1f} s", file=sys.stderr)


def _line_json(x: Line) -> dict[str, object]:
    return {
        "setting": x.setting, "model": x.model, "published": list(x.published), "run": x.run,
        "ours": list(x.ours) if x.ours else None, "exact": x.exact,
    }  # fmt: skip


if __name__ == "__main__":
    main()

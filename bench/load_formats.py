"""Benchmark: our format parsers next to bare ``json.load`` / ElementTree on the shared files.

Parses every QALD-area file (QALD XML, QALD JSON, eQALD, NLQ, LC-QuAD) under
``<data>/qald`` with ``evaluators.formats.parse_file`` and with the bare standard-library
parser, and prints questions/second for both and their ratio, per kind of file and in total.
Each measurement is the best of ``--repeat`` runs. The lead extends this with the store write.

    .venv/bin/python bench/load_formats.py [--data ../shared/data] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
import xml.etree.ElementTree as ET  # trusted reference files; timing baseline only
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from evaluators.formats import parse_file  # noqa: E402
from server.config import load_config  # noqa: E402


@dataclass(frozen=True)
class Row:
    """One line of the report."""

    kind: str
    files: int
    questions: int
    bare_seconds: float
    ours_seconds: float

    @property
    def ratio(self) -> float:
        return self.ours_seconds / self.bare_seconds if self.bare_seconds else float("inf")


def qald_files(data: Path) -> list[Path]:
    """Return every .json and .xml file under ``data/qald``."""
    return sorted(p for p in (data / "qald").rglob("*") if p.suffix in (".json", ".xml"))


def bare_parse(path: Path) -> None:
    """Parse a file with the standard library only (the baseline)."""
    if path.suffix == ".json":
        with path.open("rb") as handle:
            json.load(handle)
        return
    # qald-5_train_raw.xml is malformed; the baseline stops at the error
    with contextlib.suppress(ET.ParseError):
        ET.parse(path)


def best_time(function: Callable[[Path], object], paths: list[Path], repeat: int) -> float:
    """Return the fastest of ``repeat`` runs of ``function`` over ``paths``, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for path in paths:
            function(path)
        best = min(best, time.perf_counter() - start)
    return best


def measure(data: Path, repeat: int) -> list[Row]:
    """Time both parsers per kind of file and in total."""
    groups: dict[str, list[Path]] = {}
    questions: dict[str, int] = {}
    for path in qald_files(data):
        dataset = parse_file(path)
        kind = dataset.format.value
        groups.setdefault(kind, []).append(path)
        questions[kind] = questions.get(kind, 0) + len(dataset.questions)
    rows = [
        Row(
            kind,
            len(paths),
            questions[kind],
            best_time(bare_parse, paths, repeat),
            best_time(parse_file, paths, repeat),
        )
        for kind, paths in sorted(groups.items())
    ]
    rows.append(
        Row(
            "total",
            sum(r.files for r in rows),
            sum(r.questions for r in rows),
            sum(r.bare_seconds for r in rows),
            sum(r.ours_seconds for r in rows),
        )
    )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=load_config().datasets.reference_data)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    rows = measure(args.data, max(1, args.repeat))
    if args.json:
        print(json.dumps([{**asdict(r), "ratio": r.ratio} for r in rows], indent=2))
        return 0
    print(
        f"{'kind':10} {'files':>5} {'questions':>9} {'bare q/s':>10} {'ours q/s':>10} "
        f"{'bare s':>8} {'ours s':>8} {'ratio':>6}"
    )
    for r in rows:
        print(
            f"{r.kind:10} {r.files:5} {r.questions:9} {r.questions / r.bare_seconds:10.0f} "
            f"{r.questions / r.ours_seconds:10.0f} {r.bare_seconds:8.3f} "
            f"{r.ours_seconds:8.3f} {r.ratio:6.1f}"
        )
    print("ratio = our parse time / bare json.load or ElementTree time on the same files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

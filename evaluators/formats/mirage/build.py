"""Rebuild MIRAGE's ``benchmark.json`` from the repository's ``rawdata/`` directory.

MIRAGE publishes both the raw datasets and the file built from them (``rawdata/build.py``).
This is the same procedure, written here from its description; the result is byte-identical to
the published file (checked against its SHA-256 and git blob id, ``docs/scoring.md``):

- ``medqa``: ``medqa/data_clean/questions/US/4_options/phrases_no_exclude_test.jsonl``, one
  question per line, keyed by its line number written with four digits (``0000``); the
  options as the line gives them, the answer its ``answer_idx``;
- ``medmcqa``: ``medmcqa/data/dev.json``, one question per line, keyed by its ``id``; options
  ``opa`` .. ``opd`` as A .. D, the answer the ``cop``-th letter;
- ``pubmedqa``: ``pubmedqa/data/test_set.json``, keyed by PMID; options yes, no, maybe; the
  answer the letter of ``final_decision``; ``PMID`` the key as a number;
- ``bioasq``: the yes/no questions of
  ``bioasq/Task{11,10,9,8,7}BGoldenEnriched/{y}B{n}_golden.json`` (years in that order,
  batches 1 .. the number of JSON files in the folder), keyed by ``id`` (a later copy of an
  id replaces the earlier one in its place); options yes, no; the answer the letter of the
  lower-cased ``exact_answer``; ``PMID`` the last path segment of each document URL, as a
  number;
- ``mmlu``: ``mmlu/data/test/<domain>_test.csv`` (no header: question, A, B, C, D, answer) for
  anatomy, clinical knowledge, college biology, college medicine, medical genetics and
  professional medicine, keyed ``<domain>-<row number in three digits>``.

The parts are written in the order medqa, medmcqa, pubmedqa, bioasq, mmlu, as JSON with an
indent of four and every non-ASCII character escaped. Reads the files it names, bounded by a
total size; writes nothing.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

from evaluators.errors import DatasetFormatError, DatasetTooLargeError

LETTERS = ("A", "B", "C", "D")
MMLU_DOMAINS = (
    "anatomy",
    "clinical_knowledge",
    "college_biology",
    "college_medicine",
    "medical_genetics",
    "professional_medicine",
)
BIOASQ_YEARS = (11, 10, 9, 8, 7)
# everything under rawdata/ the build reads is about 20 MB
DEFAULT_MAX_BYTES = 200_000_000

Entry = dict[str, object]


class _Reader:
    """Reads the raw files below one directory, within a total byte budget."""

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        self.left = max_bytes

    def text(self, relative: str) -> str:
        path = self.root / relative
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise DatasetFormatError(
                f"cannot read {relative} ({exc.strerror or exc}); expected MIRAGE's rawdata "
                "directory (the folder holding medqa/, medmcqa/, pubmedqa/, bioasq/, mmlu/)",
                source=str(path),
            ) from exc
        self.left -= len(data)
        if self.left < 0:
            raise DatasetTooLargeError(
                "the raw files are larger than the limit; raise datasets.max_file_bytes if "
                "they are genuine",
                source=str(self.root),
            )
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DatasetFormatError(
                f"{relative} is not UTF-8 (byte {exc.start})", source=str(path)
            ) from exc

    def json(self, relative: str, text: str | None = None) -> object:
        try:
            return json.loads(self.text(relative) if text is None else text)
        except json.JSONDecodeError as exc:
            raise DatasetFormatError(
                f"{relative}: {exc.msg}", source=str(self.root / relative), line=exc.lineno
            ) from exc

    def lines(self, relative: str) -> Iterator[Entry]:
        for number, line in enumerate(self.text(relative).splitlines(), 1):
            if line.strip():
                value = self.json(relative, line)
                if not isinstance(value, dict):
                    raise DatasetFormatError(
                        f"{relative} line {number}: expected a JSON object",
                        source=str(self.root / relative),
                        line=number,
                    )
                yield value


def _field(entry: Entry, key: str, where: str) -> object:
    try:
        return entry[key]
    except KeyError:
        raise DatasetFormatError(f"{where}: no {key!r}", source=where) from None


def _medqa(raw: _Reader) -> dict[str, Entry]:
    name = "medqa/data_clean/questions/US/4_options/phrases_no_exclude_test.jsonl"
    return {
        f"{n:04d}": {
            "question": _field(e, "question", name),
            "options": _field(e, "options", name),
            "answer": _field(e, "answer_idx", name),
        }
        for n, e in enumerate(raw.lines(name))
    }


def _medmcqa(raw: _Reader) -> dict[str, Entry]:
    name = "medmcqa/data/dev.json"
    out: dict[str, Entry] = {}
    for e in raw.lines(name):
        correct = _field(e, "cop", name)
        if not isinstance(correct, int) or not 1 <= correct <= len(LETTERS):
            raise DatasetFormatError(f"{name}: 'cop' {correct!r} is not 1 to 4", source=name)
        out[str(_field(e, "id", name))] = {
            "question": _field(e, "question", name),
            "options": {k: _field(e, f"op{k.lower()}", name) for k in LETTERS},
            "answer": LETTERS[correct - 1],
        }
    return out


def _labelled(value: object, labels: tuple[str, ...], where: str) -> str:
    if not isinstance(value, str) or value.lower() not in labels:
        raise DatasetFormatError(f"{where}: {value!r} is not one of {labels}", source=where)
    return LETTERS[labels.index(value.lower())]


def _pubmedqa(raw: _Reader) -> dict[str, Entry]:
    name = "pubmedqa/data/test_set.json"
    doc = raw.json(name)
    if not isinstance(doc, dict):
        raise DatasetFormatError(f"{name}: expected an object keyed by PMID", source=name)
    labels = ("yes", "no", "maybe")
    return {
        key: {
            "question": _field(e, "QUESTION", name),
            "options": dict(zip(LETTERS, labels, strict=False)),
            "answer": _labelled(_field(e, "final_decision", name), labels, f"{name} {key}"),
            "PMID": [int(key)],
        }
        for key, e in doc.items()
        if isinstance(e, dict)
    }


def _bioasq(raw: _Reader) -> dict[str, Entry]:
    labels = ("yes", "no")
    out: dict[str, Entry] = {}
    for year in BIOASQ_YEARS:
        folder = f"bioasq/Task{year}BGoldenEnriched"
        try:
            batches = sum(1 for p in (raw.root / folder).iterdir() if p.name.endswith(".json"))
        except OSError as exc:
            raise DatasetFormatError(f"cannot list {folder}", source=folder) from exc
        for batch in range(1, batches + 1):
            name = f"{folder}/{year}B{batch}_golden.json"
            doc = raw.json(name)
            entries = doc.get("questions") if isinstance(doc, dict) else None
            for e in entries if isinstance(entries, list) else ():
                if not isinstance(e, dict) or e.get("type") != "yesno":
                    continue
                documents = _field(e, "documents", name)
                out[str(_field(e, "id", name))] = {
                    "question": _field(e, "body", name),
                    "options": dict(zip(LETTERS, labels, strict=False)),
                    "answer": _labelled(_field(e, "exact_answer", name), labels, name),
                    "PMID": [int(str(url).split("/")[-1]) for url in documents]
                    if isinstance(documents, list)
                    else [],
                }
    return out


def _mmlu(raw: _Reader) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for domain in MMLU_DOMAINS:
        name = f"mmlu/data/test/{domain}_test.csv"
        for n, row in enumerate(csv.reader(io.StringIO(raw.text(name), newline=""))):
            if len(row) != 6:
                raise DatasetFormatError(
                    f"{name} row {n + 1}: expected 6 cells (question, A-D, answer)", source=name
                )
            out[f"{domain}-{n:03d}"] = {
                "question": row[0],
                "options": dict(zip(LETTERS, row[1:5], strict=True)),
                "answer": row[5],
            }
    return out


def build_benchmark(rawdata: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """Return ``benchmark.json`` built from MIRAGE's ``rawdata/`` directory.

    Raises:
        DatasetFormatError: a raw file is missing, unreadable or not in its dataset's shape.
        DatasetTooLargeError: the raw files together exceed ``max_bytes``.
    """
    raw = _Reader(rawdata, max_bytes)
    benchmark = {
        "medqa": _medqa(raw),
        "medmcqa": _medmcqa(raw),
        "pubmedqa": _pubmedqa(raw),
        "bioasq": _bioasq(raw),
        "mmlu": _mmlu(raw),
    }
    return json.dumps(benchmark, indent=4).encode("ascii")

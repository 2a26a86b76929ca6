"""MIRAGE's stored predictions as an answers file.

MIRAGE keeps one file per question and system, ``<split>_<question key>.json`` (split ``dev``
for MedMCQA, ``test`` for the others), below ``prediction/<part>/<setting>/<model>/``; each
holds a JSON list of the model's raw outputs (the first one is scored). ``pack`` reads such a
directory, or a path whose ``{dataset}`` stands for each of MIRAGE's parts (e.g.
``prediction/{dataset}/cot/OpenAI/gpt-4-32k``), into one answers document::

    {"mirage_predictions": {"bioasq:5be44bef133db5eb78000014": ["{\\"answer_choice\\": \\"A\\"}"]}}

``parse`` reads that document: each question's reply is the file's content as it was stored,
so the scoring rule (``evaluators.mirage``) sees what MIRAGE's evaluation saw.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from evaluators.errors import DatasetFormatError, DatasetTooLargeError
from evaluators.formats.mirage.benchmark import PARTS, question_id
from evaluators.formats.parsing.diagnostics import Diagnostics
from evaluators.formats.parsing.jsonfield import child, describe, expect_object
from evaluators.model import Dataset, Question, SourceFormat

KEY = "mirage_predictions"
PLACEHOLDER = "{dataset}"
_FILE = re.compile(r"(test|dev)_(.+)\.json\Z")


def is_predictions_path(path: Path) -> bool:
    """Return whether ``path`` names prediction files (a directory, or a ``{dataset}`` path).

    >>> is_predictions_path(Path("prediction/{dataset}/cot/OpenAI/gpt-4-32k"))
    True
    """
    return PLACEHOLDER in str(path) or path.is_dir()


def looks_like_predictions(doc: object) -> bool:
    """Return whether a decoded JSON document is a packed predictions document.

    >>> looks_like_predictions({KEY: {}}), looks_like_predictions({"questions": []})
    (True, False)
    """
    return isinstance(doc, dict) and set(doc) == {KEY}


def _part_of(folder: Path) -> str:
    found = [p for p in reversed(folder.parts) if p in PARTS]
    if not found:
        raise DatasetFormatError(
            f"no MIRAGE dataset ({', '.join(PARTS)}) in the path; name the folder of one "
            f"dataset's predictions, or write {PLACEHOLDER} where the dataset's name goes",
            source=str(folder),
        )
    return found[0]


def _folders(path: Path) -> list[tuple[str, Path]]:
    if PLACEHOLDER in str(path):
        found = [(part, Path(str(path).replace(PLACEHOLDER, part))) for part in PARTS]
        present = [(part, folder) for part, folder in found if folder.is_dir()]
        if not present:
            raise DatasetFormatError(
                f"no prediction folder for any of {', '.join(PARTS)}", source=str(path)
            )
        return present
    return [(_part_of(path), path)]


def pack(path: Path, *, max_bytes: int) -> bytes:
    """Return the predictions below ``path`` as one answers document (UTF-8 JSON).

    Only ``<split>_<key>.json`` files of each part's split are read (those MIRAGE's evaluation
    reads); their content must be JSON.

    Raises:
        DatasetFormatError: no folder, no MIRAGE dataset named in the path, or a file that
            is not JSON.
        DatasetTooLargeError: the files together exceed ``max_bytes``.
    """
    predictions: dict[str, object] = {}
    left = max_bytes
    for part, folder in _folders(path):
        split = PARTS[part].split
        try:
            names = sorted(p.name for p in folder.iterdir())
        except OSError as exc:
            raise DatasetFormatError(
                f"cannot list {folder}: {exc.strerror}", source=str(folder)
            ) from exc
        for name in names:
            match = _FILE.match(name)
            if match is None or match.group(1) != split:
                continue
            data = (folder / name).read_bytes()
            left -= len(data)
            if left < 0:
                raise DatasetTooLargeError(
                    f"the prediction files are larger than {max_bytes} bytes; raise "
                    "datasets.max_file_bytes if they are genuine",
                    source=str(path),
                )
            try:
                predictions[question_id(part, match.group(2))] = json.loads(data)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise DatasetFormatError(
                    f"not a JSON prediction file: {exc}", source=str(folder / name)
                ) from exc
    return json.dumps({KEY: predictions}, ensure_ascii=False).encode("utf-8")


def parse(doc: object, diag: Diagnostics) -> Dataset:
    """Parse a packed predictions document: each question's reply is its file's content.

    Raises:
        DatasetFormatError: a prediction that is not a list of model outputs (strings).
    """
    path = child("$", KEY)
    entries = expect_object(expect_object(doc, "$", diag).get(KEY), path, diag)
    questions = []
    for qid, value in entries.items():
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise diag.error(
                f"expected a list of model outputs (strings), found {describe(value)}",
                path=child(path, qid),
            )
        questions.append(Question(qid, reply=json.dumps(value, ensure_ascii=False)))
    return Dataset(SourceFormat.MIRAGE_PREDICTIONS, tuple(questions))

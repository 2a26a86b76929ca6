"""SciQA datasets: a questions file with its gold file, loaded as one version.

The gold is SciQA's ``answers.json`` or a FIRESPARQL run (``formats.sciqa.gold``). The
version's SHA-256 is computed over the questions file followed by the gold file, so the same
questions with other gold are another version. Everything is checked before anything is
stored.
"""

from __future__ import annotations

from pathlib import Path

from evaluators.datasets.library import LoadOutcome, dataset_name, store_dataset
from evaluators.formats import parse_bytes
from evaluators.formats.parsing.source import read_file
from evaluators.formats.sciqa.gold import with_gold
from evaluators.model import SourceFormat
from store.protocol import RdfStore


def load_sciqa(
    store: RdfStore,
    base: str,
    path: Path,
    *,
    gold_results: Path,
    max_bytes: int,
    name: str | None = None,
    title: str | None = None,
    knowledge_base: str | None = None,
    new_version: bool = False,
    license: str | None = None,
) -> LoadOutcome:
    """Load SciQA questions with the gold of ``gold_results`` as a version.

    Raises:
        DatasetFormatError: either file cannot be read or parsed, or they do not fit.
        DatasetNameConflictError: as ``library.load_dataset``.
    """
    questions_bytes = read_file(path, max_bytes)
    gold_bytes = read_file(gold_results, max_bytes)
    questions = parse_bytes(questions_bytes, source=path.name, format=SourceFormat.SCIQA)
    dataset = with_gold(questions, gold_bytes, source=gold_results.name)
    return store_dataset(
        store,
        base,
        dataset,
        questions_bytes + gold_bytes,
        name=name or dataset_name(dataset, path.name),
        new_version=new_version,
        source=str(path),
        knowledge_base=knowledge_base,
        title=title,
        license=license,
    )

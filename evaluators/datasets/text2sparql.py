"""TEXT2SPARQL datasets: a questions file with its gold answers, loaded as one version.

A TEXT2SPARQL questions file has no answers. Its gold comes either from a published reference
result set (``gold_results``) or from running the reference queries on a knowledge base
(``executor``). With both, the result set is the gold and the knowledge base is where the
reference queries are run to find the questions on which the two disagree (engine
differences, ``evaluators.knowledge.reference``); they become warnings of the version, and
``datasets check`` lists them. Everything is checked before anything is stored.

The version's SHA-256 is computed over the questions file followed by the result set (or by
the name of the knowledge base the gold came from), so the same questions with other gold are
another version.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from evaluators.datasets.library import LoadOutcome, store_dataset
from evaluators.errors import DatasetFormatError
from evaluators.formats import parse_file
from evaluators.formats.parsing.source import read_file
from evaluators.formats.text2sparql.gold import with_gold_results
from evaluators.knowledge.execution import QueryExecutor
from evaluators.knowledge.reference import gold_from_kb, reference_differences
from evaluators.model import Dataset, ParseWarning, SourceFormat
from store.protocol import RdfStore


@dataclass(frozen=True, slots=True)
class PreparedGold:
    """A questions file with its gold, what to hash, and what to tell the user."""

    dataset: Dataset
    content: bytes
    differences: dict[str, str]


def prepare_gold(
    questions: Dataset,
    questions_bytes: bytes,
    *,
    gold_results: Path | None,
    executor: QueryExecutor | None,
    max_bytes: int,
) -> PreparedGold:
    """Give a parsed questions file its gold answers.

    Raises:
        DatasetFormatError: neither source of gold answers was given, the result set does not
            parse or does not fit the questions.
    """
    if questions.format is not SourceFormat.TEXT2SPARQL:
        raise DatasetFormatError(
            "--gold-results is for TEXT2SPARQL questions files, this file is "
            f"{questions.format.value}"
        )
    if gold_results is not None:
        results = parse_file(gold_results, max_bytes=max_bytes)
        dataset = with_gold_results(questions, results, source=gold_results.name)
        differences = reference_differences(dataset, executor) if executor is not None else {}
        content = questions_bytes + read_file(gold_results, max_bytes)
        notes = [ParseWarning(text, qid) for qid, text in differences.items()]
        return PreparedGold(_warned(dataset, notes), content, differences)
    if executor is None:
        raise DatasetFormatError(
            "a TEXT2SPARQL questions file has no answers: give the reference result set "
            "(--gold-results FILE) or a knowledge base to run the reference queries on "
            "(--kb NAME|URL: a loaded knowledge base or a SPARQL endpoint)"
        )
    dataset, failures = gold_from_kb(questions, executor)
    notes = [ParseWarning(f"no gold answers: {f.reason}", f.question_id) for f in failures]
    content = questions_bytes + f"\n# gold: reference queries on {executor.description}".encode()
    return PreparedGold(_warned(dataset, notes), content, {})


def _warned(dataset: Dataset, notes: list[ParseWarning]) -> Dataset:
    return replace(dataset, warnings=(*dataset.warnings, *notes)) if notes else dataset


def load_text2sparql(
    store: RdfStore,
    base: str,
    path: Path,
    *,
    gold_results: Path | None,
    executor: QueryExecutor | None,
    max_bytes: int,
    name: str | None = None,
    title: str | None = None,
    knowledge_base: str | None = None,
    new_version: bool = False,
    license: str | None = None,
    source: str | None = None,
    catalog_name: str | None = None,
) -> tuple[LoadOutcome, dict[str, str]]:
    """Parse a questions file, give it its gold and store it as a new version.

    Returns:
        The load's outcome, and the engine differences found (question id -> how).

    Raises:
        DatasetFormatError: as ``prepare_gold``, or the file does not parse; nothing stored.
        DatasetNameConflictError: as ``library.store_dataset``.
    """
    data = read_file(path, max_bytes)
    questions = parse_file(path, format=SourceFormat.TEXT2SPARQL, max_bytes=max_bytes)
    prepared = prepare_gold(
        questions, data, gold_results=gold_results, executor=executor, max_bytes=max_bytes
    )
    outcome = store_dataset(
        store,
        base,
        prepared.dataset,
        prepared.content,
        name=name or questions.source_id or path.stem,
        source=source or str(path.resolve()),
        knowledge_base=knowledge_base,
        title=title,
        new_version=new_version,
        license=license,
        catalog_name=catalog_name,
    )
    return outcome, prepared.differences

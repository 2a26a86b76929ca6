"""SciQA questions with their gold: SciQA's ``answers.json`` or a FIRESPARQL run's gold column.

SciQA's questions file holds no answers. Its gold comes from SciQA's own ``answers.json`` (the
gold queries' results on the ORKG in 2023) or from a FIRESPARQL run, whose ``gt_message``
column records what the gold queries gave on the ORKG when the run was made (2025; the same in
every published run). ``with_gold`` tells the two apart by their content. Pure.
"""

from __future__ import annotations

from evaluators.errors import DatasetFormatError
from evaluators.formats.parsing.source import decode_text
from evaluators.formats.sciqa.firesparql import gold_from_run, looks_like_run, parse_run
from evaluators.formats.sciqa.questions import with_answers
from evaluators.model import Dataset, SourceFormat


def with_gold(questions: Dataset, data: bytes, *, source: str) -> Dataset:
    """Give SciQA questions their gold from ``answers.json`` or a FIRESPARQL run (its bytes).

    Raises:
        DatasetFormatError: the questions are not SciQA's, or the gold file is neither kind
            or does not fit them.
    """
    if questions.format is not SourceFormat.SCIQA:
        raise DatasetFormatError(
            f"a SciQA gold file needs SciQA questions; these are {questions.format.value}",
            source=source,
        )
    text = decode_text(data, source)
    if looks_like_run(text):
        return gold_from_run(questions, parse_run(text, source))
    return with_answers(questions, data, source=source)

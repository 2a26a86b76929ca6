"""Answer files as systems: parse an uploaded answers file, check it against its dataset, replay it.

An answers file is QALD-JSON, QALD-XML or eQALD (GERBIL QA accepts the same three), a simple
JSON list of ``{id, answers}`` or TSV ``id<TAB>answer`` lines (``formats.simple_answers``), the
TEXT2SPARQL client's answers (queries, run on the knowledge base) or result sets (scored as
they are), FIRESPARQL's runs, MIRAGE's packed predictions, or a BioASQ task-b response for
BioASQ datasets. No id may repeat. An id the dataset lacks is ignored and listed (GERBIL QA
ignored the extra entries of an uploaded file), or refused when the caller asks for strict
ids (``--strict-ids``, ``evaluation.strict_ids``); ``qabench evaluate`` and experiments apply
the same rule through ``answer_file_system``. Pure apart from parsing bytes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from evaluators.errors import AnswerFileError, AnswerFileMismatchError, DatasetFormatError
from evaluators.formats import parse_bytes
from evaluators.model import Dataset, Question, SourceFormat, question_order

# Answer files may be written in these formats (GERBIL QA accepts the first three).
ANSWER_FORMATS = (
    SourceFormat.QALD_JSON,
    SourceFormat.QALD_XML,
    SourceFormat.EQALD,
    SourceFormat.ANSWERS_JSON,
    SourceFormat.ANSWERS_TSV,
    SourceFormat.TEXT2SPARQL_ANSWERS,
    SourceFormat.TEXT2SPARQL_RESULTS,
    # issue 39: FIRESPARQL's executed runs, MIRAGE's stored predictions
    SourceFormat.FIRESPARQL_RUN,
    SourceFormat.MIRAGE_PREDICTIONS,
)


class AnswerFileSystem:
    """Answers read from a file, matched to gold questions by id (missing id: no answer).

    ``ignored`` lists the file's ids the dataset lacks (never asked, so never scored).
    """

    def __init__(self, answers: Mapping[str, Question], ignored: tuple[str, ...] = ()) -> None:
        self._answers = dict(answers)
        self.ignored = ignored

    def answer(self, question: Question, language: str) -> Question | None:
        """Return the file's entry for ``question.id``; ``None`` when the file has none.

        A question the file does not contain is not processed (the classic QALD script's
        rule); the scoring profile decides how it counts.
        """
        return self._answers.get(question.id)


def parse_answer_file(data: bytes, *, source: str, bioasq: bool = False) -> Dataset:
    """Parse an answers file, accepting only the answer formats.

    Args:
        data: the file content.
        source: the file name (for messages).
        bioasq: also accept a BioASQ task-b response (for BioASQ datasets).

    Raises:
        AnswerFileError: if it does not parse or is not in an answer format (or a BioASQ
            response when ``bioasq`` is true); the message gives the line or JSON path.
    """
    try:
        parsed = parse_bytes(data, source=source)
    except DatasetFormatError as exc:
        where = ""
        if exc.line is not None:
            where = f" at line {exc.line}" + (f", column {exc.column}" if exc.column else "")
        raise AnswerFileError(f"Answers file {source} cannot be read{where}: {exc.detail}") from exc
    formats = (*ANSWER_FORMATS, SourceFormat.BIOASQ) if bioasq else ANSWER_FORMATS
    if parsed.format not in formats:
        allowed = ", ".join(f.value for f in formats)
        raise AnswerFileError(
            f"Answers file {source} is {parsed.format.value}; expected one of: {allowed}"
        )
    return parsed


def answer_file_system(
    data: bytes, *, source: str, gold: Dataset, strict_ids: bool = False
) -> AnswerFileSystem:
    """Parse an answers file and check it against its dataset before anything runs.

    Args:
        data: the file content.
        source: the file name (for messages).
        gold: the dataset the answers were written for.
        strict_ids: refuse ids the dataset lacks instead of ignoring them.

    Returns:
        A system that replays the file; its ``ignored`` lists the ids the dataset lacks.

    Raises:
        AnswerFileError: if the file is not in an answer format, does not parse, holds no
            questions, or holds ids that appear twice or (with ``strict_ids``) that are not in
            ``gold`` (``AnswerFileMismatchError``).
    """
    parsed = parse_answer_file(data, source=source, bioasq=gold.is_bioasq)
    if not parsed.questions:
        raise AnswerFileError(
            f"Answers file {source} holds no questions, so there is nothing to evaluate; "
            "it needs one entry per answered question id"
        )
    counts = Counter(q.id for q in parsed.questions)
    known = {q.id for q in gold.questions}
    unknown = tuple(sorted((i for i in counts if i not in known), key=question_order))
    duplicated = tuple(sorted((i for i, n in counts.items() if n > 1), key=question_order))
    if duplicated or (unknown and strict_ids):
        raise AnswerFileMismatchError(source, unknown if strict_ids else (), duplicated)
    answers = {i: q for i, q in parsed.by_id().items() if i in known}
    return AnswerFileSystem(answers, unknown)


def ignored_ids_warning(source: str, dataset: str, ignored: tuple[str, ...]) -> str:
    """Return the warning that lists the ids of an answers file its dataset lacks.

    >>> ignored_ids_warning("a.json", "qald-8-test@1", ("99", "100"))
    "answers file a.json: 2 id(s) not in qald-8-test@1 were ignored: '99', '100'"
    """
    shown = ", ".join(repr(i) for i in ignored[:20])
    more = f", … ({len(ignored) - 20} more)" if len(ignored) > 20 else ""
    count = len(ignored)
    return f"answers file {source}: {count} id(s) not in {dataset} were ignored: {shown}{more}"

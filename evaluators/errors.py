"""Errors raised by the evaluators package.

EvaluationError
├── DatasetFormatError        a benchmark or answers file cannot be read (file, position)
│   └── DatasetTooLargeError  the file exceeds the configured size limit
├── UnknownDatasetError       no dataset of that name/id in the store or catalog
├── DatasetNameConflictError  a load names an existing dataset but brings different content
├── UnknownSubExperimentError an experiment type or profile id we do not have
├── AnswerFileError           an answers file that does not fit its dataset (unknown/duplicate ids)
├── NoQuestionsError          nothing to evaluate: no question has a text in the language
├── FetchError                a dataset download failed or did not verify
└── KnowledgeBaseError        a KB endpoint or graph could not be used
"""

from __future__ import annotations


class EvaluationError(Exception):
    """Root of every evaluators error."""


class DatasetFormatError(EvaluationError):
    """A benchmark or answers file that cannot be parsed.

    The message names the file, the position and what was expected.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        where = ""
        if source:
            where = source
            if line is not None:
                where += f":{line}"
                if column is not None:
                    where += f":{column}"
            where += ": "
        super().__init__(where + message)
        self.source = source
        self.line = line
        self.column = column
        self.detail = message


class DatasetTooLargeError(DatasetFormatError):
    """The file is larger than the configured limit."""


class UnknownDatasetError(EvaluationError):
    """No dataset with that name or id."""


class DatasetNameConflictError(EvaluationError):
    """A load would add a version to a dataset of the same name that holds other content.

    Unrelated files that happen to share a name (QALD-1's and QALD-3's ``dbpedia-test.xml``)
    must not become versions of each other: the caller says ``--name`` or ``--new-version``.
    """

    def __init__(self, name: str, latest: str, source: str) -> None:
        super().__init__(
            f"A dataset called {name!r} already exists ({latest}, loaded from {source}) with "
            "different content. Load this file under another name with --name NAME, or as a "
            f"new version of {name!r} with --new-version."
        )
        self.name = name


class UnknownSubExperimentError(EvaluationError):
    """An experiment type, measure or profile id that does not exist."""


class AnswerFileError(EvaluationError):
    """An answers file that does not fit its dataset."""


class NoQuestionsError(EvaluationError):
    """No question of the dataset has a text in the requested language: nothing to evaluate.

    Scoring zero questions would report micro F1 1.0 (nothing to find, nothing found), which a
    CI gate must never take for a pass.
    """

    def __init__(
        self, language: str, available: tuple[str, ...], questions: int, dataset: str = ""
    ) -> None:
        have = ", ".join(available) if available else "none"
        where = f" of {dataset}" if dataset else ""
        super().__init__(
            f"No question{where} has a text in language {language!r}, so there is nothing to "
            f"evaluate ({questions} questions; their languages: {have}). Choose one of these "
            "languages."
        )
        self.language = language
        self.available = available


class FetchError(EvaluationError):
    """A dataset download failed or its checksum did not verify."""


class KnowledgeBaseError(EvaluationError):
    """A knowledge base (graph or endpoint) could not be used."""


class UnknownExperimentError(EvaluationError):
    """No experiment with that id."""


class SystemCallError(EvaluationError):
    """One call to a system failed; the question counts as an error, scored as no answer.

    ``kind`` is a short stable label: ``timeout``, ``too-slow``, ``http-status``,
    ``connection``, ``too-large``, ``invalid-response``.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class UnknownSystemError(EvaluationError):
    """A built-in system name that is not registered, or an unusable system description."""


class AnswerFileMismatchError(AnswerFileError):
    """An answers file whose ids do not fit the dataset; lists the offending ids."""

    def __init__(
        self, source: str, unknown_ids: tuple[str, ...], duplicate_ids: tuple[str, ...]
    ) -> None:
        parts = []
        if unknown_ids:
            parts.append(f"{len(unknown_ids)} id(s) not in the dataset: {_id_list(unknown_ids)}")
        if duplicate_ids:
            parts.append(f"{len(duplicate_ids)} duplicated id(s): {_id_list(duplicate_ids)}")
        super().__init__(
            f"Answers file {source}: {'; '.join(parts)}. Check that the file was written for "
            "this dataset and that every question id appears once."
        )
        self.source = source
        self.unknown_ids = unknown_ids
        self.duplicate_ids = duplicate_ids


def _id_list(ids: tuple[str, ...], limit: int = 20) -> str:
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f", … ({len(ids) - limit} more)" if len(ids) > limit else "")

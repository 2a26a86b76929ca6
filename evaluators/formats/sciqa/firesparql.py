"""FIRESPARQL's published runs: the executed results of a system's queries and of the gold's.

FIRESPARQL (github.com/sherry-pan/FIRESPARQL) runs each generated SPARQL query and each gold
query of the SciQA test set against the ORKG and publishes one CSV per run
(``results/step3_sparql_running_against_orkg/<setting>/<model>_<round>/sparql_results.csv``):
``question_id,status,message,gt_message``. ``status`` is ``SUCCESS`` (``message`` is the
result table in SPARQL 1.1 TSV), ``ERROR`` (``message`` is the error) or ``NULL`` (nothing
was generated); ``gt_message`` is the gold query's result the run was compared with. A cell
that reads as missing to pandas, which FIRESPARQL's evaluation reads the file with (empty,
``null``, ``NULL``, ``NaN``, ``None``, ``NA``, ``N/A``, ...), is no result.

``parse_run`` gives the run as answers (each question's recorded execution, and its result
values where the table parses) and the gold results it was compared with (``references``),
which ``gold_from_run`` turns into the gold of SciQA's questions. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pyoxigraph import Literal, NamedNode, QueryResultsFormat, QuerySolutions, parse_query_results

from evaluators.errors import DatasetFormatError
from evaluators.formats.parsing.diagnostics import Diagnostics
from evaluators.formats.parsing.question_fields import warn_duplicate_ids
from evaluators.model import (
    ERROR,
    NULL,
    SUCCESS,
    AnswerSet,
    AnswerValue,
    Dataset,
    Execution,
    Question,
    SourceFormat,
)

HEADER = ("question_id", "status", "message", "gt_message")
# the strings pandas' read_csv reads as a missing value (its default na_values)
MISSING = frozenset(
    {
        "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
        "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
    }
)  # fmt: skip


def looks_like_run(text: str) -> bool:
    """Return whether a text is a FIRESPARQL run (its header line).

    >>> looks_like_run("question_id,status,message,gt_message\\nAQ1,NULL,null,null\\n")
    True
    """
    return text.lstrip("\ufeff").split("\n", 1)[0].rstrip("\r") == ",".join(HEADER)


def csv_records(text: str, source: str) -> list[list[str]]:
    """Return the records of a CSV text (RFC 4180: fields in double quotes may hold commas,
    line breaks and doubled quotes; records end with LF or CRLF).

    >>> csv_records('a,"say ""hi""\\nnow"\\r\\nd,\\n', "x")
    [['a', 'say "hi"\\nnow'], ['d', '']]

    Raises:
        DatasetFormatError: a quoted field that never ends, or text after a closing quote.
    """
    records: list[list[str]] = []
    record: list[str] = []
    i, n, line = 0, len(text), 1
    while i < n:
        if text[i] == '"':
            start = i + 1
            parts = []
            while True:
                end = text.find('"', i + 1)
                if end < 0:
                    raise DatasetFormatError("a quoted field never ends", source=source, line=line)
                parts.append(text[i + 1 : end])
                if text.startswith('"', end + 1):
                    parts.append('"')
                    i = end + 1
                    continue
                i = end + 1
                break
            value = "".join(parts)
            line += text.count("\n", start, i)
            if i < n and text[i] not in ",\r\n":
                raise DatasetFormatError(
                    "text after a closing quote; expected a comma or a line end",
                    source=source,
                    line=line,
                )
        else:
            stop = i
            while stop < n and text[stop] not in ",\r\n":
                stop += 1
            value, i = text[i:stop], stop
        record.append(value)
        if i < n and text[i] == ",":
            i += 1
            if i == n:
                record.append("")
            continue
        if text.startswith("\r\n", i):
            i += 2
        elif i < n:
            i += 1
        line += 1
        records.append(record)
        record = []
    if record:
        records.append(record)
    return records


def _cell(value: str) -> str | None:
    return None if value in MISSING else value


def _values(table: str) -> AnswerSet | None:
    """Return the values of a TSV result table, or ``None`` if it does not parse as one."""
    values: dict[AnswerValue, None] = {}
    try:
        solutions = parse_query_results(table.encode("utf-8"), format=QueryResultsFormat.TSV)
        if not isinstance(solutions, QuerySolutions):
            return None
        variables = tuple(v.value for v in solutions.variables)
        # the rows are read (and may fail) one at a time
        for solution in solutions:
            for variable in solutions.variables:
                term = solution[variable]
                if isinstance(term, NamedNode | Literal):
                    values.setdefault(term, None)
    except (SyntaxError, ValueError, OSError):
        return None
    return AnswerSet(tuple(values), variables=variables, has_bindings=True)


def execution(status: str | None, result: str | None) -> Execution:
    """Return a recorded execution (a missing status is ``NULL``).

    >>> execution(None, None)
    Execution(status='NULL', result=None)
    """
    return Execution(status or NULL, result)


def reference(result: str | None) -> Execution:
    """Return a gold query's recorded result as an execution: a table (a ``?var`` header)
    ran, other text is the error it gave, nothing is ``NULL``.

    >>> reference("?x\\n<http://o/R1>").status, reference("Invalid SPARQL query").status
    ('SUCCESS', 'ERROR')
    """
    if result is None:
        return Execution(NULL)
    return Execution(SUCCESS if result.lstrip().startswith("?") else ERROR, result)


@dataclass(frozen=True, slots=True)
class Run:
    """A FIRESPARQL run: its answers and the gold results it was compared with, by id."""

    answers: Dataset
    references: dict[str, Execution]


def parse_run(text: str, source: str) -> Run:
    """Parse a run's CSV text.

    Raises:
        DatasetFormatError: no ``question_id,status,message,gt_message`` header, a record
            with another number of fields, or an empty question id (with its line).
    """
    records = csv_records(text.lstrip("\ufeff"), source)
    if not records or tuple(records[0]) != HEADER:
        raise DatasetFormatError(
            f"expected the header {','.join(HEADER)} (a FIRESPARQL run)", source=source, line=1
        )
    diag = Diagnostics(source)
    answers: list[Question] = []
    references: dict[str, Execution] = {}
    for number, record in enumerate(records[1:], 2):
        if len(record) != len(HEADER) or not record[0].strip():
            raise DatasetFormatError(
                f"record {number}: expected 4 fields and a question id, found {len(record)} fields",
                source=source,
            )
        qid, status, message, gold = record[0].strip(), *map(_cell, record[1:])
        ran = execution(status, message)
        table = _values(message) if ran.succeeded and message else None
        answers.append(Question(qid, execution=ran, answers=(table,) if table else None))
        references.setdefault(qid, reference(gold))
    warn_duplicate_ids(tuple(answers), diag)
    dataset = Dataset(SourceFormat.FIRESPARQL_RUN, tuple(answers), warnings=diag.warnings())
    return Run(dataset, references)


def gold_from_run(questions: Dataset, run: Run) -> Dataset:
    """Give SciQA questions the gold results a FIRESPARQL run was compared with.

    Each question's gold is the recorded execution of its gold query, and its values where it
    ran and the table parses (else it has no gold answers: ``execution-em`` still reads the
    execution); a question the run does not cover keeps none (a warning says so).

    Raises:
        DatasetFormatError: the run names a question the questions file lacks.
    """
    known = questions.by_id()
    unknown = sorted(run.references.keys() - known.keys())
    if unknown:
        raise DatasetFormatError(
            f"the run names {len(unknown)} question(s) the questions file lacks, e.g. "
            f"{unknown[0]!r}"
        )
    diag = Diagnostics("run")
    merged = []
    for question in questions.questions:
        ran = run.references.get(question.id)
        if ran is None:
            diag.warn("no gold result in the run", question_id=question.id)
            merged.append(question)
            continue
        table = _values(ran.result) if ran.succeeded and ran.result else None
        merged.append(replace(question, execution=ran, answers=(table,) if table else None))
    return replace(
        questions, questions=tuple(merged), warnings=(*questions.warnings, *diag.warnings())
    )

"""The ``Article`` value and the validation every corpus record goes through.

Pure: builds values from decoded records and raises ``CorpusFormatError`` naming the source,
the line and the expected shape. No file access here (see ``rag.corpus.reader``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from rag.errors import CorpusFormatError

RECORD_SHAPE = (
    'an object {"pmid": "123", "title": "...", "abstract": "...", '
    '"mesh": ["..."] (optional), "year": 2020 (optional)}'
)
_YEAR = re.compile(r"\d{4}")


@dataclass(frozen=True, slots=True)
class Article:
    """One indexable abstract.

    ``pmid`` is a PubMed id (digits) or, for knowledge-base abstracts, the resource IRI.
    ``title`` and ``abstract`` are kept exactly as read: snippet offsets refer to them.
    """

    pmid: str
    title: str
    abstract: str
    mesh: tuple[str, ...] = ()
    year: int | None = None


@dataclass(frozen=True, slots=True)
class Deletion:
    """A citation PubMed withdrew (``DeleteCitation`` in an update file): remove it by PMID."""

    pmid: str


def articles_from_records(
    records: Iterable[tuple[str, str, str]], *, source: str = "<records>"
) -> Iterator[Article]:
    """Yield articles from ``(pmid or IRI, title, abstract)`` tuples, e.g. KB abstracts.

    Args:
        records: the tuples; the first element may be a PMID or a resource IRI.
        source: a label used in error messages.

    Returns:
        A lazy iterator of articles.

    Raises:
        CorpusFormatError: when a record is not three strings (``line`` is the record number).
    """
    for number, record in enumerate(records, start=1):
        if not (isinstance(record, tuple) and len(record) == 3):
            raise CorpusFormatError(
                f"record {number} is {record!r:.80}; expected (pmid, title, abstract)",
                source=source,
                line=number,
            )
        pmid, title, abstract = record
        raw = {"pmid": pmid, "title": title, "abstract": abstract}
        yield article_from_mapping(raw, source=source, line=number)


def article_from_mapping(raw: object, *, source: str, line: int | None) -> Article:
    """Validate one decoded record and build its ``Article``.

    Args:
        raw: the decoded JSON value (or the TSV row as a mapping).
        source: the file name for error messages.
        line: the record's line number, when known.

    Returns:
        The article.

    Raises:
        CorpusFormatError: when a field is missing or has the wrong type.
    """

    def fail(problem: str) -> CorpusFormatError:
        return CorpusFormatError(f"{problem}; expected {RECORD_SHAPE}", source=source, line=line)

    if not isinstance(raw, dict):
        raise fail(f"found {type(raw).__name__} {raw!r:.60}")
    missing = [key for key in ("pmid", "title", "abstract") if key not in raw]
    if missing:
        raise fail(f"missing {', '.join(repr(m) for m in missing)}")
    pmid = raw["pmid"]
    if isinstance(pmid, int) and not isinstance(pmid, bool):
        pmid = str(pmid)
    if not isinstance(pmid, str) or not pmid.strip() or len(pmid.split()) != 1:
        raise fail(f"'pmid' is {pmid!r:.60}, not a non-empty id without spaces")
    for key in ("title", "abstract"):
        if not isinstance(raw[key], str):
            raise fail(f"{key!r} is {type(raw[key]).__name__}, not a string")
    mesh = raw.get("mesh") or ()
    if not isinstance(mesh, list | tuple) or not all(isinstance(m, str) for m in mesh):
        raise fail(f"'mesh' is {mesh!r:.60}, not a list of strings")
    return Article(
        pmid=pmid.strip(),
        title=raw["title"],
        abstract=raw["abstract"],
        mesh=tuple(m.strip() for m in mesh if m.strip()),
        year=_year(raw.get("year"), fail),
    )


def _year(value: object, fail: Callable[[str], CorpusFormatError]) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 1000 <= value <= 2999:
        return value
    if isinstance(value, str) and _YEAR.fullmatch(value.strip()):
        return int(value)
    raise fail(f"'year' is {value!r:.20}, not a four-digit year")

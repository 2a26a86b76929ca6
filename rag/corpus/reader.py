"""Choose and run the reader for a corpus file (PubMed abstracts or KB abstracts).

Formats: JSON Lines, JSON, TSV (``rag.corpus.text_formats``) and PubMed XML
(``rag.corpus.pubmed_xml``); in-memory ``(pmid or IRI, title, abstract)`` tuples go through
``articles_from_records``. Readers are lazy and raise ``CorpusFormatError`` (file, line, expected
shape) while iterating. Nothing here touches the index.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path

from rag.corpus.article import Article, articles_from_records
from rag.corpus.bioasq_snippets import read_bioasq_snippets
from rag.corpus.pubmed_xml import read_pubmed_xml
from rag.corpus.text_formats import read_json, read_jsonl, read_tsv
from rag.errors import CorpusFormatError

__all__ = ["Article", "CorpusFormat", "articles_from_records", "detect_format", "read_corpus"]


class CorpusFormat(StrEnum):
    """The corpus file formats ``read_corpus`` understands."""

    JSONL = "jsonl"
    JSON = "json"
    TSV = "tsv"
    PUBMED_XML = "pubmed-xml"
    BIOASQ_SNIPPETS = "bioasq-snippets"


_SUFFIXES = {
    ".jsonl": CorpusFormat.JSONL,
    ".ndjson": CorpusFormat.JSONL,
    ".json": CorpusFormat.JSON,
    ".tsv": CorpusFormat.TSV,
    ".tab": CorpusFormat.TSV,
    ".xml": CorpusFormat.PUBMED_XML,
}


def detect_format(path: Path) -> CorpusFormat:
    """Return the corpus format implied by a file name (a ``.gz`` suffix is looked through).

    Args:
        path: the corpus file.

    Returns:
        The format.

    Raises:
        CorpusFormatError: when the suffix is not one we know.
    """
    suffix = Path(path.name.lower().removesuffix(".gz")).suffix
    if suffix not in _SUFFIXES:
        raise CorpusFormatError(
            f"cannot tell the corpus format from the suffix {suffix or '(none)'!r}; "
            f"expected one of {', '.join(sorted(_SUFFIXES))} (optionally .gz), or pass "
            f"--format {'|'.join(f.value for f in CorpusFormat)}",
            source=str(path),
        )
    return _SUFFIXES[suffix]


def read_corpus(path: Path, fmt: CorpusFormat | None = None) -> Iterator[Article]:
    """Yield the articles of one corpus file, validating each record.

    Args:
        path: the file; a ``.gz`` suffix means gzip-compressed.
        fmt: the format; ``None`` detects it from the suffix.

    Returns:
        A lazy iterator of articles in file order.

    Raises:
        CorpusFormatError: for an unknown suffix; while iterating, for an unreadable file or a
            malformed record.
    """
    readers = {
        CorpusFormat.JSONL: read_jsonl,
        CorpusFormat.JSON: read_json,
        CorpusFormat.TSV: read_tsv,
        CorpusFormat.PUBMED_XML: read_pubmed_xml,
        CorpusFormat.BIOASQ_SNIPPETS: read_bioasq_snippets,
    }
    return readers[fmt or detect_format(path)](path)

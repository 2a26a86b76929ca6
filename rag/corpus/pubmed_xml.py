"""Read PubMed XML (``PubmedArticleSet``, as in the annual baseline files) into articles.

Parsed with defusedxml in streaming mode: the standard ``<!DOCTYPE PubmedArticleSet ...>`` is
allowed (the external DTD is never fetched), any other document type, every entity declaration
and every external entity reference are refused. Book records (``PubmedBookArticle``) are
skipped. ``DeleteCitation`` blocks are skipped by ``read_pubmed_xml``; ``read_pubmed_records``
yields them as ``Deletion`` records, in file order, so an update file's deletions are applied.
Abstract sections are joined by one space without their labels; inline markup (``<i>``,
``<sup>`` ...) keeps its text.
"""

from __future__ import annotations

import gzip
import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from rag.corpus.article import Article, Deletion, article_from_mapping
from rag.errors import CorpusFormatError

DOCTYPE = "PubmedArticleSet"
_YEAR = re.compile(r"\b(\d{4})\b")


def read_pubmed_xml(path: Path) -> Iterator[Article]:
    """Yield the articles of a PubMed XML file, without its deletions (see ``read_pubmed_records``).

    Raises:
        CorpusFormatError: as ``read_pubmed_records``.
    """
    return (r for r in read_pubmed_records(path) if isinstance(r, Article))


def read_pubmed_records(path: Path) -> Iterator[Article | Deletion]:
    """Yield the articles and deleted citations of a PubMed XML file (optionally gzip-compressed).

    Args:
        path: the ``.xml`` or ``.xml.gz`` file.

    Returns:
        A lazy iterator of articles and ``Deletion`` records in file order.

    Raises:
        CorpusFormatError: on malformed XML (with its line), a forbidden DTD or entity, a
            root element other than ``PubmedArticleSet``, or an article without a PMID.
    """
    source = str(path)
    try:
        with _open_binary(path) as handle:
            yield from _articles(handle, source)
    except OSError as exc:
        raise CorpusFormatError(f"cannot read the file: {exc}", source=source) from exc


def _open_binary(path: Path) -> IO[bytes]:
    if path.name.lower().endswith(".gz"):
        return io.BufferedReader(gzip.open(path))
    return path.open("rb")


def _parser(source: str) -> DefusedXMLParser:
    parser = DefusedXMLParser(
        target=ET.TreeBuilder(), forbid_dtd=False, forbid_entities=True, forbid_external=True
    )

    def check_doctype(name: str, sysid: str | None, pubid: str | None, internal: bool) -> None:
        if name != DOCTYPE or internal:
            raise CorpusFormatError(
                f"document type {name!r}{' with an internal subset' if internal else ''} is not "
                f"allowed; expected PubMed XML (<!DOCTYPE {DOCTYPE} ...>) without declarations",
                source=source,
            )

    # Python 3 ElementTree keeps the expat parser in ``.parser``; defusedxml set its handlers there.
    parser.parser.StartDoctypeDeclHandler = check_doctype
    return parser


def _articles(handle: IO[bytes], source: str) -> Iterator[Article | Deletion]:
    # ElementTree's iterparse driven by the defused parser (entities and foreign DTDs refused).
    events = ET.iterparse(handle, events=("start", "end"), parser=_parser(source))  # noqa: S314
    number = 0
    try:
        for event, element in events:
            if event == "start":
                if number == 0 and element.tag != DOCTYPE:
                    raise CorpusFormatError(
                        f"root element <{element.tag}> is not <{DOCTYPE}>; expected PubMed XML",
                        source=source,
                    )
                number = max(number, 1)
                continue
            if element.tag == "PubmedArticle":
                yield _article(element, source, number)
                number += 1
                element.clear()
            elif element.tag == "DeleteCitation":
                for pmid in element.iterfind("PMID"):
                    if _text(pmid):
                        yield Deletion(_text(pmid))
                element.clear()
            elif element.tag == "PubmedBookArticle":
                element.clear()
    except ET.ParseError as exc:
        line, column = exc.position
        raise CorpusFormatError(
            f"malformed XML at column {column + 1}: {exc.msg}; expected PubMed XML",
            source=source,
            line=line,
        ) from exc
    except DefusedXmlException as exc:
        raise CorpusFormatError(
            f"refused XML: {exc}; PubMed XML needs no entity declarations", source=source
        ) from exc


def _article(element: ET.Element, source: str, number: int) -> Article:
    citation = element.find("MedlineCitation")
    pmid = _text(citation.find("PMID")) if citation is not None else ""
    if not pmid:
        raise CorpusFormatError(
            f"article {number} has no MedlineCitation/PMID; expected "
            "<PubmedArticle><MedlineCitation><PMID>...",
            source=source,
        )
    assert citation is not None
    article = citation.find("Article")
    title = _text(article.find("ArticleTitle")) if article is not None else ""
    sections = citation.iterfind("Article/Abstract/AbstractText")
    abstract = " ".join(text for text in (_text(s) for s in sections) if text)
    mesh = [_text(d) for d in citation.iterfind("MeshHeadingList/MeshHeading/DescriptorName")]
    raw = {
        "pmid": pmid,
        "title": title,
        "abstract": abstract,
        "mesh": mesh,
        "year": _year(citation),
    }
    return article_from_mapping(raw, source=source, line=None)


def _text(element: ET.Element | None) -> str:
    return "".join(element.itertext()).strip() if element is not None else ""


def _year(citation: ET.Element) -> str | None:
    for path in (
        "Article/Journal/JournalIssue/PubDate/Year",
        "Article/Journal/JournalIssue/PubDate/MedlineDate",
        "Article/ArticleDate/Year",
    ):
        match = _YEAR.search(_text(citation.find(path)))
        if match:
            return match.group(1)
    return None

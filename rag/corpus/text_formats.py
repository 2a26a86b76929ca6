"""Readers for the text corpus formats: JSON Lines, JSON and TSV.

JSON is a list of records, an object keyed by PMID, or PubMedQA's ``ori_pqal.json`` shape
(``QUESTION``, ``CONTEXTS``, ``MESHES``, ``YEAR`` per PMID). TSV has the columns ``pmid``,
``title``, ``abstract`` and optionally ``mesh`` (``;``-separated) and ``year``, with csv
quoting and an optional header. Every reader is a lazy iterator that raises
``CorpusFormatError`` with the file and line of a malformed record.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from rag.corpus.article import RECORD_SHAPE, Article, article_from_mapping
from rag.errors import CorpusFormatError

TSV_COLUMNS = ("pmid", "title", "abstract", "mesh", "year")
_TSV_SHAPE = "tab-separated columns pmid, title, abstract[, mesh (';'-separated), year]"


def open_text(path: Path) -> IO[str]:
    try:
        if path.name.lower().endswith(".gz"):
            return io.TextIOWrapper(gzip.open(path), encoding="utf-8-sig", newline="")
        return path.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise CorpusFormatError(f"cannot open the file: {exc.strerror}", source=str(path)) from exc


def read_jsonl(path: Path) -> Iterator[Article]:
    source = str(path)
    with open_text(path) as handle:
        number = 0
        try:
            for number, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                try:
                    raw = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise CorpusFormatError(
                        f"not JSON at column {exc.colno} ({exc.msg}); expected one "
                        f"{RECORD_SHAPE} per line",
                        source=source,
                        line=number,
                    ) from exc
                yield article_from_mapping(raw, source=source, line=number)
        except (UnicodeDecodeError, OSError, EOFError) as exc:
            raise CorpusFormatError(f"unreadable: {exc}", source=source, line=number + 1) from exc


def read_tsv(path: Path) -> Iterator[Article]:
    source = str(path)
    with open_text(path) as handle:
        reader = csv.reader(handle, delimiter="\t")
        columns: tuple[str, ...] | None = None
        try:
            for row in reader:
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if columns is None:
                    columns, is_header = _tsv_columns(row, source, reader.line_num)
                    if is_header:
                        continue
                if len(row) != len(columns):
                    raise CorpusFormatError(
                        f"found {len(row)} columns; expected {len(columns)} "
                        f"({', '.join(columns)}) as {_TSV_SHAPE}",
                        source=source,
                        line=reader.line_num,
                    )
                raw: dict[str, object] = dict(zip(columns, row, strict=True))
                raw["mesh"] = [m for m in str(raw.get("mesh", "")).split(";") if m.strip()]
                yield article_from_mapping(raw, source=source, line=reader.line_num)
        except (csv.Error, UnicodeDecodeError, OSError, EOFError) as exc:
            raise CorpusFormatError(
                f"unreadable TSV ({exc}); expected {_TSV_SHAPE}",
                source=source,
                line=reader.line_num or None,
            ) from exc


def _tsv_columns(first: list[str], source: str, line: int) -> tuple[tuple[str, ...], bool]:
    """Return the column names and whether the first row is a header."""
    cells = tuple(cell.strip().lower() for cell in first)
    if cells[0] == "pmid":
        unknown = [c for c in cells if c not in TSV_COLUMNS]
        if unknown or len(set(cells)) != len(cells) or not {"title", "abstract"} <= set(cells):
            raise CorpusFormatError(
                f"header {'|'.join(cells)!r:.80} is not valid; expected the columns "
                f"{', '.join(TSV_COLUMNS[:3])} and optionally mesh, year",
                source=source,
                line=line,
            )
        return cells, True
    if not 3 <= len(first) <= len(TSV_COLUMNS):
        raise CorpusFormatError(
            f"found {len(first)} columns; expected {_TSV_SHAPE}", source=source, line=line
        )
    return TSV_COLUMNS[: len(first)], False


def read_json(path: Path) -> Iterator[Article]:
    source = str(path)
    with open_text(path) as handle:
        try:
            text = handle.read()
        except (UnicodeDecodeError, OSError, EOFError) as exc:
            raise CorpusFormatError(f"unreadable: {exc}", source=source) from exc
    for key, value, line in _json_items(text, source):
        yield _json_article(key, value, source, line)


def _json_article(key: str | None, value: object, source: str, line: int) -> Article:
    if key is not None and isinstance(value, dict) and "CONTEXTS" in value:
        return _pubmedqa_article(key, value, source, line)
    if key is not None and isinstance(value, dict):
        value = {"pmid": key, **value}
    return article_from_mapping(value, source=source, line=line)


def _pubmedqa_article(pmid: str, value: dict[str, object], source: str, line: int) -> Article:
    """PubMedQA: no title; the abstract is the CONTEXTS sections joined by one space."""
    contexts = value.get("CONTEXTS")
    if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
        raise CorpusFormatError(
            f"PubMedQA entry {pmid!r}: 'CONTEXTS' is not a list of strings; expected "
            '{"QUESTION": "...", "CONTEXTS": ["..."], "MESHES": [...], "YEAR": "2011"}',
            source=source,
            line=line,
        )
    raw = {
        "pmid": pmid,
        "title": "",
        "abstract": " ".join(contexts),
        "mesh": value.get("MESHES") or [],
        "year": value.get("YEAR"),
    }
    return article_from_mapping(raw, source=source, line=line)


def _json_items(text: str, source: str) -> Iterator[tuple[str | None, object, int]]:
    """Yield ``(key or None, value, line)`` for each top-level entry, keeping line numbers."""
    decoder = json.JSONDecoder()
    lines = _LineCounter(text)
    pos = _skip_space(text, 0)
    if pos >= len(text) or text[pos] not in "[{":
        raise CorpusFormatError(
            f"expected a JSON array of records or an object keyed by PMID; each {RECORD_SHAPE}",
            source=source,
            line=lines.at(pos),
        )
    closing = "]" if text[pos] == "[" else "}"
    pos = _skip_space(text, pos + 1)
    while pos < len(text) and text[pos] != closing:
        key: str | None = None
        try:
            if closing == "}":
                key, pos = decoder.raw_decode(text, pos)
                pos = _skip_space(text, pos)
                if not isinstance(key, str) or not text.startswith(":", pos):
                    raise json.JSONDecodeError("expected a string key and ':'", text, pos)
                pos = _skip_space(text, pos + 1)
            start = pos
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise CorpusFormatError(
                f"not valid JSON at column {exc.colno} ({exc.msg})", source=source, line=exc.lineno
            ) from exc
        yield key, value, lines.at(start)
        pos = _skip_space(text, pos)
        if text.startswith(",", pos):
            pos = _skip_space(text, pos + 1)
        elif pos < len(text) and not text.startswith(closing, pos):
            raise CorpusFormatError(
                f"expected ',' or {closing!r} after an entry", source=source, line=lines.at(pos)
            )
    if pos >= len(text):
        raise CorpusFormatError(
            f"unterminated JSON: the file ends before the closing {closing!r}",
            source=source,
            line=lines.at(len(text)),
        )
    if text[pos + 1 :].strip():
        raise CorpusFormatError(
            f"trailing data after the closing {closing!r}; expected one JSON value",
            source=source,
            line=lines.at(pos),
        )


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


class _LineCounter:
    """Turn increasing character offsets into 1-based line numbers in linear time."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._pos = 0
        self._line = 1

    def at(self, pos: int) -> int:
        if pos < self._pos:
            return self._text.count("\n", 0, pos) + 1
        self._line += self._text.count("\n", self._pos, pos)
        self._pos = pos
        return self._line

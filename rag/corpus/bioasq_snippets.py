"""A corpus from the snippets of a BioASQ task-b file (``--format bioasq-snippets``).

BioASQ training files name their documents by PubMed URL only; the text they carry is in the
gold snippets. For retrieval experiments on those questions we rebuild, per PMID, a title and
an abstract by placing every snippet's text at its gold offset and filling the unknown rest
with spaces. Offsets of snippets we extract from that text therefore refer to the same
positions as the gold snippets' offsets, so BioASQ's character-overlap snippet measures stay
meaningful; only the words between gold snippets are missing.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from rag.corpus.article import Article
from rag.errors import CorpusFormatError

# Offsets beyond this are treated as broken data (abstracts are a few thousand characters).
_MAX_OFFSET = 100_000
SHAPE = 'a BioASQ task-b file {"questions": [{"snippets": [{"document", "text", ...}]}]}'


def _pmid(document: str) -> str:
    return document.rstrip("/").rsplit("/", 1)[-1]


def read_bioasq_snippets(path: Path) -> Iterator[Article]:
    """Yield one article per PMID that any snippet of the file cites.

    Raises:
        CorpusFormatError: if the file is not a BioASQ task-b JSON document.
    """
    try:
        doc = json.loads(path.read_text("utf-8-sig"))
        questions = doc["questions"]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise CorpusFormatError(f"not readable as {SHAPE}: {exc}", source=str(path)) from exc
    parts: dict[str, dict[str, list[tuple[int, str]]]] = defaultdict(lambda: defaultdict(list))
    for number, question in enumerate(questions, start=1):
        if not isinstance(question, dict):
            raise CorpusFormatError(
                f"question {number} is not an object; expected {SHAPE}", source=str(path)
            )
        for snippet in question.get("snippets") or ():
            try:
                text = str(snippet["text"])
                pmid = _pmid(str(snippet["document"]))
                section = _section(str(snippet.get("beginSection", "")))
                offset = int(snippet.get("offsetInBeginSection", 0))
            except (KeyError, TypeError, ValueError) as exc:
                raise CorpusFormatError(
                    f"question {number}: a snippet lacks document/text ({exc}); expected {SHAPE}",
                    source=str(path),
                ) from exc
            if section and text.strip() and pmid and 0 <= offset < _MAX_OFFSET:
                parts[pmid][section].append((offset, text))
    for pmid in sorted(parts):
        title, abstract = (_placed(parts[pmid][name]) for name in ("title", "abstract"))
        yield Article(pmid=pmid, title=title, abstract=abstract)


def _section(name: str) -> str | None:
    """Map a BioASQ section name to ``title``/``abstract``; later sections are left out.

    BioASQ 2013-2014 files write ``sections.0`` for the abstract and ``sections.1`` … for
    further sections whose offsets restart at 0, so only ``sections.0`` can share the abstract.
    """
    if name == "title":
        return "title"
    if name in ("abstract", "sections.0", "0"):
        return "abstract"
    return None


def _placed(pieces: list[tuple[int, str]]) -> str:
    """Return a text with each piece written at its offset and spaces elsewhere."""
    if not pieces:
        return ""
    length = max(offset + len(text) for offset, text in pieces)
    chars = [" "] * length
    for offset, text in sorted(pieces):
        chars[offset : offset + len(text)] = text
    return "".join(chars).rstrip()

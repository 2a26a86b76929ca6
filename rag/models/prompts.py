"""Prompts of the language-model stages and defensive parsing of what the model writes back.

Every prompt is a system line, the stage's few-shot examples (``rag/examples/*.json``, written
for qabench) as user/assistant turns, and the instruction for the new input. The parsers never
trust the output: they look for the expected wrapper (``##query##``, a JSON object or list),
tolerate code fences and chatter around it, and return ``None`` when nothing usable is there.
Pure apart from reading the packaged example files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from rag.models.generators import ChatMessage

SYSTEM = (
    "You are an expert in biomedical literature search and question answering. "
    "Follow the requested output format exactly."
)
_QUERY_SYNTAX = (
    "Query syntax: words match stemmed terms; put phrases in double quotes; join synonyms "
    "with OR inside parentheses and join the main concepts with AND; fields title:, "
    "abstract: and mesh: are allowed; * is a wildcard."
)
_MARKED = re.compile(r"##(.+?)##", re.DOTALL)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


@dataclass(frozen=True, slots=True)
class SnippetLine:
    """A snippet as the answer prompts show it."""

    pmid: str
    text: str


@cache
def examples(stage: str) -> tuple[dict[str, object], ...]:
    """Return the few-shot examples of ``stage`` (expansion, extraction, rerank, answer).

    Raises:
        FileNotFoundError: when the packaged example file is missing (a broken install).
    """
    data = resources.files("rag").joinpath("examples", f"{stage}.json").read_text("utf-8")
    found = json.loads(data)["examples"]
    return tuple(found)


def _s(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def expansion_messages(question: str, shots: int = 3) -> list[ChatMessage]:
    """Return the few-shot prompt that asks for a search query wrapped in ``##...##``."""
    out = [ChatMessage("system", SYSTEM)]
    for ex in examples("expansion")[:shots]:
        out += [
            ChatMessage("user", _expansion_request(_s(ex["question"]))),
            ChatMessage("assistant", f"##{_s(ex['query'])}##"),
        ]
    out.append(ChatMessage("user", _expansion_request(question)))
    return out


def _expansion_request(question: str) -> str:
    return (
        "Write a search query that finds PubMed abstracts answering the question. "
        f"{_QUERY_SYNTAX} Reply with the query between ## and ## and nothing else.\n"
        f"Question: {question}"
    )


def broaden_messages(question: str, query: str) -> list[ChatMessage]:
    """Return the prompt that asks for a broader query when ``query`` found nothing."""
    request = (
        "This search query found no PubMed abstract. Write a broader query for the same "
        "question: keep the main concepts, drop the less important ones, prefer classes to "
        "specific drug or gene names, use fewer quoted phrases and fewer ANDs. "
        f"{_QUERY_SYNTAX} Reply with the query between ## and ## and nothing else.\n"
        f"Question: {question}\nQuery that found nothing: {query}"
    )
    return [ChatMessage("system", SYSTEM), ChatMessage("user", request)]


def marked_query(text: str) -> str | None:
    """Return the query between the first pair of ``##`` markers (newlines become spaces).

    >>> marked_query("Sure! ##(a OR b)\\nAND c## done")
    '(a OR b) AND c'
    >>> marked_query("no markers") is None
    True
    """
    match = _MARKED.search(text)
    if match is None:
        return None
    query = " ".join(match.group(1).split())
    return query or None


def extraction_messages(question: str, title: str, abstract: str) -> list[ChatMessage]:
    """Return the prompt that asks for verbatim relevant sentences of one article as JSON."""
    out = [ChatMessage("system", SYSTEM)]
    for ex in examples("extraction"):
        out += [
            ChatMessage(
                "user", _extraction_request(_s(ex["question"]), _s(ex["title"]), _s(ex["abstract"]))
            ),
            ChatMessage("assistant", json.dumps({"snippets": ex["snippets"]})),
        ]
    out.append(ChatMessage("user", _extraction_request(question, title, abstract)))
    return out


def _extraction_request(question: str, title: str, abstract: str) -> str:
    return (
        "Copy the sentences of the article that help answer the question, exactly as written, "
        'character by character. Reply with JSON {"snippets": [...]}; use an empty list when '
        f"nothing is relevant.\nQuestion: {question}\nArticle:\n```\n{title}\n{abstract}\n```"
    )


def rerank_messages(question: str, snippets: Sequence[str]) -> list[ChatMessage]:
    """Return the prompt that asks for snippet numbers ordered by helpfulness as JSON."""
    out = [ChatMessage("system", SYSTEM)]
    for ex in examples("rerank"):
        shown = ex["snippets"]
        assert isinstance(shown, list)
        out += [
            ChatMessage("user", _rerank_request(_s(ex["question"]), [_s(s) for s in shown])),
            ChatMessage("assistant", json.dumps({"ranking": ex["ranking"]})),
        ]
    out.append(ChatMessage("user", _rerank_request(question, snippets)))
    return out


def _rerank_request(question: str, snippets: Sequence[str]) -> str:
    numbered = "\n".join(f"{i}: {text}" for i, text in enumerate(snippets))
    return (
        "Order the numbered snippets by how much they help answer the question, most helpful "
        'first. Reply with JSON {"ranking": [numbers]}.\n'
        f"Question: {question}\nSnippets:\n{numbered}"
    )


def _snippet_block(snippets: Sequence[SnippetLine]) -> str:
    return "\n".join(f"- {s.text} [{s.pmid}]" for s in snippets)


def answer_messages(
    question: str, snippets: Sequence[SnippetLine], *, cited: bool
) -> list[ChatMessage]:
    """Return the prompt for the short answer (``cited=False``) or the cited answer."""
    out = [ChatMessage("system", SYSTEM)]
    key = "cited_answer" if cited else "short_answer"
    # The worked example shows the citation format; a small model copies a short-answer example
    # into its answer, so the short answer is asked for without one.
    for ex in examples("answer") if cited else ():
        raw = ex["snippets"]
        assert isinstance(raw, list)
        lines = [SnippetLine(_s(s["pmid"]), _s(s["text"])) for s in raw]
        out += [
            ChatMessage("user", _answer_request(_s(ex["question"]), lines, cited)),
            ChatMessage("assistant", _s(ex[key])),
        ]
    out.append(ChatMessage("user", _answer_request(question, snippets, cited)))
    return out


def _answer_request(question: str, snippets: Sequence[SnippetLine], cited: bool) -> str:
    if cited:
        rule = (
            "Answer in at most 150 words. End every sentence with one to three PMIDs in square "
            "brackets, e.g. [12345678], taken only from the snippets below."
        )
    else:
        rule = "Answer concisely and correctly in at most 200 words, without citations."
    return f"{rule}\nQuestion: {question}\nSnippets:\n{_snippet_block(snippets)}"


def exact_messages(
    question: str, question_type: str, snippets: Sequence[SnippetLine]
) -> list[ChatMessage]:
    """Return the prompt for a BioASQ exact answer (yes/no, factoid or list) as JSON."""
    shape = {
        "yesno": '{"answer": "yes"} or {"answer": "no"}',
        "factoid": '{"answer": ["most likely name", "second guess", ...]} (at most 5)',
        "list": '{"answer": ["item", "item", ...]}',
    }[question_type]
    request = (
        f"Answer the question from the snippets. Reply with JSON {shape} and nothing else.\n"
        f"Question: {question}\nSnippets:\n{_snippet_block(snippets)}"
    )
    return [ChatMessage("system", SYSTEM), ChatMessage("user", request)]


def json_value(text: str) -> object | None:
    """Return the first JSON object or list found in ``text`` (fences and chatter ignored).

    >>> json_value('Here you go: ```json\\n{"ranking": [2, 0]}\\n``` hope it helps')
    {'ranking': [2, 0]}
    >>> json_value("nothing here") is None
    True
    """
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        for start, char in enumerate(candidate):
            if char not in "{[":
                continue
            try:
                value: object = decoder.raw_decode(candidate, start)[0]
            except json.JSONDecodeError:
                continue
            return value
    return None

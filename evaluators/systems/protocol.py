"""The ``QASystem`` role every system under test plays, its kinds, URL checks and call pacing.

A system is asked one question at a time and returns its answer as a ``Question`` (answers, and
optionally SPARQL, answer type and annotations). Three kinds exist: web services (the GERBIL QA
protocol, ``evaluators.systems.webservice``), uploaded answer files
(``evaluators.systems.answer_files``), and built-in systems that run in this process
(``evaluators.systems.registry``). ``RequestGate`` paces the calls to one system. This module
performs no store writes and keeps no global state.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from enum import StrEnum
from typing import Protocol, runtime_checkable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from evaluators.errors import (
    UnknownSystemError,
)
from evaluators.model import Question

# Query-string parameters whose values are credentials; they never reach the store.
_SECRET_PARAM = re.compile(
    r"(key|token|secret|passw|pwd|auth|credential|signature|sig|session)", re.IGNORECASE
)


class SystemKind(StrEnum):
    """How a system is reached (the literal values of ``qab:systemKind``)."""

    WEB_SERVICE = "web-service"
    ANSWER_FILE = "answer-file"
    BUILT_IN = "built-in"
    # the TEXT2SPARQL API: a GET per question, the answer one SPARQL query
    TEXT2SPARQL = "text2sparql-api"

    @property
    def is_http(self) -> bool:
        """Whether systems of this kind are reached over HTTP at a URL.

        >>> SystemKind.TEXT2SPARQL.is_http, SystemKind.ANSWER_FILE.is_http
        (True, False)
        """
        return self in (SystemKind.WEB_SERVICE, SystemKind.TEXT2SPARQL)


class QASystem(Protocol):
    """A question answering system under test.

    ``answer`` receives the gold question (a built-in system may use any of it; the web-service
    adapter sends only the question string) and returns the system's answer as a ``Question``
    with the same id, or ``None`` when the system has no answer to that question at all (an
    answers file without that id: not processed). Any exception it raises counts as one error
    for that question.
    """

    def answer(self, question: Question, language: str) -> Question | None:
        """Return the system's answer to ``question`` asked in ``language`` (``None``: none)."""
        ...


@runtime_checkable
class RetryingSystem(Protocol):
    """A system that retries failed calls and keeps, per question, the log of its retries."""

    def retries_of(self, question_id: str) -> tuple[str, ...]:
        """Return the retry log of the last time ``question_id`` was asked (empty: none)."""
        ...


def in_gold_sections(answer: Question, gold: Question) -> Question:
    """Return a system's BioASQ answer with its abstract snippets named as ``gold`` names them.

    BioASQ 2013-2014 gold files call the abstract ``sections.0``; the official evaluator compares
    section names literally (it only maps a system's ``0`` to a gold ``abstract``), so a system
    asked live (web service or built-in) that writes ``abstract`` gets ``sections.0`` for such
    gold questions. Only the naming convention of the gold snippets is read, never their
    content. Answer files are scored as uploaded and never pass through here.

    >>> from evaluators.model import BioasqGold, Snippet
    >>> gold = Question("q", bioasq=BioasqGold("summary", snippets=(
    ...     Snippet("d", "t", "sections.0", "sections.0", 0, 1),)))
    >>> answer = Question("q", bioasq=BioasqGold("summary", snippets=(
    ...     Snippet("d", "t", "abstract", "abstract", 0, 1),)))
    >>> in_gold_sections(answer, gold).bioasq.snippets[0].begin_section
    'sections.0'
    """
    numbered = gold.bioasq is not None and any(
        sn.begin_section.startswith("sections.") for sn in gold.bioasq.snippets
    )
    if not numbered or answer.bioasq is None:
        return answer
    snippets = tuple(
        replace(sn, begin_section="sections.0", end_section="sections.0")
        if sn.begin_section == "abstract"
        else sn
        for sn in answer.bioasq.snippets
    )
    return replace(answer, bioasq=replace(answer.bioasq, snippets=snippets))


def public_url(url: str) -> str:
    """Return ``url`` without user information, credential parameters or fragment.

    >>> public_url("https://bob:pw@qa.example.org/gerbil?apikey=1&lang=en#x")
    'https://qa.example.org/gerbil?lang=en'
    """
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal needs its brackets back
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    kept = urlencode([(k, v) for k, v in query if not _SECRET_PARAM.search(k)])
    return urlunsplit((parts.scheme, netloc, parts.path, kept, ""))


def check_service_url(url: str) -> str:
    """Return ``url`` stripped of blanks if it is an absolute http(s) URL.

    Raises:
        UnknownSystemError: if it is not.
    """
    cleaned = url.strip()
    parts = urlsplit(cleaned)
    try:
        _ = parts.port
    except ValueError as exc:
        raise UnknownSystemError(f"Invalid port in system URL {cleaned[:200]!r}") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnknownSystemError(
            f"System URL {cleaned[:200]!r} is not an absolute http(s) URL; expected e.g. "
            "http://localhost:8081/gerbil"
        )
    return cleaned


class RequestGate:
    """Bounds how many calls to one system run at once and how closely they follow each other."""

    def __init__(
        self,
        concurrency: int,
        min_interval_seconds: float = 0.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._slots = threading.BoundedSemaphore(max(1, concurrency))
        self._interval = max(0.0, min_interval_seconds)
        self._lock = threading.Lock()
        self._next_start = 0.0
        self._clock = clock
        self._sleep = sleep

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Wait for a free slot and for the minimum interval, then hold the slot."""
        with self._slots:
            if self._interval > 0:
                # Waiting inside the lock serialises the starts, so a late wake-up of one caller
                # can never bring the next one closer than the interval.
                with self._lock:
                    wait = self._next_start - self._clock()
                    if wait > 0:
                        self._sleep(wait)
                    self._next_start = self._clock() + self._interval
            yield

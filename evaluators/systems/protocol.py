"""QA systems under test: the ``QASystem`` role, answer files, built-in systems and their registry.

A system is asked one question at a time and returns its answer as a ``Question`` (answers, and
optionally SPARQL, answer type and annotations). Three kinds exist: web services (the GERBIL QA
protocol, in ``evaluators.systems.webservice``), uploaded answer files, and built-in systems that
run in this process (``gold`` here; the RAG system is registered by ``server/``, because
``evaluators`` never imports ``rag``). This module performs no store writes and keeps no global
state.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from evaluators.errors import (
    AnswerFileError,
    AnswerFileMismatchError,
    DatasetFormatError,
    UnknownSystemError,
)
from evaluators.formats import parse_bytes
from evaluators.model import Dataset, Question, SourceFormat

# Answer files may be written in these formats (GERBIL QA accepts the same three).
ANSWER_FORMATS = (SourceFormat.QALD_JSON, SourceFormat.QALD_XML, SourceFormat.EQALD)

# Query-string parameters whose values are credentials; they never reach the store.
_SECRET_PARAM = re.compile(
    r"(key|token|secret|passw|pwd|auth|credential|signature|sig|session)", re.IGNORECASE
)


class SystemKind(StrEnum):
    """How a system is reached (the literal values of ``qab:systemKind``)."""

    WEB_SERVICE = "web-service"
    ANSWER_FILE = "answer-file"
    BUILT_IN = "built-in"


class QASystem(Protocol):
    """A question answering system under test.

    ``answer`` receives the gold question (a built-in system may use any of it; the web-service
    adapter sends only the question string) and returns the system's answer as a ``Question``
    with the same id. Any exception it raises counts as one error for that question.
    """

    def answer(self, question: Question, language: str) -> Question:
        """Return the system's answer to ``question`` asked in ``language``."""
        ...


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


# ---------------------------------------------------------------------------- answer files


class AnswerFileSystem:
    """Answers read from a file, matched to gold questions by id (missing id: no answer)."""

    def __init__(self, answers: Mapping[str, Question]) -> None:
        self._answers = dict(answers)

    def answer(self, question: Question, language: str) -> Question:
        """Return the file's entry for ``question.id`` (an empty answer if there is none)."""
        return self._answers.get(question.id) or Question(id=question.id)


def parse_answer_file(data: bytes, *, source: str, bioasq: bool = False) -> Dataset:
    """Parse an answers file, accepting only the answer formats.

    Args:
        data: the file content.
        source: the file name (for messages).
        bioasq: also accept a BioASQ task-b response (for BioASQ datasets).

    Raises:
        AnswerFileError: if it does not parse or is not QALD-JSON, QALD-XML or eQALD (or a
            BioASQ response when ``bioasq`` is true).
    """
    try:
        parsed = parse_bytes(data, source=source)
    except DatasetFormatError as exc:
        raise AnswerFileError(f"Answers file {source} cannot be read: {exc.detail}") from exc
    formats = (*ANSWER_FORMATS, SourceFormat.BIOASQ) if bioasq else ANSWER_FORMATS
    if parsed.format not in formats:
        allowed = ", ".join(f.value for f in formats)
        raise AnswerFileError(
            f"Answers file {source} is {parsed.format.value}; expected one of: {allowed}"
        )
    return parsed


def answer_file_system(data: bytes, *, source: str, gold: Dataset) -> AnswerFileSystem:
    """Parse an answers file and check it against its dataset before anything runs.

    Args:
        data: the file content.
        source: the file name (for messages).
        gold: the dataset the answers were written for.

    Returns:
        A system that replays the file.

    Raises:
        AnswerFileError: if the file is not QALD-JSON, QALD-XML or eQALD, does not parse, or
            holds ids that are not in ``gold`` or appear twice (``AnswerFileMismatchError``).
    """
    parsed = parse_answer_file(data, source=source, bioasq=gold.format is SourceFormat.BIOASQ)
    counts = Counter(q.id for q in parsed.questions)
    known = {q.id for q in gold.questions}
    unknown = tuple(sorted((i for i in counts if i not in known), key=_natural))
    duplicated = tuple(sorted((i for i, n in counts.items() if n > 1), key=_natural))
    if unknown or duplicated:
        raise AnswerFileMismatchError(source, unknown, duplicated)
    return AnswerFileSystem(parsed.by_id())


def _natural(text: str) -> tuple[int, str]:
    return (int(text), "") if text.isdigit() else (1 << 62, text)


# ---------------------------------------------------------------------------- built-in systems


class GoldSystem:
    """The ``gold`` sanity system: answers every question with its gold data."""

    def answer(self, question: Question, language: str) -> Question:
        """Return the gold question itself."""
        return question


SystemFactory = Callable[[], QASystem]


@dataclass(frozen=True, slots=True)
class BuiltinInfo:
    """A registered built-in system."""

    name: str
    description: str
    concurrency: int


class SystemRegistry:
    """Built-in systems by name; ``server/`` adds factories (e.g. the RAG system) at start-up."""

    def __init__(self) -> None:
        self._factories: dict[str, tuple[BuiltinInfo, SystemFactory]] = {}

    def register(
        self, name: str, factory: SystemFactory, *, description: str = "", concurrency: int = 1
    ) -> None:
        """Add a built-in system.

        Args:
            name: the name used on the command line and in the store.
            factory: builds the system when a task needs it (may load models).
            description: one line for listings and the system's ``dct:description``.
            concurrency: how many questions may be asked at the same time.

        Raises:
            ValueError: if the name is taken or ``concurrency`` is below 1.
        """
        if name in self._factories:
            raise ValueError(f"A built-in system called {name!r} is already registered")
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self._factories[name] = (BuiltinInfo(name, description, concurrency), factory)

    def names(self) -> tuple[str, ...]:
        """Return the registered names, sorted."""
        return tuple(sorted(self._factories))

    def info(self, name: str) -> BuiltinInfo:
        """Return what is known about a built-in system.

        Raises:
            UnknownSystemError: if no system of that name is registered.
        """
        try:
            return self._factories[name][0]
        except KeyError:
            known = ", ".join(self.names()) or "none"
            raise UnknownSystemError(
                f"No built-in system called {name!r}; registered: {known}"
            ) from None

    def create(self, name: str) -> QASystem:
        """Build the named system.

        Raises:
            UnknownSystemError: if no system of that name is registered.
        """
        self.info(name)
        return self._factories[name][1]()


def builtin_registry() -> SystemRegistry:
    """Return a registry holding the systems ``evaluators`` itself provides (``gold``)."""
    registry = SystemRegistry()
    registry.register(
        "gold", GoldSystem, description="Answers with the gold data (sanity check).", concurrency=8
    )
    return registry


# ---------------------------------------------------------------------------- politeness


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

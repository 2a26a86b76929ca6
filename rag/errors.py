"""Errors raised by the rag package (the built-in literature retrieval system).

    RagError
    ├── IndexMissingError       no literature index in the configured directory
    ├── CorpusFormatError       a corpus file or record that cannot be read (file, line)
    ├── QuerySyntaxError        a malformed search query (position in the query)
    │   └── QueryTooBroadError  wildcards, fuzzy terms or ranges that would expand too far
    ├── ModelUnavailableError   a packaged model or its libraries cannot be loaded
    ├── QuestionError           an empty or enormous question (RAG answering)
    └── GeneratorError          a language-model call failed (the pipeline falls back)
        ├── GeneratorTimeoutError    no complete answer within the time limit
        ├── GeneratorConnectionError the endpoint refused or dropped the connection
        └── GeneratorResponseError   an HTTP error status or a malformed/wrongly shaped reply

Messages say what was wrong, where, what was expected and what to do next.
"""

from __future__ import annotations


class RagError(Exception):
    """Root of every rag error."""


class IndexMissingError(RagError):
    """The configured index directory holds no literature index yet."""


class CorpusFormatError(RagError):
    """A corpus file, line or record that does not have the expected shape.

    Attributes:
        source: the file (or a label for an in-memory source).
        line: the 1-based line number when known.
        detail: the message without the position prefix.
    """

    def __init__(self, message: str, *, source: str, line: int | None = None) -> None:
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {message}")
        self.source = source
        self.line = line
        self.detail = message


class QuerySyntaxError(RagError):
    """A search query the parser cannot take as written.

    Attributes:
        query: the query text.
        position: the 0-based character offset of the problem.
        detail: the message without the position and the caret line.
    """

    def __init__(self, message: str, *, query: str, position: int) -> None:
        caret = " " * position + "^"
        super().__init__(
            f"query syntax error at column {position + 1}: {message}\n  {query}\n  {caret}"
        )
        self.query = query
        self.position = position
        self.detail = message


class QueryTooBroadError(QuerySyntaxError):
    """A well-formed query whose wildcards, fuzzy terms or ranges would expand too far.

    It cannot run as written, like a malformed one, and is reported the same way (with the
    position of the part to narrow).
    """


class ModelUnavailableError(RagError):
    """A packaged model (or the library that loads it) is not installed or cannot load."""


class QuestionError(RagError):
    """A question the answering pipeline refuses: empty, or longer than the configured limit."""


class GeneratorError(RagError):
    """A language-model call that produced no usable text.

    The answering pipeline catches it per stage and falls back to that stage's extractive
    counterpart, recording a warning; it only escapes when a caller uses a generator directly.
    """


class GeneratorTimeoutError(GeneratorError):
    """The model (or the endpoint) did not finish within the time limit."""


class GeneratorConnectionError(GeneratorError):
    """The endpoint refused the connection or closed it before answering."""


class GeneratorResponseError(GeneratorError):
    """The endpoint answered with an error status, malformed JSON or JSON of the wrong shape."""

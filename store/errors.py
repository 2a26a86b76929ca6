"""Errors raised by the store package.

StoreError
├── StoreLockedError        another process holds the store directory open for writing
├── StoreFullError          a write failed because the disk is full (nothing was written)
├── QuerySyntaxError        SPARQL that does not parse (message and position)
├── UpdateRefusedError      an update the engine refused as written (a graph CLEARed that does
│                           not exist, CREATEd that does): nothing was written
├── UnsupportedFormatError  a media type or file extension we cannot read or write
├── RdfSyntaxError          RDF input that does not parse (file, line, column)
└── RemoteStoreError        a remote SPARQL store answered with an error or could not be reached
    └── RemoteWriteRefusedError  it answered a write with an error status (it ran, and refused)
"""

from __future__ import annotations

import errno


class StoreError(Exception):
    """Root of every store error."""


class StoreLockedError(StoreError):
    """The store directory is already open read-write in another process."""


class StoreFullError(StoreError):
    """A write failed because the disk holding the store is full; nothing was written."""


def write_error(message: str, exc: Exception) -> StoreError:
    """Return the error of a failed write: ``StoreFullError`` when the disk is full.

    RocksDB reports a full disk as an ``OSError`` without an errno, in its message.

    >>> type(write_error("x", OSError("IO error: No space left on device: ..."))).__name__
    'StoreFullError'
    """
    code = exc.errno if isinstance(exc, OSError) else None
    full = code == errno.ENOSPC or "No space left on device" in str(exc)
    return (StoreFullError if full else StoreError)(f"{message}: {exc}")


class QuerySyntaxError(StoreError):
    """A SPARQL query or update does not parse.

    Attributes:
        line: 1-based line of the error when the parser reports it.
        column: 1-based column of the error when the parser reports it.
    """

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


class UpdateRefusedError(StoreError):
    """The engine refused an update as written (a missing graph cleared or dropped without
    ``SILENT``, a graph created twice); nothing was written. The caller's mistake, not ours."""


class UnsupportedFormatError(StoreError):
    """No reader or writer for the requested format."""


class RdfSyntaxError(StoreError):
    """RDF input that does not parse."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


class RemoteStoreError(StoreError):
    """A remote SPARQL 1.1 store answered with an error or could not be reached."""


class RemoteWriteRefusedError(RemoteStoreError):
    """The remote store answered a write with an error status: the request ran to its end."""

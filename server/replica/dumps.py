"""The public dump as files made in the background, one per published checkpoint.

A dump holds every quad of a view of the public data (``server.replica.views``). It is written by
one background thread, never on a request thread: asked for a checkpoint whose file does not
exist yet, ``PublicDumps.request`` starts writing it and returns the growing file at once, so a
reader gets its first bytes while the engine is still writing (``follow`` reads up to what is
written and waits for more until the file is complete). Once complete, the file is served with a
length and ranges, and a gzip copy is made after it. Views that differ only in their write
generation (a private experiment ran) share one checkpoint, hence one file. Files of older
checkpoints are removed once a newer one is complete (a reader still holding one keeps reading
it). The writer works from a private hard-link copy of the checkpoint, so pruning views
meanwhile does no harm; a reader that goes away stops reading, and nothing else was doing work
for it.
"""

from __future__ import annotations

import gzip
import logging
import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pyoxigraph import RdfFormat

from server.replica.views import View, link_copy, log_fault
from store.errors import StoreError
from store.permissions import private_directory
from store.triplestore import TripleStore

log = logging.getLogger(__name__)

_CHUNK = 1 << 16
# How often a reader of a growing file looks for more bytes (seconds).
_POLL_SECONDS = 0.05
# Dumps written at once; beyond, readers get the newest dump there is (a consistent, slightly
# older snapshot, with its own validators) instead of a new writer per write.
MAX_WRITERS = 2


class DumpFailedError(StoreError):
    """The dump of a view could not be written (the reader gets a 503)."""


@dataclass(slots=True)
class DumpFile:
    """The dump of one checkpoint: its file, whether it is complete, its gzip copy."""

    key: str
    path: Path
    order: int
    complete: bool = False
    failed: bool = False
    compressed: Path | None = None


class PublicDumps:
    """Writes and keeps the dump files of the public views (one writer thread at a time)."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._lock = threading.Condition()
        self._files: dict[str, DumpFile] = {}
        self._names = 0
        private_directory(directory)
        for stale in directory.glob("dump-*"):
            if stale.is_dir():
                shutil.rmtree(stale, ignore_errors=True)
            else:
                stale.unlink(missing_ok=True)

    @staticmethod
    def key(view: View) -> str:
        """Return what names a view's content: its checkpoint (shared across generations)."""
        return view.path.name

    def request(self, view: View) -> DumpFile:
        """Return the dump of ``view``, starting to write it in the background if needed.

        When ``MAX_WRITERS`` dumps are being written already, the newest dump there is.
        """
        key = self.key(view)
        with self._lock:
            found = self._files.get(key)
            if found is not None and not found.failed:
                return found
            writing = [f for f in self._files.values() if not f.complete and not f.failed]
            if len(writing) >= MAX_WRITERS:
                return max(writing, key=lambda f: f.order)
            self._names += 1
            made = DumpFile(key, self._directory / f"dump-{self._names}.nq", self._names)
            made.path.touch(mode=0o600)
            self._files[key] = made
        threading.Thread(
            target=self._write, args=(view, made), name="qabench-dump", daemon=True
        ).start()
        return made

    def _write(self, view: View, target: DumpFile) -> None:
        work = self._directory / f"{target.path.stem}-copy"
        try:
            link_copy(view.path, work)
            store = TripleStore.open_read_only(work)
            try:
                with target.path.open("wb") as out:
                    store.raw.dump(out, RdfFormat.N_QUADS)
            finally:
                store.close()
        except (OSError, StoreError, ValueError) as exc:
            log_fault("the public dump could not be written", exc)
            with self._lock:
                target.failed = True
                self._files.pop(target.key, None)
                self._lock.notify_all()
            target.path.unlink(missing_ok=True)
            return
        finally:
            shutil.rmtree(work, ignore_errors=True)
        with self._lock:
            done = [f for f in self._files.values() if f.complete or f is target]
            newest = max(f.order for f in done)
            for old in [f for f in done if f.order < newest]:
                del self._files[old.key]
                self._remove(old)
            target.complete = True
            self._lock.notify_all()
        if target.order == newest:
            self._compress(target)

    @staticmethod
    def _remove(dump: DumpFile) -> None:
        dump.path.unlink(missing_ok=True)
        if dump.compressed is not None:
            dump.compressed.unlink(missing_ok=True)

    def _compress(self, target: DumpFile) -> None:
        packed = target.path.with_suffix(".nq.gz")
        partial = packed.with_suffix(".part")
        try:
            with target.path.open("rb") as source, gzip.open(partial, "wb", compresslevel=6) as out:
                shutil.copyfileobj(source, out, _CHUNK)
            os.replace(partial, packed)
        except OSError as exc:
            log_fault("the compressed public dump could not be written", exc)
            partial.unlink(missing_ok=True)
            return
        with self._lock:
            if self._files.get(target.key) is target:
                target.compressed = packed
                return
        packed.unlink(missing_ok=True)  # superseded meanwhile

    def wait_compressed(self, dump: DumpFile, timeout: float) -> Path | None:
        """Return the gzip copy of ``dump``, waiting at most ``timeout`` for it."""
        deadline = time.monotonic() + timeout
        while dump.compressed is None and time.monotonic() < deadline and not dump.failed:
            time.sleep(_POLL_SECONDS)
        return dump.compressed

    def follow(self, dump: DumpFile) -> Iterator[bytes]:
        """Yield the bytes of ``dump`` as they are written, until it is complete.

        Raises:
            DumpFailedError: if the writer failed (the reader's response stops short).
        """
        try:
            fh = dump.path.open("rb")
        except FileNotFoundError as exc:
            # failed and removed, or superseded and removed before this reader came
            raise DumpFailedError("The dump could not be written") from exc
        with fh:
            while True:
                chunk = fh.read(_CHUNK)
                if chunk:
                    yield chunk
                    continue
                if dump.failed:
                    raise DumpFailedError("The dump could not be written")
                if dump.complete:
                    rest = fh.read()
                    if not rest:
                        return
                    yield rest
                    continue
                with self._lock:
                    self._lock.wait(_POLL_SECONDS)

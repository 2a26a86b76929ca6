"""What a store's writes changed: the in-memory change log and the on-disk journal.

A store with a ``ChangeLog`` appends one ``Change`` per committed write: the quads it added and
removed when the write named them (``add``, ``apply``, ``replace_graph``), or the graphs whose
whole content may have changed (a load into a graph, a dropped graph), or ``everything`` for a
write whose effect is not known without evaluating it (an arbitrary SPARQL update, a load
without a target graph). A follower in the same process (the server's public mirror) drains the
log and replays it. A failed write records nothing there.

The ``ChangeJournal`` is the same knowledge at graph level, on disk, kept by every process that
opens the store for writing (the server and every command), so that what follows the store
across restarts (the public mirror, the experiment index) catches up with the writes made
since it last saw the store by reading the graphs they name, instead of reading the whole
store. Each entry is written *before* its write: a write that fails or is killed leaves an
entry too, which costs a follower a needless re-read, never a missed change. Entries are
numbered; the journal keeps the newest ``JOURNAL_ENTRIES`` and says from which number on it is
complete (``since`` answers ``None`` for an older mark: the follower must read everything).
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pyoxigraph import DefaultGraph, NamedNode, Quad

from store.errors import StoreError, write_error

log = logging.getLogger(__name__)

# Entries a journal keeps (the oldest half is dropped beyond it: a follower that far behind
# reads everything once). An entry is one line of graph IRIs, about 100 bytes.
JOURNAL_ENTRIES = 200_000
_HEADER = "qabench-journal 1 "
_EVERYTHING = "*"


@dataclass(frozen=True, slots=True)
class Change:
    """What one committed write changed."""

    added: tuple[Quad, ...] = ()
    removed: tuple[Quad, ...] = ()
    graphs: tuple[NamedNode, ...] = ()
    everything: bool = False
    # The number of the journal entry of this write (0: the store keeps no journal).
    journal: int = 0

    def touched(self) -> set[NamedNode]:
        """Return the named graphs this change is known to touch (empty for ``everything``)."""
        found = set(self.graphs)
        for quad in (*self.added, *self.removed):
            if not isinstance(quad.graph_name, DefaultGraph):
                found.add(quad.graph_name)  # type: ignore[arg-type]
        return found


class ChangeLog:
    """A thread-safe queue of changes with a sequence number per committed write."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._pending: list[Change] = []
        self._sequence = 0

    @property
    def sequence(self) -> int:
        """Return the number of changes recorded so far."""
        with self._lock:
            return self._sequence

    def record(self, change: Change) -> int:
        """Append ``change`` and return its sequence number."""
        with self._lock:
            self._pending.append(change)
            self._sequence += 1
            self._lock.notify_all()
            return self._sequence

    def record_quads(self, added: Iterable[Quad] = (), removed: Iterable[Quad] = ()) -> int:
        """Append the change of a write that added and removed the given quads."""
        return self.record(Change(tuple(added), tuple(removed)))

    def drain(self) -> tuple[list[Change], int]:
        """Return every pending change (oldest first) and the sequence they bring us to."""
        with self._lock:
            pending, self._pending = self._pending, []
            return pending, self._sequence

    def wait(self, after: int, timeout: float) -> bool:
        """Wait until a change after sequence ``after`` is recorded; return whether one was."""
        with self._lock:
            return self._lock.wait_for(lambda: self._sequence > after, timeout)


@dataclass(frozen=True, slots=True)
class JournalSpan:
    """What the writes after a mark may have changed: named graphs, or everything."""

    graphs: frozenset[str]
    everything: bool
    last: int


class ChangeJournal:
    """An append-only file naming the graphs each write of one store may change.

    One process at a time writes it (the one holding the store); ``note`` appends one line
    and returns its number, before the write it announces.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     journal = ChangeJournal(Path(tmp) / "store.journal")
    ...     first = journal.note(["http://x/g1"])
    ...     _ = journal.note(["http://x/g2", "http://x/g1"])
    ...     span = journal.since(first)
    ...     sorted(span.graphs), span.everything, journal.since(first - 1).last
    (['http://x/g1', 'http://x/g2'], False, 2)
    """

    def __init__(self, path: Path, *, keep: int = JOURNAL_ENTRIES) -> None:
        self.path = path
        self._keep = keep
        self._lock = threading.Lock()
        try:
            self._base, self._last, self._count, self.epoch = self._read_bounds()
        except StoreError as exc:
            # A damaged journal never stops the store: it is set aside and a new one (a new
            # epoch) makes every follower read the whole store once.
            log.warning("%s; starting a new change journal", exc)
            path.replace(path.with_name(path.name + ".damaged"))
            self._base, self._last, self._count, self.epoch = self._read_bounds()

    def _read_bounds(self) -> tuple[int, int, int, str]:
        """Return (base, last entry number, entries, epoch), creating a missing file."""
        if not self.path.exists():
            epoch = secrets.token_hex(8)
            self._rewrite(0, [], epoch)
            return 0, 0, 0, epoch
        try:
            lines = self.path.read_text("utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(f"Cannot read the store's change journal: {exc}") from exc
        header = lines[0].split(" ") if lines else []
        if len(header) != 4 or f"{header[0]} {header[1]} " != _HEADER or not header[2].isdigit():
            raise StoreError(f"{self.path.name} is not a qabench change journal")
        base, epoch = int(header[2]), header[3]
        numbers = [e[0] for line in lines[1:] if (e := _entry(line)) is not None]
        if self.path.stat().st_size and not self.path.read_bytes().endswith(b"\n"):
            # a line cut short by a crash: the next entry starts on a line of its own
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write("\n")
        return base, max(numbers, default=base), len(numbers), epoch

    def _rewrite(self, base: int, entries: list[str], epoch: str) -> None:
        partial = self.path.with_name(self.path.name + ".part")
        text = _HEADER + f"{base} {epoch}\n" + "".join(e + "\n" for e in entries)
        partial.write_text(text, "utf-8")
        partial.chmod(0o600)
        os.replace(partial, self.path)

    @property
    def last(self) -> int:
        """Return the number of the newest entry (the base when there is none)."""
        with self._lock:
            return self._last

    def note(self, graphs: Iterable[str] | None) -> int:
        """Append the graphs a write is about to change (``None``: anything); return its number.

        Raises:
            StoreError: if the entry cannot be written (the write must not happen then).
        """
        names = _EVERYTHING if graphs is None else " ".join(sorted(set(graphs)))
        with self._lock:
            number = self._last + 1
            line = f"{number}\t{names}\t.\n"
            try:
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(line)
            except OSError as exc:
                raise write_error("Cannot record the write in the change journal", exc) from exc
            self._last, self._count = number, self._count + 1
            if self._count > self._keep:
                self._trim()
            return number

    def _trim(self) -> None:
        lines = self.path.read_text("utf-8").splitlines()[1:]
        entries = [line for line in lines if _entry(line) is not None]
        kept = entries[len(entries) - self._keep // 2 :]
        first = _entry(kept[0]) if kept else None
        base = first[0] - 1 if first is not None else self._last
        self._rewrite(base, kept, self.epoch)
        self._base, self._count = base, len(kept)

    def since(self, mark: int, epoch: str | None = None) -> JournalSpan | None:
        """Return what the writes after entry ``mark`` (of journal ``epoch``) may have changed.

        ``None`` when the journal no longer reaches back to ``mark``, or ``mark`` is from
        another journal (another epoch): the caller must read the whole store.
        """
        with self._lock:
            if mark < self._base or mark > self._last:
                return None
            if epoch is not None and epoch != self.epoch:
                return None
            if mark == self._last:
                return JournalSpan(frozenset(), False, mark)
            text = self.path.read_text("utf-8")
        found: set[str] = set()
        last = mark
        for line in text.splitlines()[1:]:
            entry = _entry(line)
            if entry is None or entry[0] <= mark:
                continue
            last = max(last, entry[0])
            if entry[1] == _EVERYTHING:
                return JournalSpan(frozenset(), True, self.last)
            found.update(n for n in entry[1].split(" ") if n)
        return JournalSpan(frozenset(found), False, last)


def _entry(line: str) -> tuple[int, str] | None:
    """Return (number, graph names) of a complete journal line, None for anything else."""
    number, _, rest = line.partition("\t")
    if not rest.endswith("\t.") or not number.isdigit():
        return None
    return int(number), rest[: -len("\t.")]

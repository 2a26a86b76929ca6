"""`Services`: what ``create_app`` builds once and every view reaches through ``services()``.

It holds the configuration, the main store, the visibility index, the views and query-worker
pool of the public SPARQL endpoint, and caches keyed by the store generation
(``server.memory``). Every write path (experiments, uploads, dataset loads, SPARQL Update)
calls ``notify_write()`` after its transaction: that takes the store's committed changes from
its change log, brings the visibility index up to date at the cost of those changes, bumps the
generation (which empties the caches and changes every ETag) and hands the changes to the view
publisher, which makes them visible to SPARQL in the background. Nothing here is module-level
state. The app's experiment runner lives next to it, on ``app.extensions["experiment_runner"]``
(``experiment_runner()``).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from flask import current_app
from pyoxigraph import NamedNode

from evaluators.experiments.runner import ExperimentRunner
from server.config import Config
from server.listings import ExperimentIndex
from server.memory import GenerationCache, GraphValues
from server.replica.dumps import PublicDumps
from server.replica.views import View, ViewNotReadyError, ViewPublisher
from server.sparql.workers import QueryPool
from store.changes import Change
from store.protocol import RdfStore
from store.visibility import PrivateExperiment, VisibilityIndex, token_hash, unlocked

log = logging.getLogger(__name__)
T = TypeVar("T")

RUNNER_KEY = "experiment_runner"


def entity_tag(instance: str, generation: str, parts: tuple[str, ...]) -> str:
    """Return the entity tag of the representation named by ``parts`` at ``generation`` (of
    ``Services.etag``; connection workers tag their answers with it too).

    The digest is Python's own BLAKE2b (80 bits): measured in a connection worker's round trip,
    SHA-256 through OpenSSL (a digest context set up per call) cost 5-10 us of a trivial
    query's CPU, BLAKE2b no more than the noise.

    >>> entity_tag("i", "p3", ("sparql", "ASK {}"))
    'i-p3-6a913c3c54bc0045ac1a'
    """
    digest = hashlib.blake2b("\x00".join(parts).encode("utf-8"), digest_size=10).hexdigest()
    return f"{instance}-{generation}-{digest}"


@dataclass(frozen=True, slots=True)
class Visibility:
    """The graphs one reader may see at one store generation."""

    names: frozenset[str]
    unlocked: tuple[NamedNode, ...]
    private: tuple[PrivateExperiment, ...]

    def can_see(self, graph: NamedNode) -> bool:
        """Return whether ``graph`` is visible."""
        return graph.value in self.names

    @property
    def graphs(self) -> tuple[NamedNode, ...]:
        """Return the visible graphs, sorted (built on use: thousands at scale)."""
        return tuple(NamedNode(n) for n in sorted(self.names))

    def graphs_under(self, prefix: str) -> list[NamedNode]:
        """Return the visible graphs whose IRI starts with ``prefix``, sorted."""
        return [NamedNode(n) for n in sorted(self.names) if n.startswith(prefix)]

    @property
    def key(self) -> str:
        """Return a cache key part that differs between readers who see different graphs."""
        if not self.unlocked:  # an anonymous reader: every query asks
            return ""
        return ",".join(sorted(g.value for g in self.unlocked))


class _Writes:
    """The write generation, the public-content generation, and the lock that orders change
    handling. The public generation (and its time) moves only when a write changed what an
    anonymous reader sees: public validators follow it, so a private run moves none of them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.generation = 0
        self.public = 0
        self.public_time = time.time()
        # Writes that touched each graph, and writes that may have touched any (an update):
        # what is computed from one graph alone stays right while its epoch holds.
        self.graph_epochs: dict[str, int] = {}
        self.any_epoch = 0

    def graphs_changed(self, changes: list[Change]) -> None:
        """Move the epoch of every graph ``changes`` touched (all of them for ``everything``)."""
        for change in changes:
            if change.everything:
                self.any_epoch += 1
            for graph in change.touched():
                self.graph_epochs[graph.value] = self.graph_epochs.get(graph.value, 0) + 1

    def public_changed(
        self, changes: list[Change], before: frozenset[str], after: frozenset[str]
    ) -> None:
        """Move the public generation if ``changes`` touched public graphs or publication."""
        if (before is not after and before != after) or any(
            c.everything or not after.isdisjoint(g.value for g in c.touched()) for c in changes
        ):
            self.public += 1
            self.public_time = time.time()


@dataclass(frozen=True, slots=True)
class Services:
    """The application's resources; one instance per app, on ``app.extensions["services"]``."""

    config: Config
    store: RdfStore
    index: VisibilityIndex
    experiments: ExperimentIndex
    views: ViewPublisher
    pool: QueryPool
    dumps: PublicDumps
    cache: GenerationCache = field(default_factory=GenerationCache)
    # Bodies of pages and documents for anonymous readers, per *public* generation: a write
    # that changes nothing an anonymous reader sees (a private experiment running) keeps them.
    public_bodies: GenerationCache = field(default_factory=GenerationCache)
    # Visibility per index version: it changes far less often than the store does.
    visibility_cache: GenerationCache = field(default_factory=GenerationCache)
    writes: _Writes = field(default_factory=_Writes, compare=False, hash=False)
    # Values computed from one graph alone (page layouts), made in the background.
    graph_values: GraphValues = field(default_factory=GraphValues, compare=False, hash=False)
    # Distinguishes ETags of two server runs whose generation counters both start at 0.
    instance: str = field(default_factory=lambda: secrets.token_hex(4))
    # Called with each new generation, before the write that made it is answered (the
    # connection workers read it, server.handoff).
    generation_listeners: list[Callable[[int], None]] = field(default_factory=list)
    # Called by close() before the workers and the store are released (running experiments
    # are stopped there). Not part of equality or hashing.
    closers: list[Callable[[], None]] = field(default_factory=list, compare=False, hash=False)
    # When the store last changed as far as this process knows (seconds since the epoch): the
    # start, then every write. Readers send it as Last-Modified.
    last_write: list[float] = field(
        default_factory=lambda: [time.time()], compare=False, hash=False
    )

    # The base IRI without a trailing slash: read on every request, fixed with the config.
    base: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "base", self.config.base_iri)

    @property
    def generation(self) -> int:
        """Return the store generation (bumped by every write)."""
        return self.writes.generation

    @property
    def public_generation(self) -> int:
        """Return the generation of what anonymous readers see (moved by public writes only)."""
        return self.writes.public

    def remember(self, key: str, make: Callable[[], T]) -> T:
        """Return ``make()`` for ``key``, computed once per store generation."""
        return self.cache.get_or_make(self.generation, key, make)

    def remember_graph(
        self, graph: NamedNode, key: str, make: Callable[[], T], wait: float | None = None
    ) -> T:
        """Return ``make()`` for ``key``, computed from ``graph`` alone: kept until a write
        touches that graph (or may have touched any), not only for a store generation (the
        page layout of a 2.6 M-quad graph costs 6 s; a knowledge base's graph never changes).
        Made in the background (``GraphValues``); the caller waits up to ``wait`` seconds
        (``server.layout_wait_seconds`` unless given).

        Raises:
            server.memory.NotReadyError: if it is not made within the wait (503, Retry-After).
        """
        writes = self.writes
        with writes.lock:
            slot = (key, graph.value, writes.any_epoch, writes.graph_epochs.get(graph.value, 0))
        bound = self.config.server.layout_wait_seconds if wait is None else wait
        return self.graph_values.get(slot, make, bound)

    def notify_write(self) -> None:
        """Record that the store changed: index, generation, caches, and the SPARQL views."""
        self.last_write[0] = time.time()
        journal = self.store.changes
        with self.writes.lock:
            changes, sequence = journal.drain() if journal is not None else ([], 0)
            before = self.index.public_names()
            if changes:
                self.index.apply(changes)
                self.experiments.apply(changes)
            self.writes.generation += 1
            generation = self.writes.generation
            for listener in self.generation_listeners:
                listener(generation)
            public = self.index.public_names()
            known = changes if journal is not None else [Change(everything=True)]
            self.writes.public_changed(known, before, public)
            self.writes.graphs_changed(known)
            self.cache.clear()
            self.views.submit(generation, changes, public, sequence)

    def view(self, timeout: float = 5.0) -> View:
        """Return the newest SPARQL view that covers every write made before this call.

        Raises:
            ViewNotReadyError: if no such view could be had within ``timeout``.
        """
        return self.views.current(self.generation, timeout)

    def public_quads(self) -> int | None:
        """Return the number of public quads in the SPARQL view of the current generation.

        Waits for that view like a query does (None if it cannot be had within 5 s, or while
        the count is being redone).
        """
        try:
            return self.view().quads
        except ViewNotReadyError:
            return None

    @property
    def modified(self) -> float:
        """Return when the store last changed (seconds since the epoch; the start at first)."""
        return self.last_write[0]

    def etag(self, *parts: str, public: bool = False) -> str:
        """Return an entity tag for a representation that only changes with the store.

        ``parts`` name the representation (path, form, what the reader may see, query); they
        are hashed, so the tag is short and names nothing private. ``public``: the
        representation shows public content only, so its tag follows the public generation.
        """
        generation = f"p{self.writes.public}" if public else str(self.generation)
        return entity_tag(self.instance, generation, parts)

    def modified_for(self, public: bool) -> float:
        """Return ``Last-Modified`` of public content (``public``) or of everything."""
        return self.writes.public_time if public else self.modified

    def visibility(self, tokens: Iterable[str] = ()) -> Visibility:
        """Return what a reader presenting ``tokens`` may see (cached per index version)."""
        with self.writes.lock:
            state = self.index.version, self.index.public_names(), self.index.private()
        return self._visible(state, tuple(sorted(set(tokens))))

    def anonymous_visibility(self) -> Visibility | None:
        """Return what an anonymous reader may see, or None while a write is being recorded
        (for the SPARQL front, whose event loop must not wait for the write lock)."""
        if not self.writes.lock.acquire(blocking=False):
            return None
        try:
            state = self.index.version, self.index.public_names(), self.index.private()
        finally:
            self.writes.lock.release()
        return self._visible(state, ())

    def _visible(
        self,
        state: tuple[int, frozenset[str], tuple[PrivateExperiment, ...]],
        presented: tuple[str, ...],
    ) -> Visibility:
        version, public, private = state
        return self.visibility_cache.get_or_make(
            version,
            "visibility " + " ".join(token_hash(t) for t in presented),
            lambda: self._visibility(public, private, presented),
        )

    @staticmethod
    def _visibility(
        public: frozenset[str], private: tuple[PrivateExperiment, ...], tokens: tuple[str, ...]
    ) -> Visibility:
        opened = tuple(unlocked(private, tokens))
        return Visibility(public | {g.value for g in opened}, opened, private)

    def close(self) -> None:
        """Run the closers (last registered first), stop the query workers, release the store."""
        # Reverse order, like a context stack: the experiment runner, registered last, stops
        # its runs before the RAG service they may use is closed.
        for closer in reversed(self.closers):
            closer()
        self.graph_values.close()
        self.pool.close()
        self.views.close()
        self.store.close()


# Seconds between two snapshots of a changed experiment index (and one more at close).
SNAPSHOT_SECONDS = 30.0


class IndexSnapshots:
    """Writes the experiment index to disk in the background when it changed (``save``)."""

    def __init__(self, svc: Services, path: Path, every: float = SNAPSHOT_SECONDS) -> None:
        self._svc, self._path, self._every = svc, path, every
        # An index read back unchanged from ``path`` is not written again.
        self._saved = svc.experiments.on_disk
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="qabench-snapshots", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            self.save()

    def save(self) -> None:
        """Write the index when it changed since the last write (state taken under the lock)."""
        experiments = self._svc.experiments
        with self._svc.writes.lock:
            version = experiments.version
            if version == self._saved:
                return
            state = experiments.state()
        try:
            experiments.save(self._path, state)
            self._saved = version
        except OSError as exc:
            log.warning("the experiment index could not be saved: %s", exc)

    def close(self) -> None:
        """Stop, after a last snapshot."""
        self._stop.set()
        self._thread.join(10)
        self.save()


def services() -> Services:
    """Return the ``Services`` of the current Flask app."""
    found = current_app.extensions["services"]
    assert isinstance(found, Services)
    return found


def experiment_runner() -> ExperimentRunner:
    """Return the experiment runner of the current Flask app (built by ``create_app``)."""
    found = current_app.extensions[RUNNER_KEY]
    assert isinstance(found, ExperimentRunner)
    return found

"""Snapshots of the readable graphs that the SPARQL query workers load as in-memory replicas.

The main process owns the read-write store; pyoxigraph lets no other process open it safely.
After every write (``Services.notify_write``) the generation number goes up, and the next reader
that needs the replica writes two N-Quads files: the public graphs, and the graphs of private
experiments (the admin graph is never written). Workers load the public file always and the
private file only for requests that present an access token. Older files are removed once two
newer generations exist, so a worker still loading the previous one never loses its file.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pyoxigraph import NamedNode, Quad, RdfFormat, serialize

from store import graphs
from store.permissions import PRIVATE_FILE, private_directory, private_file
from store.protocol import RdfStore
from store.visibility import private_experiments

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One generation of the replica: where its public and private quads are."""

    generation: int
    public: Path
    private: Path
    public_quads: int
    private_quads: int


def _write(store: RdfStore, selected: Iterable[NamedNode], path: Path) -> int:
    count = 0

    def _quads() -> Iterable[Quad]:
        nonlocal count
        for graph in selected:
            for quad in store.quads(graph=graph):
                count += 1
                yield quad

    partial = path.with_suffix(".part")
    # Owner-only from the start: the private file holds unpublished experiments.
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    with os.fdopen(os.open(partial, flags, PRIVATE_FILE), "wb") as fh:
        serialize(_quads(), fh, RdfFormat.N_QUADS)
    private_file(partial)
    partial.replace(path)
    return count


def write_snapshot(store: RdfStore, base: str, directory: Path, generation: int) -> Snapshot:
    """Write the public and private graphs of ``store`` as one snapshot generation.

    Args:
        store: the main store.
        base: the base IRI (locates the admin and experiment graphs).
        directory: where snapshot files live (created if missing).
        generation: the store generation the snapshot reflects.

    Returns:
        The snapshot with its file paths and quad counts.
    """
    private_directory(directory)
    private = private_experiments(store, base)
    private_ids = {p.experiment_id for p in private}
    public = graphs.public_graphs(base, store.graphs(), private_ids)
    public_path = directory / f"public-{generation}.nq"
    private_path = directory / f"private-{generation}.nq"
    public_count = _write(store, public, public_path)
    private_count = _write(store, [p.graph for p in private], private_path)
    return Snapshot(generation, public_path, private_path, public_count, private_count)


class Replica:
    """Keeps one snapshot per store generation, written on demand and pruned as it goes."""

    def __init__(self, store: RdfStore, base: str, directory: Path) -> None:
        self._store = store
        self._base = base
        self._directory = directory
        self._lock = threading.Lock()
        self._generation = 0
        self._snapshots: list[Snapshot] = []
        for stale in directory.glob("*-*.nq"):
            stale.unlink(missing_ok=True)

    @property
    def generation(self) -> int:
        """Return the current store generation."""
        return self._generation

    def bump(self) -> int:
        """Record a write and return the new generation."""
        with self._lock:
            self._generation += 1
            return self._generation

    def current(self) -> Snapshot:
        """Return the snapshot of the current generation, writing it first if needed."""
        with self._lock:
            if self._snapshots and self._snapshots[-1].generation == self._generation:
                return self._snapshots[-1]
            snapshot = write_snapshot(self._store, self._base, self._directory, self._generation)
            self._snapshots.append(snapshot)
            log.debug(
                "replica generation %d: %d public, %d private quads",
                snapshot.generation,
                snapshot.public_quads,
                snapshot.private_quads,
            )
            while len(self._snapshots) > 2:
                old = self._snapshots.pop(0)
                old.public.unlink(missing_ok=True)
                old.private.unlink(missing_ok=True)
            return snapshot

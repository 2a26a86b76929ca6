"""Crash recovery: find tasks left queued or running by a process that is gone, mark them.

A process that runs an experiment records itself (``host:pid:start-time``) in the private admin
graph. When any process opens the store for experiments it calls ``recover_interrupted``: the
queued and running tasks of every experiment that neither this process nor another live process
on this host is running become ``interrupted`` (GERBIL code -107), in one transaction. The
start time in the token tells a reused pid from the original process.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable, Collection
from datetime import datetime
from pathlib import Path

from pyoxigraph import Literal, Quad

from evaluators.experiments import model, rdf
from evaluators.experiments.read import list_experiments
from store import graphs, queries
from store.protocol import RdfStore
from vocab import iris
from vocab.standard import PROV

log = logging.getLogger(__name__)

INTERRUPTED_MESSAGE = (
    "The process running this experiment stopped before the task finished; "
    "`qabench experiment resume ID` finishes it"
)


def process_token(pid: int | None = None) -> str:
    """Return ``host:pid:start`` naming a process (``start`` is empty where /proc is missing)."""
    pid = os.getpid() if pid is None else pid
    try:
        # /proc/<pid>/stat: the 22nd field is the start time in clock ticks after boot; the
        # command name (field 2) may contain spaces, so count from its closing parenthesis.
        stat = Path(f"/proc/{pid}/stat").read_text()
        start = stat.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        start = ""
    return f"{socket.gethostname()}:{pid}:{start}"


def is_process_alive(token: str) -> bool:
    """Return whether the process a ``process_token`` names still runs.

    A token from another host cannot be checked and counts as alive: never take over a run
    that may still be going on.
    """
    host, _, rest = token.partition(":")
    pid_text, _, start = rest.partition(":")
    if host != socket.gethostname():
        return True
    if not pid_text.isdigit():
        return False
    if start:
        return process_token(int(pid_text)) == token
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def task_state_quads(store: RdfStore, base: str, experiment_id: str, number: int) -> list[Quad]:
    """Return the quads currently stating a task's state (``rdf.STATE_PREDICATES``)."""
    node = iris.task_iri(base, experiment_id, number)
    g = graphs.experiment_graph(base, experiment_id)
    return [q for p in rdf.STATE_PREDICATES for q in store.quads(node, p, None, g)]


def started_at(state: list[Quad]) -> datetime | None:
    """Return the start time among a task's state quads, if it has one."""
    for quad in state:
        if quad.predicate == PROV.startedAtTime and isinstance(quad.object, Literal):
            return datetime.fromisoformat(quad.object.value)
    return None


def recover_interrupted(
    store: RdfStore,
    base: str,
    *,
    live: Collection[str] = (),
    on_write: Callable[[], None] | None = None,
) -> list[str]:
    """Mark queued and running tasks of experiments no live process runs as interrupted.

    Args:
        store: the store.
        base: the base IRI.
        live: ids of the experiments this process is running right now.
        on_write: called after the write, if anything was written.

    Returns:
        The ids of the experiments whose tasks were marked, sorted.
    """
    rows = store.select(queries.load("experiment_open_tasks"))
    if not rows:
        return []
    runners = {o.id: o.runner for o in list_experiments(store, base)}
    me = process_token()
    remove: list[Quad] = []
    add: list[Quad] = []
    touched: set[str] = set()
    for row in rows:
        experiment = row["experiment"]
        eid = iris.experiment_id_of(experiment.value)
        runner = runners.get(eid)
        if eid in live or (runner and runner != me and is_process_alive(runner)):
            continue
        number = iris.task_number_of(row["task"].value)
        if number is None:
            continue
        old = task_state_quads(store, base, eid, number)
        state = model.TaskState(
            model.TaskStatus.INTERRUPTED,
            model.CODE_INTERRUPTED,
            message=INTERRUPTED_MESSAGE,
            started=started_at(old),
        )
        remove += old
        add += rdf.state_quads(base, eid, number, state)
        touched.add(eid)
    if touched:
        store.apply(remove=remove, add=add)
        if on_write is not None:
            on_write()
        log.warning("Marked unfinished tasks as interrupted in: %s", ", ".join(sorted(touched)))
    return sorted(touched)

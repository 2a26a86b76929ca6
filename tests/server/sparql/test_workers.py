"""Query workers end with their server, however it ends, and bound their own CPU time (issue 41:
after ``kill -9`` of ``qabench serve`` a worker in the middle of a heavy query kept a core busy
for minutes, since the time limit is enforced by the process that died)."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import socket
import subprocess
import sys
import time
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

import httpx
import pytest
from pyoxigraph import Literal, NamedNode, Quad

from server.sparql.jobs import QueryJob
from server.sparql.workers import worker_main
from store.triplestore import TripleStore
from tests import REPO

# A cross product of 40 quads, five ways: minutes of evaluation.
HEAVY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"


def _view(tmp_path: Path) -> Path:
    folder = tmp_path / "view"
    store = TripleStore.open(folder)
    store.add(
        [
            Quad(
                NamedNode(f"http://e/{n}"),
                NamedNode("http://e/p"),
                Literal(str(n)),
                NamedNode("http://g"),
            )
            for n in range(40)
        ]
    )
    store.close()
    return folder


def _job(view: Path) -> QueryJob:
    return QueryJob(
        query=HEAVY,
        base_iri="http://qabench.test/sparql",
        view=str(view),
        default_graphs=None,
        named_graphs=None,
        results_media="application/sparql-results+json",
        rdf_media=None,
        max_rows=100,
        truncation_note="http://qabench.test/sparql#truncation",
    )


def _start(view: Path, cpu_seconds: float) -> tuple[Connection, BaseProcess]:
    context = multiprocessing.get_context("forkserver")
    parent, child = context.Pipe()
    args = (child, 0, cpu_seconds) if cpu_seconds else (child, 0)
    process = context.Process(target=worker_main, args=args, daemon=True)
    process.start()
    child.close()
    assert parent.poll(60), "the worker did not become ready"
    parent.recv_bytes()
    parent.send_bytes(pickle.dumps(("query", tuple(_job(view)))))
    return parent, process


def _ended_within(process: BaseProcess, seconds: float) -> bool:
    process.join(seconds)
    ended = not process.is_alive()
    if not ended:
        process.kill()
        process.join(5)
    return ended


def test_a_worker_leaves_when_the_serving_process_end_closes_mid_query(tmp_path: Path) -> None:
    parent, process = _start(_view(tmp_path), 0)
    time.sleep(1.0)  # the query runs
    assert process.is_alive()
    parent.close()  # as when the serving process dies, by kill -9 or otherwise
    # A liveness bound, not a speed: the query has no limit of its own, so a worker that went on
    # would still run when the join gives up, however loaded the machine.
    assert _ended_within(process, 120.0), "the worker went on after its server's end closed"


def test_a_worker_bounds_its_own_cpu_time(tmp_path: Path) -> None:
    parent, process = _start(_view(tmp_path), 1.0)
    try:
        # Nobody stops it from outside: the kernel ends it once the job's CPU time is spent
        # (1 s limit + 2 s grace, whole seconds). CPU seconds, not wall seconds: on a loaded
        # machine they take longer to spend, so the join is a liveness bound (the query would
        # run on for hours without the limit) and the signal shows which limit ended it.
        assert _ended_within(process, 300.0), "the worker ran on past its own CPU limit"
        assert process.exitcode == -signal.SIGXCPU
    finally:
        parent.close()


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@pytest.mark.slow
def test_kill_9_of_the_server_ends_its_workers_and_fork_server(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    # The demo data is enough for the heavy query; a time limit the query never reaches here.
    config.write_text(
        '[server]\nbase_iri = "http://serve.test"\ndemo = true\nquery_timeout_seconds = 120\n\n'
        f'[store]\ndata_dir = "{tmp_path / "data"}"\n'
    )
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    command = [
        sys.executable,
        "-m",
        "server",
        "--config",
        str(config),
        "serve",
        "--port",
        str(port),
    ]
    process = subprocess.Popen(command, cwd=REPO, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/sparql"
    asking = "import httpx, sys; httpx.get(sys.argv[1], params={'query': sys.argv[2]}, timeout=300)"
    sender = None
    descendants: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(url, params={"query": "ASK {}"}, timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, "no server"
            time.sleep(0.2)
        sender = subprocess.Popen([sys.executable, "-c", asking, url, HEAVY])
        time.sleep(2.0)
        helpers = _children(process.pid)  # the fork server and multiprocessing's tracker
        descendants = helpers + [pid for helper in helpers for pid in _children(helper)]
        assert len(descendants) >= 4, descendants  # ...and the two workers
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
        deadline = time.monotonic() + 5
        while any(_alive(pid) for pid in descendants) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [pid for pid in descendants if _alive(pid)]
        assert not left, f"processes outlived the server: {left}"
    finally:
        for pid in [process.pid, *descendants]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        process.wait(10)
        if sender is not None:
            sender.kill()
            sender.wait(10)

"""The query workers' last line against SERVICE (``server/sparql/isolation.py``), with the
parsed-query guard bypassed: each mechanism is applied in a fresh process (started as the pool
starts its workers), which then runs the worker's evaluation path on a SERVICE query aimed at a
loopback listener. Without isolation the same process connects; with each mechanism, nothing
does and the query fails cleanly.

Then the workers' lifetime (issue 41): a worker ends with its server however the server ends
(``kill -9`` of ``qabench serve`` left a worker mid-query running for minutes, since the time
limit is enforced by the process that died), and bounds its own CPU time."""

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
from typing import Any

import httpx
import pytest
from pyoxigraph import Literal, NamedNode, Quad

from server.sparql import guard, isolation
from server.sparql.jobs import QueryJob, QueryOutcome, evaluate_job
from store.triplestore import TripleStore
from tests import REPO

QUERY = "SELECT * {{ ?s ?p ?o SERVICE <{url}> {{ ?a ?b ?c }} }}"
MECHANISMS = {name: apply for name, apply in isolation.MECHANISMS}


def _unguarded_worker(conn: Connection, mechanism: str, url: str) -> None:
    """Runs in the child: isolate, switch the guard off, evaluate like a worker does."""
    applied = MECHANISMS[mechanism]() if mechanism else True
    guard.refusal = lambda _query: None  # the parser disagreement we defend against
    store = TripleStore.in_memory()
    store.add(
        [
            Quad(
                NamedNode("http://e/s"),
                NamedNode("http://e/p"),
                Literal("o"),
                NamedNode("http://g"),
            )
        ]
    )
    job = QueryJob(
        query=QUERY.format(url=url),
        base_iri="http://qabench.test/sparql",
        view="",
        default_graphs=None,
        named_graphs=None,
        results_media="application/sparql-results+json",
        rdf_media=None,
        max_rows=100,
        truncation_note="http://qabench.test/sparql#truncation",
    )
    conn.send((applied, evaluate_job(store, job)))


def _run(mechanism: str, url: str) -> tuple[bool, QueryOutcome]:
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=_unguarded_worker, args=(child, mechanism, url))
    process.start()
    try:
        assert parent.poll(60), "the child did not answer"
        answer: tuple[bool, QueryOutcome] = parent.recv()
    finally:
        process.join(10)
    assert process.exitcode == 0  # a clean failure, not a crash
    return answer


def _listener() -> Any:
    # Imported here, not at the top: the child imports this module, and the live-server
    # plugins behind test_limits start a thread at import, after which a process may no longer
    # enter a new user namespace (a real worker imports only what it needs: one thread).
    from tests.server.sparql.test_limits import Listener

    return Listener()


def test_without_isolation_the_unguarded_query_connects() -> None:
    listener = _listener()
    try:
        _run("", listener.url)
        time.sleep(0.2)
        # The control: this is what the isolation below must prevent.
        assert listener.connections >= 1
    finally:
        listener.close()


@pytest.mark.parametrize("mechanism", list(MECHANISMS))
def test_an_isolated_worker_connects_nowhere(mechanism: str) -> None:
    listener = _listener()
    try:
        applied, outcome = _run(mechanism, listener.url)
        time.sleep(0.2)
        assert applied, f"{mechanism} is unavailable here"
        assert listener.connections == 0
        assert outcome.failure == "evaluation" and outcome.message, outcome
    finally:
        listener.close()


_SERVING_MAIN = """
import numpy  # as `qabench serve`'s main module does (through the command modules)
from server.sparql.workers import QueryPool

if __name__ == "__main__":
    # several workers, started by concurrent threads as the pool does, each must be isolated
    pool = QueryPool(4, 30.0)
    pool.start()
    print("workers:", len(pool._all) if pool.wait_ready(60) else "not ready", flush=True)
    print("isolation:", pool.isolation or "none", flush=True)
    pool.close()
"""


def _run_main(source: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``source`` as the main module of a fresh interpreter (its own fork server)."""
    main = tmp_path / "main_module.py"
    main.write_text(source, "utf-8")
    return subprocess.run(
        [sys.executable, str(main), *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def test_workers_of_a_main_module_that_imports_numpy_are_still_isolated(tmp_path: Path) -> None:
    # spawn re-imports the main module in each worker before it runs; numpy's OpenBLAS pool
    # would be a second thread there, and a process with two threads cannot be isolated.
    done = _run_main(_SERVING_MAIN, tmp_path)
    assert "workers: 4" in done.stdout, done.stdout + done.stderr
    found = done.stdout.strip().rsplit("isolation: ", 1)[-1]
    assert found in {name for name, _ in isolation.MECHANISMS}, done.stdout + done.stderr


def _address_space_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmSize for {pid}")


def test_a_worker_that_opened_a_view_keeps_its_address_space_for_queries(
    make_live_server: Any,
) -> None:
    # glibc's per-thread arenas reserved about 590 MB of address space once RocksDB's threads
    # ran (835 MB for 75 MB resident), which the worker's RLIMIT_AS counts: under a 1 GiB cap a
    # worker could not start a thread. With one arena the worker stays near 250 MB.
    import httpx

    live = make_live_server(query_memory_mb=1024, queries_per_client=4)
    pool = live.services.pool
    pool.start()
    assert pool.wait_ready(60)
    with httpx.Client(base_url=live.url, timeout=30) as client:
        for _ in range(6):  # both workers open the view
            assert client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}).is_success
    sizes = [_address_space_kib(worker.process.pid) for worker in list(pool._all)]
    assert len(sizes) == 2
    assert max(sizes) < 512 * 1024, sizes


_ALLOCATOR_MAIN = """
import sys
from pathlib import Path

from pyoxigraph import Literal, NamedNode, Quad

from server.sparql import isolation
from server.sparql.jobs import QueryJob
from server.sparql.workers import QueryPool
from store.triplestore import TripleStore

if __name__ == "__main__":
    allocator, folder = sys.argv[1], Path(sys.argv[2])
    if len(sys.argv) > 3:  # the library is not installed
        isolation.ALLOCATORS[allocator] = sys.argv[3]
    store = TripleStore.open(folder)
    graph = NamedNode("http://e/g")
    store.add([Quad(NamedNode(f"http://e/s{i}"), NamedNode("http://e/p"), Literal(i), graph)
               for i in range(2000)])
    store.close()
    pool = QueryPool(2, 30.0, 1024, allocator=allocator)
    job = QueryJob("SELECT (COUNT(*) AS ?n) { ?s ?p ?o }", "http://e/", str(folder), None, None,
                   "text/tab-separated-values", None, 100, "http://e/#cut", form="SELECT")
    for _ in range(6):  # both workers open the view
        outcome = pool.run(job)
    sizes = [int(line.split()[1]) for worker in list(pool._all)
             for line in Path(f"/proc/{worker.process.pid}/status").read_text().splitlines()
             if line.startswith("VmSize:")]
    print("answer:", outcome.data.decode().split()[-1], flush=True)
    print("allocator:", pool.allocator, flush=True)
    print("sizes:", *sizes, flush=True)
    pool.close()
"""


def _workers_with(allocator: str, tmp_path: Path, *missing: str) -> tuple[str, str, list[int], str]:
    # A process of its own: the fork server, which reads LD_PRELOAD once, starts fresh.
    done = _run_main(_ALLOCATOR_MAIN, tmp_path, allocator, str(tmp_path / "store"), *missing)
    lines = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    sizes = [int(size) for size in lines.get("sizes", "").split()]
    return lines.get("answer", done.stderr), lines.get("allocator", ""), sizes, done.stderr


def test_the_allocator_names_match_the_settings_choices() -> None:
    from server.config import _CHOICES

    assert _CHOICES["server.query_allocator"] == tuple(isolation.ALLOCATORS)


@pytest.mark.skipif(
    isolation.allocator_library("jemalloc") is None, reason="libjemalloc2 is not installed"
)
@pytest.mark.parametrize("allocator", ["jemalloc", "system"])
def test_workers_run_with_the_allocator_asked_for_within_their_address_space(
    allocator: str, tmp_path: Path
) -> None:
    # jemalloc is preloaded into the workers (about a fifth faster evaluation); the system
    # allocator is glibc's with one arena. Either way a worker that opened a view stays well
    # under its cap: glibc's per-thread arenas once reserved 835 MB for 75 MB resident.
    answer, used, sizes, _ = _workers_with(allocator, tmp_path)
    assert answer == "2000", answer
    assert used == allocator
    assert len(sizes) == 2 and max(sizes) < 512 * 1024, sizes


def test_an_allocator_that_is_not_installed_falls_back_to_the_system_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with monkeypatch.context() as patched:
        patched.setitem(isolation.ALLOCATORS, "jemalloc", "libnot-installed.so.9")
        assert isolation.allocator_library("jemalloc") is None
    assert isolation.allocator_library("system") == ""
    assert isolation.allocator_library("unknown") is None
    # A pool asked for it answers on the system allocator and says so in its log.
    answer, used, _, log = _workers_with("jemalloc", tmp_path, "libnot-installed.so.9")
    assert answer == "2000" and used == "system"
    assert "use the system allocator: jemalloc is not installed" in log, log


def test_the_allocator_is_preloaded_first_and_the_environment_restored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LD_PRELOAD", "/opt/profiler.so")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    with isolation.single_threaded_imports("/usr/lib/libjemalloc.so.2"):
        assert os.environ["LD_PRELOAD"] == "/usr/lib/libjemalloc.so.2 /opt/profiler.so"
        assert os.environ["OMP_NUM_THREADS"] == "1"
    assert os.environ["LD_PRELOAD"] == "/opt/profiler.so"
    assert "OMP_NUM_THREADS" not in os.environ
    with isolation.single_threaded_imports(""):
        assert os.environ["LD_PRELOAD"] == "/opt/profiler.so"


# --- the workers' lifetime (issue 41) ---------------------------------------------------

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
    # imported here: the isolation tests above run this module in fresh single-threaded
    # processes, which the pool's imports would not leave single-threaded
    from server.sparql.workers import worker_main

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

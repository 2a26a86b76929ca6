"""What each shape of the public SPARQL path can reach on this machine, for trivial queries.

Issue 40 asks for trivial queries (ASK, one-subject lookup) at >= 0.5x of ``oxigraph serve``.
Before building anything, this measures the ceiling of each shape on the same data, in one run
and with wrk (as ``bench/server.py`` does), with minimal Python servers that do only what each
shape must do:

- ``oxigraph``: ``oxigraph serve --union-default-graph`` (the reference);
- ``qabench``: ``qabench serve`` as it is (waitress, the SPARQL front, query workers);
- ``front+workers``: a minimal event loop in one process (no waitress, no checks) handing each
  query to today's query workers over their pipes (``QueryPool``): three processes per query,
  the shape of today's design with its own overhead taken away;
- ``owning``: two processes that each accept connections (``SO_REUSEPORT``), read requests
  with a minimal HTTP reader, run the endpoint's lexical checks (``analysis.analyse``) and
  evaluate in-process with the workers' own ``evaluate_job``: one process per query, as
  Oxigraph does. This is a ceiling, not a design: it has no time limit, fairness or hand-off.

For each it prints requests/s, the ratio to Oxigraph and the CPU each process used per
request (``bench/machine.py``). Loopback only; bounded in time.

    .venv/bin/python bench/front_shapes.py [--data DIR] [--kb 300000] [--experiments 300]
        [--duration 4] [--concurrency 4 16]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO))  # before bench/: ``server`` is the package, not bench/server.py

import bench_data  # noqa: E402
import machine  # noqa: E402


def _bench_server() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("bench_server", BENCH / "server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


_SERVER = _bench_server()
CLASSES, QueryClass, wrk = _SERVER.CLASSES, _SERVER.QueryClass, _SERVER.wrk

JSON = "application/sparql-results+json"


# ---------------------------------------------------------------- the minimal servers


def _requests(sock: socket.socket, buffers: dict[socket.socket, bytes]) -> Iterator[bytes]:
    """Yield the bodies of complete requests read from ``sock`` (minimal HTTP/1.1 reader)."""
    try:
        data = sock.recv(65536)
    except OSError:
        data = b""
    if not data:
        raise ConnectionError
    buffer = buffers.get(sock, b"") + data
    while True:
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            break
        head = buffer[:end].lower()
        at = head.find(b"content-length:")
        stop = head.find(b"\r\n", at)
        size = int(head[at + 15 : stop if stop > 0 else None]) if at >= 0 else 0
        if len(buffer) < end + 4 + size:
            break
        yield buffer[end + 4 : end + 4 + size]
        buffer = buffer[end + 4 + size :]
    buffers[sock] = buffer


def _reply(sock: socket.socket, media: str, body: bytes) -> None:
    head = f"HTTP/1.1 200 OK\r\nContent-Type: {media}\r\nContent-Length: {len(body)}\r\n\r\n"
    with contextlib.suppress(OSError):
        sock.sendall(head.encode() + body)


def _listener(port: int, reuse_port: bool) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(
        socket.SOL_SOCKET, socket.SO_REUSEPORT if reuse_port else socket.SO_REUSEADDR, 1
    )
    sock.bind(("127.0.0.1", port))
    sock.listen(512)
    sock.setblocking(False)
    return sock


def _job(query: str, view: str) -> object:
    from server.sparql.jobs import QueryJob

    form = "ASK" if query.lstrip().upper().startswith("ASK") else "SELECT"
    return QueryJob(
        query, "http://b/sparql", view, None, None, JSON, None, 10_000, "x", 20 << 20, form
    )


def serve_owning(port: int, view: str) -> None:
    """One connection-owning evaluator (run two with SO_REUSEPORT)."""
    from server.sparql import analysis
    from server.sparql.jobs import evaluate_job
    from store.triplestore import TripleStore

    store = TripleStore.open_read_only(Path(view))
    events = selectors.DefaultSelector()
    listener = _listener(port, reuse_port=True)
    events.register(listener, selectors.EVENT_READ, None)
    buffers: dict[socket.socket, bytes] = {}
    print("ready", flush=True)
    while True:
        for key, _ in events.select(1):
            if key.data is None:
                with contextlib.suppress(BlockingIOError):
                    conn, _ = listener.accept()
                    conn.setblocking(False)
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    events.register(conn, selectors.EVENT_READ, 1)
                continue
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            try:
                for body in _requests(sock, buffers):
                    query = body.decode()
                    analysis.analyse(query, "http://b/sparql")  # the endpoint's lexical checks
                    outcome = evaluate_job(store, _job(query, view))  # type: ignore[arg-type]
                    _reply(sock, outcome.media_type, outcome.data)
            except ConnectionError:
                events.unregister(sock)
                buffers.pop(sock, None)
                sock.close()


def serve_front_workers(port: int, view: str) -> None:
    """A minimal event loop handing each query to today's query workers."""
    from server.sparql.workers import QueryPool

    pool = QueryPool(2, 30.0, 2048)
    pool.start()
    pool.wait_ready(60)
    events = selectors.DefaultSelector()
    listener = _listener(port, reuse_port=False)
    events.register(listener, selectors.EVENT_READ, None)
    buffers: dict[socket.socket, bytes] = {}
    waiting: list[tuple[object, socket.socket, str]] = []

    def start(ticket: object, sock: socket.socket, query: str) -> None:
        worker, started = pool.claim(ticket)  # type: ignore[arg-type]
        reader = pool.begin(worker, _job(query, view), "c", started)  # type: ignore[arg-type]
        events.register(worker.conn.fileno(), selectors.EVENT_READ, (worker, reader, sock, started))

    print("ready", flush=True)
    while True:
        for key, _ in events.select(1):
            if key.data is None:
                with contextlib.suppress(BlockingIOError):
                    conn, _ = listener.accept()
                    conn.setblocking(False)
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    events.register(conn, selectors.EVENT_READ, 1)
                continue
            if key.data == 1:
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    for body in _requests(sock, buffers):
                        ticket = pool.request("c", notify=lambda _t: None)
                        if ticket.worker is None:
                            waiting.append((ticket, sock, body.decode()))
                        else:
                            start(ticket, sock, body.decode())
                except ConnectionError:
                    events.unregister(sock)
                    buffers.pop(sock, None)
                    sock.close()
                continue
            worker, reader, sock, started = key.data
            outcome = reader.feed(worker.conn.recv_bytes())
            if outcome is None:
                continue
            events.unregister(worker.conn.fileno())
            pool.finish(worker, "c", started, outcome)
            while waiting and waiting[0][0].worker is not None:  # type: ignore[attr-defined]
                start(*waiting.pop(0))
            if sock.fileno() >= 0:
                _reply(sock, outcome.media_type, outcome.data)


# ---------------------------------------------------------------- driving them


@contextlib.contextmanager
def _shape(kind: str, port: int, view: str, copies: int) -> Iterator[list[int]]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    jemalloc = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
    if kind == "owning" and Path(jemalloc).exists():
        env["LD_PRELOAD"] = jemalloc  # as the workers run
    processes = [
        subprocess.Popen(
            [sys.executable, __file__, "--serve", kind, "--port", str(port), "--view", view],
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
        )
        for _ in range(copies)
    ]
    try:
        for process in processes:
            assert process.stdout is not None
            if process.stdout.readline() != b"ready\n":
                raise RuntimeError(f"{kind} did not start")
        time.sleep(0.5)
        yield [p.pid for p in processes]
    finally:
        for process in processes:
            process.kill()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()


def _tree(pids: list[int]) -> list[int]:
    found = list(pids)
    for pid in pids:
        found += [p.pid for p in machine.server_processes(pid)[1:]]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path)
    parser.add_argument("--kb", type=int, default=300_000)
    parser.add_argument("--experiments", type=int, default=300)
    parser.add_argument("--duration", type=float, default=4.0)
    parser.add_argument("--concurrency", type=int, nargs="*", default=[4, 16])
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--view", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        {"owning": serve_owning, "front+workers": serve_front_workers}[args.serve](
            args.port, args.view
        )
        return 0
    work = args.data or Path(tempfile.mkdtemp(prefix="qabench-shapes-"))
    try:
        sizes = bench_data.prepare(work, args.kb, args.experiments, 6)
        view = work / "shape-view"
        if not view.exists():  # a copy of the same quads for the minimal servers to read
            shutil.copytree(work / "oxigraph", view)
        print("what this runs on:")
        for line in machine.describe():
            print(f"  {line}")
        _measure(work, sizes, str(view), args)
    finally:
        if args.data is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def _measure(work: Path, sizes: bench_data.Sizes, view: str, args: argparse.Namespace) -> None:
    settings = {
        "sparql_requests_per_minute": 0,
        "queries_per_client": 64,
        "sparql_client_budget_seconds": 0,
    }
    classes = [qc for qc in CLASSES if qc.trivial]
    with bench_data.qabench(work, settings) as ours, bench_data.oxigraph(work) as theirs:
        urls: dict[str, tuple[str, Callable[[], list[int]]]] = {
            "oxigraph": (f"{theirs.url}/query", lambda: [theirs.pid]),
            "qabench": (f"{ours.url}/sparql", lambda: _tree([ours.pid])),
        }
        front_port, owning_port = bench_data.free_port(), bench_data.free_port()
        with (
            _shape("front+workers", front_port, view, 1) as front,
            _shape("owning", owning_port, view, 2) as owning,
        ):
            urls["front+workers"] = (f"http://127.0.0.1:{front_port}/", lambda: _tree(front))
            urls["owning"] = (f"http://127.0.0.1:{owning_port}/", lambda: owning)
            print(f"\nwrk, 1 thread, {args.duration:g} s per round, two rounds each (mean)")
            print(f"{'class':<26}{'c':>3}" + "".join(f"{name:>15}" for name in urls))
            for qc in classes:
                for c in args.concurrency:
                    _row(qc, c, urls, sizes, args.duration)


def _row(
    qc: QueryClass,
    c: int,
    urls: dict[str, tuple[str, Callable[[], list[int]]]],
    sizes: bench_data.Sizes,
    seconds: float,
) -> None:
    rates: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for _round in range(2):
        for name, (url, pids) in urls.items():
            meter = machine.CpuMeter({"server": pids()})
            found = wrk(url, qc, sizes, seconds, c, meter)
            rates[name] = rates.get(name, 0.0) + found["rps"] / 2
            per = found["cores:server"] / found["rps"] * 1e6 if found["rps"] else 0.0
            cpu[name] = cpu.get(name, 0.0) + per / 2
    base = rates["oxigraph"] or 1.0
    cells = "".join(f"{rates[n]:>8,.0f} {rates[n] / base:4.2f}x" for n in urls)
    print(f"{qc.label:<26}{c:>3}{cells}   load {os.getloadavg()[0]:.1f}")
    print(f"{'  CPU us per request':<29}" + "".join(f"{cpu[n]:>15.0f}" for n in urls))


if __name__ == "__main__":
    raise SystemExit(main())

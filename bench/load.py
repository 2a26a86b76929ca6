"""Load test: many clients at once against a real ``qabench serve`` on loopback.

Starts ``qabench serve`` (waitress, query workers, the RAG pool) over a fresh temporary data
directory with the demo data (example datasets, knowledge base, literature index and a
published experiment), the extractive generator and ``server.trusted_proxy = 127.0.0.1``, so
that each simulated client can name its own address in ``X-Forwarded-For`` (as a reverse proxy
would) and the per-client limits apply per client. Then ``--clients`` threads each loop for
``--duration`` seconds: pick an action (pages 60 %, SPARQL 25 %, ``/api/qa`` 7 %, an ``/ask``
job 8 %: started with ``POST /ask/jobs`` and polled every second until it ends), do it, wait a
random think time (0 to twice ``--think`` seconds). Prints, per route, the number of requests,
status counts, p50 and p99 latency, then the errors, and the server's resident memory (main
process and query workers, sampled every second). Exit status 1 when a page's p99 reaches 2 s
or a request failed other than with an announced refusal (429 or 503 with ``Retry-After``).

Bounded: loopback only, a fixed number of clients, a fixed duration, 30 s per request; the
server (this script's child) is stopped at the end, also on Ctrl+C or SIGTERM.

    .venv/bin/python bench/load.py [--clients 50] [--duration 60] [--think 0.5]

With ``--kb-triples N`` it measures ``qabench kb load`` beside ``oxigraph load`` instead, and
the first writes after a start (``bench/kb_load.py``):

    .venv/bin/python bench/load.py --kb-triples 1000000 [--rounds 2] [--tmp DIR]
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import httpx

REPO = Path(__file__).resolve().parent.parent
PAGE_TARGET_SECONDS = 2.0
QUESTIONS = [
    "Which rivers flow through Vienna?",
    "What is the capital of Austria?",
    "When was the University of Vienna founded?",
    "How many inhabitants does Graz have?",
]
SPARQL = [
    "ASK { ?s ?p ?o }",
    "SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 20",
    "PREFIX qab: <https://w3id.org/qabench/vocab#> "
    "SELECT ?e ?t WHERE { ?e a qab:Experiment ; qab:task ?t }",
    "PREFIX qab: <https://w3id.org/qabench/vocab#> PREFIX qb: <http://purl.org/linked-data/cube#>"
    " SELECT ?obs ?measure ?value WHERE { ?obs qab:ofTask ?task ; qb:measureType ?measure ;"
    " ?measure ?value } LIMIT 200",
    "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g",
    "CONSTRUCT { ?s ?p ?o } WHERE { ?s a ?type ; ?p ?o } LIMIT 100",
]


@dataclass
class Stats:
    """What the clients saw, per route; shared by every client thread."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: collections.defaultdict(list))
    statuses: dict[str, collections.Counter[str]] = field(
        default_factory=lambda: collections.defaultdict(collections.Counter)
    )
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, route: str, seconds: float, status: str, error: str | None) -> None:
        with self.lock:
            self.latencies[route].append(seconds)
            self.statuses[route][status] += 1
            if error:
                self.errors[f"{route}: {error}"] += 1


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _call(
    stats: Stats,
    route: str,
    client: httpx.Client,
    method: str,
    url: str,
    *,
    data: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response | None:
    start = time.monotonic()
    try:
        response = client.request(method, url, data=data, headers=headers)
    except httpx.HTTPError as exc:
        stats.record(route, time.monotonic() - start, "exception", type(exc).__name__)
        return None
    seconds = time.monotonic() - start
    status = response.status_code
    announced = status in (429, 503) and "retry-after" in response.headers
    error = None if status < 400 or announced else f"{status} {response.text[:120]!r}"
    stats.record(route, seconds, str(status), error)
    return response


@dataclass(frozen=True)
class Site:
    """The URLs the clients visit (found on the running demo)."""

    pages: list[tuple[str, str]]  # (route label, path)


def _discover(client: httpx.Client) -> Site:
    query = (
        "PREFIX qab: <https://w3id.org/qabench/vocab#> SELECT ?x ?kind WHERE { "
        "{ ?x a qab:Experiment BIND('experiment' AS ?kind) } UNION "
        "{ ?x a qab:Task BIND('task' AS ?kind) } UNION { ?x a qab:System BIND('system' AS ?kind) }"
        " UNION { ?x a qab:DatasetVersion BIND('version' AS ?kind) } }"
    )
    rows = client.post("/sparql", data={"query": query}).json()["results"]["bindings"]
    found: dict[str, list[str]] = collections.defaultdict(list)
    iris: dict[str, list[str]] = collections.defaultdict(list)
    for row in rows:
        kind, iri = row["kind"]["value"], row["x"]["value"]
        iris[kind].append(iri)
        found[kind].append(httpx.URL(iri).raw_path.decode())
    pages = [
        ("/", "/"),
        ("/experiments", "/experiments"),
        ("/datasets", "/datasets"),
        ("/systems", "/systems"),
        ("/vocab", "/vocab"),
        ("/sparql (page)", "/sparql"),
        ("/.well-known/void", "/.well-known/void"),
        ("/ask (page)", "/ask"),
    ]
    pages += [("/experiment/{id}", p) for p in found["experiment"]]
    pages += [("/task/{id}/{n}", p) for p in found["task"]]
    pages += [("/system/{slug}", p) for p in found["system"]]
    pages += [("/dataset/{name}/v{n}", p) for p in found["version"]]
    pages += [
        ("/leaderboard", "/leaderboard?" + str(httpx.QueryParams({"version": v})))
        for v in iris["version"]
    ]
    return Site(pages)


def _ask_job(stats: Stats, client: httpx.Client, rng: random.Random, deadline: float) -> None:
    started = _call(
        stats,
        "POST /ask/jobs",
        client,
        "POST",
        "/ask/jobs",
        data={"question": rng.choice(QUESTIONS)},
    )
    if started is None or started.status_code != 202:
        return
    progress = started.headers["location"]
    while time.monotonic() < deadline:
        time.sleep(1.0)
        polled = _call(stats, "GET /ask/jobs/{id}", client, "GET", progress)
        if polled is None or polled.status_code != 200:
            return
        body = polled.json()
        if body["state"] == "failed":
            stats.record("ask job", 0.0, "failed", str(body.get("problem")))
            return
        if body["state"] == "done":
            stats.record("ask job", 0.0, "done", None)
            return


def _client(n: int, url: str, site: Site, stats: Stats, deadline: float, think: float) -> None:
    rng = random.Random(n)
    headers = {"X-Forwarded-For": f"10.{n // 250}.{n % 250}.{1 + n % 7}"}
    with httpx.Client(base_url=url, timeout=30, headers=headers) as client:
        while time.monotonic() < deadline:
            pick = rng.random()
            if pick < 0.60:
                route, path = rng.choice(site.pages)
                _call(stats, route, client, "GET", path, headers={"Accept": "text/html"})
            elif pick < 0.85:
                query = rng.choice(SPARQL)
                _call(stats, "/sparql", client, "POST", "/sparql", data={"query": query})
            elif pick < 0.92:
                form = {"query": rng.choice(QUESTIONS), "lang": "en"}
                _call(stats, "POST /api/qa", client, "POST", "/api/qa", data=form)
            else:
                _ask_job(stats, client, rng, deadline)
            time.sleep(rng.uniform(0, 2 * think))


def _rss_kib(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(r"VmRSS:\s+(\d+)", status)
    return int(found.group(1)) if found else 0


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _sample_memory(pid: int, stop: threading.Event, peaks: dict[str, int]) -> None:
    while not stop.wait(1.0):
        main = _rss_kib(pid)
        workers = sum(_rss_kib(child) for child in _children(pid))
        peaks["main"] = max(peaks.get("main", 0), main)
        peaks["total"] = max(peaks.get("total", 0), main + workers)
        peaks["last_main"], peaks["last_total"] = main, main + workers


def _wait_ready(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 600
    with httpx.Client(base_url=url, timeout=30) as client:
        while time.monotonic() < deadline:
            if server.poll() is not None:
                sys.exit(f"the server exited ({server.returncode}):\n{log.read_text()[-3000:]}")
            try:
                ask = "PREFIX qab: <https://w3id.org/qabench/vocab#> ASK { ?t qab:state qab:Finished }"
                response = client.post("/sparql", data={"query": ask})
                if response.status_code == 200 and response.json()["boolean"]:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(1.0)
    sys.exit("the server did not become ready within 600 s")


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _report(stats: Stats, pages: set[str], peaks: dict[str, int], seconds: float) -> int:
    print(f"\n{'route':<26}{'n':>7}{'p50 ms':>10}{'p99 ms':>10}  statuses")
    failed = False
    for route in sorted(stats.latencies):
        times = stats.latencies[route]
        counts = ", ".join(f"{k}: {v}" for k, v in sorted(stats.statuses[route].items()))
        if route == "ask job":
            print(f"{route:<26}{len(times):>7}{'':>10}{'':>10}  {counts}")
            continue
        p50, p99 = _percentile(times, 0.5) * 1000, _percentile(times, 0.99) * 1000
        slow = route in pages and p99 >= PAGE_TARGET_SECONDS * 1000
        failed |= slow
        print(
            f"{route:<26}{len(times):>7}{p50:>10.1f}{p99:>10.1f}  {counts}{'  SLOW' if slow else ''}"
        )
    every_page = [t for route in pages for t in stats.latencies.get(route, [])]
    total = sum(len(v) for v in stats.latencies.values())
    print(f"\n{total} requests in {seconds:.0f} s ({total / seconds:.1f}/s)")
    if every_page:
        page_p99 = _percentile(every_page, 0.99)
        print(
            f"pages: {len(every_page)} requests, p50 {statistics.median(every_page) * 1000:.1f} ms, "
            f"p99 {page_p99 * 1000:.1f} ms (target < {PAGE_TARGET_SECONDS * 1000:.0f} ms)"
        )
        failed |= page_p99 >= PAGE_TARGET_SECONDS
    print(f"errors (other than announced 429/503): {sum(stats.errors.values())}")
    for error, count in stats.errors.most_common(15):
        print(f"  {count:>5} x {error}")
    failed |= bool(stats.errors)
    print(
        f"server memory (RSS): main process peak {peaks.get('main', 0) / 1024:.0f} MiB, with "
        f"query workers peak {peaks.get('total', 0) / 1024:.0f} MiB; at the end "
        f"{peaks.get('last_main', 0) / 1024:.0f} / {peaks.get('last_total', 0) / 1024:.0f} MiB"
    )
    return 1 if failed else 0


def _stop(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--think", type=float, default=0.5, help="mean think time, seconds")
    parser.add_argument("--threads", type=int, default=8, help="the server's server.threads")
    parser.add_argument(
        "--kb-triples",
        type=int,
        default=0,
        help="instead: kb load of N triples beside oxigraph load, then the first writes after "
        "a start (bench/kb_load.py)",
    )
    parser.add_argument("--rounds", type=int, default=2, help="A/B rounds of --kb-triples")
    parser.add_argument("--tmp", default=None, help="where --kb-triples writes its files")
    args = parser.parse_args()
    if args.kb_triples:
        sys.path.append(str(REPO / "bench"))
        import kb_load  # a sibling script

        return int(kb_load.run(args.kb_triples, args.rounds, args.tmp))
    if not 1 <= args.clients <= 500 or not 0 < args.duration <= 600:
        parser.error("--clients must be 1-500 and --duration at most 600 s")
    signal.signal(signal.SIGTERM, _stop)
    work = Path(tempfile.mkdtemp(prefix="qabench-load-"))
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    config = work / "config.toml"
    config.write_text(
        f'[server]\nbase_iri = "{url}"\ndemo = true\nthreads = {args.threads}\n'
        'trusted_proxy = "127.0.0.1"\n\n[rag]\ngenerator = "extractive"\n\n'
        f'[store]\ndata_dir = "{work / "data"}"\n'
    )
    log = work / "server.log"
    server = None
    try:
        with log.open("wb") as sink:
            server = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "server",
                    "--config",
                    str(config),
                    "serve",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                ],
                cwd=REPO,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        t0 = time.monotonic()
        _wait_ready(url, server, log)
        print(f"server ready (demo loaded) after {time.monotonic() - t0:.0f} s; pid {server.pid}")
        with httpx.Client(base_url=url, timeout=30) as client:
            site = _discover(client)
        stats, stop = Stats(), threading.Event()
        peaks: dict[str, int] = {}
        sampler = threading.Thread(
            target=_sample_memory, args=(server.pid, stop, peaks), daemon=True
        )
        sampler.start()
        deadline = time.monotonic() + args.duration
        start = time.monotonic()
        clients = [
            threading.Thread(
                target=_client, args=(n, url, site, stats, deadline, args.think), daemon=True
            )
            for n in range(args.clients)
        ]
        for thread in clients:
            thread.start()
        for thread in clients:
            thread.join(args.duration + 120)
        seconds = time.monotonic() - start
        stop.set()
        print(
            f"{args.clients} clients x {args.duration:.0f} s, think time 0-{2 * args.think:.1f} s, "
            f"{len(site.pages)} page URLs, {os.cpu_count()} CPUs, load average "
            f"{os.getloadavg()[0]:.1f}"
        )
        status = _report(stats, {route for route, _ in site.pages}, peaks, seconds)
        problems = [
            line
            for line in log.read_text(errors="replace").splitlines()
            if "Traceback" in line or " ERROR " in line or line.startswith("ERROR")
        ]
        print(
            f"server log: {len(problems)} error lines"
            + (f", first: {problems[0][:200]}" if problems else "")
        )
        return status
    except KeyboardInterrupt:
        return 130
    finally:
        if server is not None and server.poll() is None:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: qabench serve versus oxigraph serve on the same ~1M triples of experiments.

Generates experiments with Data Cube observations (default 9,000 experiments, about 1.06 M
quads), loads them into a qabench data directory and into an Oxigraph server directory, starts
both servers on loopback (``qabench serve`` in its own process; ``oxigraph serve
--union-default-graph`` so both evaluate over the union of the graphs), then drives each with
``--concurrency`` client threads for ``--duration`` seconds per query:

- per-experiment SELECT (a random experiment's observations),
- page CONSTRUCT (a random experiment's whole graph),
- leaderboard (best macro F1 per system and dataset over every experiment),

and, on qabench only, ``/experiment/{id}`` as HTML and as JSON-LD. Prints requests/s, p50 and
p99 latency, and qabench's throughput as a ratio of Oxigraph's.

    .venv/bin/python bench/server.py [--experiments 9000] [--duration 8] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from pyoxigraph import Literal, Quad, RdfFormat, serialize

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from store import graphs  # noqa: E402
from vocab import iris  # noqa: E402
from vocab.project import QAB  # noqa: E402
from vocab.qb import QB  # noqa: E402
from vocab.standard import DCTERMS, GERBIL, PROV, RDF, RDFS, XSD  # noqa: E402

BASE = "http://bench.qabench.test"
MEASURES = [
    GERBIL.macroF1,
    GERBIL.microF1,
    GERBIL.macroPrecision,
    GERBIL.macroRecall,
    GERBIL.microPrecision,
    GERBIL.microRecall,
]
SYSTEMS = 40
DATASETS = 25

PER_EXPERIMENT = """PREFIX qb: <http://purl.org/linked-data/cube#>
PREFIX qab: <https://w3id.org/qabench/vocab#>
SELECT ?obs ?measure ?value ?type WHERE {
  ?obs qab:ofTask <{task}> ; qab:experimentType ?type ; qb:measureType ?measure ; ?measure ?value .
}"""
PAGE_CONSTRUCT = "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH <{graph}> { ?s ?p ?o } }"
LEADERBOARD = """PREFIX qb: <http://purl.org/linked-data/cube#>
PREFIX qab: <https://w3id.org/qabench/vocab#>
PREFIX gerbil: <http://w3id.org/gerbil/vocab#>
SELECT ?system ?dataset (MAX(?value) AS ?best) WHERE {
  ?task qab:system ?system ; qab:datasetVersion ?dataset .
  ?obs qab:ofTask ?task ; gerbil:macroF1 ?value .
} GROUP BY ?system ?dataset ORDER BY DESC(?best)"""


def experiment_id(n: int) -> str:
    return f"2024{n:08d}"


def generate(experiments: int, seed: int = 7) -> list[Quad]:
    """Return the benchmark data: catalog plus ``experiments`` experiment graphs."""
    rng = random.Random(seed)
    catalog = graphs.catalog_graph(BASE)
    quads: list[Quad] = []
    systems = [iris.system_iri(BASE, f"system-{s}") for s in range(SYSTEMS)]
    versions = [iris.dataset_version_iri(BASE, f"dataset-{d}", 1) for d in range(DATASETS)]
    for s, system in enumerate(systems):
        quads += [
            Quad(system, RDF.type, QAB.System, catalog),
            Quad(system, RDFS.label, Literal(f"System {s}"), catalog),
        ]
    for d, version in enumerate(versions):
        quads += [
            Quad(version, RDF.type, QAB.DatasetVersion, catalog),
            Quad(version, DCTERMS.title, Literal(f"Dataset {d}"), catalog),
        ]
    for n in range(experiments):
        eid = experiment_id(n)
        g = graphs.experiment_graph(BASE, eid)
        exp = iris.experiment_iri(BASE, eid)
        task = iris.task_iri(BASE, eid, 1)
        quads += [
            Quad(exp, RDF.type, QAB.Experiment, g),
            Quad(exp, QAB.task, task, g),
            Quad(exp, DCTERMS.created, Literal("2024-05-01T10:00:00Z", datatype=XSD.dateTime), g),
            Quad(task, RDF.type, QAB.Task, g),
            Quad(task, QAB.system, rng.choice(systems), g),
            Quad(task, QAB.datasetVersion, rng.choice(versions), g),
            Quad(task, DCTERMS.language, Literal("en"), g),
            Quad(task, QAB.state, QAB.Finished, g),
            Quad(
                task, PROV.startedAtTime, Literal("2024-05-01T10:00:00Z", datatype=XSD.dateTime), g
            ),
            Quad(task, PROV.endedAtTime, Literal("2024-05-01T10:05:00Z", datatype=XSD.dateTime), g),
        ]
        for kind in (GERBIL.QA, GERBIL.C2KB):
            for measure in MEASURES:
                obs = iris.sub_iri(
                    exp,
                    "observation",
                    kind.value.rsplit("#", 1)[-1],
                    measure.value.rsplit("#", 1)[-1],
                )
                quads += [
                    Quad(obs, RDF.type, QB.Observation, g),
                    Quad(obs, QB.dataSet, iris.sub_iri(exp, "cube"), g),
                    Quad(obs, QAB.ofTask, task, g),
                    Quad(obs, QAB.experimentType, kind, g),
                    Quad(obs, QB.measureType, measure, g),
                    Quad(obs, measure, Literal(f"{rng.random():.4f}", datatype=XSD.double), g),
                    Quad(
                        obs,
                        PROV.generatedAtTime,
                        Literal("2024-05-01T10:05:00Z", datatype=XSD.dateTime),
                        g,
                    ),
                    Quad(
                        obs, RDFS.label, Literal(f"{eid} {kind.value[-4:]} {measure.value[-8:]}"), g
                    ),
                ]
    return quads


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_http(url: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=5).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{url} did not come up")


def drive(
    make_request: Callable[[httpx.Client, random.Random], httpx.Response],
    duration: float,
    concurrency: int,
) -> dict[str, float]:
    """Run ``concurrency`` threads for ``duration`` seconds; return rate and latencies (ms)."""
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop = time.monotonic() + duration

    def _worker(seed: int) -> None:
        rng = random.Random(seed)
        local: list[float] = []
        with httpx.Client(timeout=60) as client:
            while time.monotonic() < stop:
                t0 = time.perf_counter()
                response = make_request(client, rng)
                local.append((time.perf_counter() - t0) * 1000)
                if response.status_code != 200:
                    with lock:
                        errors[0] += 1
        with lock:
            latencies.extend(local)

    threads = [threading.Thread(target=_worker, args=(i,)) for i in range(concurrency)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    latencies.sort()
    return {
        "rps": len(latencies) / elapsed,
        "p50": statistics.median(latencies) if latencies else float("nan"),
        "p99": latencies[int(len(latencies) * 0.99) - 1] if latencies else float("nan"),
        "n": len(latencies),
        "errors": errors[0],
    }


_WRK_SCRIPT = """
math.randomseed(os.time())
local experiments = {experiments}
local template = [[{template}]]
local path = "{path}"
local method = "{method}"
local accept = "{accept}"
request = function()
  local id = string.format("2024%08d", math.random(0, experiments - 1))
  if method == "GET" then
    return wrk.format("GET", path:gsub("{{id}}", id), {{["Accept"] = accept}})
  end
  local body = template:gsub("{{id}}", id)
  return wrk.format("POST", path, {{["Content-Type"] = "application/sparql-query",
                                    ["Accept"] = accept}}, body)
end
done = function(summary, latency, requests)
  io.write(string.format("RESULT %d %f %f %f %d\\n", summary.requests,
    summary.duration / 1e6, latency:percentile(50) / 1e3, latency:percentile(99) / 1e3,
    summary.errors.status + summary.errors.connect + summary.errors.read
    + summary.errors.write + summary.errors.timeout))
end
"""


def drive_wrk(
    url: str,
    method: str,
    template: str,
    accept: str,
    experiments: int,
    duration: float,
    concurrency: int,
) -> dict[str, float]:
    """Drive ``url`` with wrk (one thread, ``concurrency`` connections); needs Debian's wrk."""
    split = httpx.URL(url)
    path = url[len(f"{split.scheme}://{split.host}:{split.port}") :]
    body = template.replace("{task}", f"{BASE}/task/{{id}}/1").replace(
        "{graph}", f"{BASE}/graph/experiment/{{id}}"
    )
    script = _WRK_SCRIPT.format(
        experiments=experiments, template=body, path=path, method=method, accept=accept
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as fh:
        fh.write(script)
    origin = f"{split.scheme}://{split.host}:{split.port}"
    out = subprocess.run(
        [
            "wrk",
            "-t1",
            f"-c{concurrency}",
            f"-d{int(duration)}s",
            "--timeout",
            "60s",
            "-s",
            fh.name,
            origin,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    Path(fh.name).unlink()
    line = next(x for x in out.splitlines() if x.startswith("RESULT"))
    n, seconds, p50, p99, errors = line.split()[1:]
    return {
        "rps": int(n) / float(seconds),
        "p50": float(p50),
        "p99": float(p99),
        "n": int(n),
        "errors": int(errors),
    }


def sparql_request(
    url: str, template: str, experiments: int, accept: str
) -> Callable[[httpx.Client, random.Random], httpx.Response]:
    def _request(client: httpx.Client, rng: random.Random) -> httpx.Response:
        eid = experiment_id(rng.randrange(experiments))
        query = template.replace("{task}", iris.task_iri(BASE, eid, 1).value).replace(
            "{graph}", graphs.experiment_graph(BASE, eid).value
        )
        return client.post(
            url,
            content=query.encode(),
            headers={"Content-Type": "application/sparql-query", "Accept": accept},
        )

    return _request


def page_request(
    base_url: str, experiments: int, accept: str
) -> Callable[[httpx.Client, random.Random], httpx.Response]:
    def _request(client: httpx.Client, rng: random.Random) -> httpx.Response:
        eid = experiment_id(rng.randrange(experiments))
        return client.get(f"{base_url}/experiment/{eid}", headers={"Accept": accept})

    return _request


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=9000)
    parser.add_argument("--duration", type=float, default=8.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--leaderboard-concurrency", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8, help="qabench's server.threads")
    parser.add_argument("--workers", type=int, default=2, help="qabench's server.query_workers")
    parser.add_argument(
        "--python-clients",
        action="store_true",
        help="drive the servers with Python threads even if wrk is installed",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="qabench-bench-"))
    ours = theirs = None
    try:
        t0 = time.monotonic()
        quads = generate(args.experiments)
        dump = work / "data.nq"
        with dump.open("wb") as fh:
            serialize(quads, fh, RdfFormat.N_QUADS)
        print(f"generated {len(quads):,} quads in {time.monotonic() - t0:.1f} s")
        del quads
        from store.triplestore import TripleStore

        t0 = time.monotonic()
        store = TripleStore.open(work / "qabench" / "store")
        store.raw.bulk_load(path=str(dump), format=RdfFormat.N_QUADS)
        store.close()
        oxi_dir = work / "oxigraph"
        oxigraph = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
        subprocess.run(
            [oxigraph, "load", "--location", str(oxi_dir), "--file", str(dump)],
            check=True,
            capture_output=True,
        )
        print(f"loaded both stores in {time.monotonic() - t0:.1f} s")

        our_port, their_port = free_port(), free_port()
        config = work / "config.toml"
        config.write_text(
            f'[server]\nbase_iri = "{BASE}"\ndemo = false\nthreads = {args.threads}\nquery_workers = {args.workers}\n'
            f"query_timeout_seconds = 30.0\n"
            # One load generator on loopback is one client: no per-client limits here.
            f"sparql_requests_per_minute = 0\nqueries_per_client = {min(64, args.concurrency)}\n"
            f'\n[store]\ndata_dir = "{work / "qabench"}"\n'
        )
        ours = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "server",
                "--config",
                str(config),
                "serve",
                "--port",
                str(our_port),
            ],
            cwd=REPO,
        )
        theirs = subprocess.Popen(
            [
                oxigraph,
                "serve",
                "--location",
                str(oxi_dir),
                "--bind",
                f"127.0.0.1:{their_port}",
                "--union-default-graph",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        our_url, their_url = f"http://127.0.0.1:{our_port}", f"http://127.0.0.1:{their_port}"
        wait_http(f"{their_url}/query")
        wait_http(f"{our_url}/")
        # Warm the query workers (they load the replica on start).
        t0 = time.monotonic()
        while (
            httpx.post(f"{our_url}/sparql", data={"query": "ASK {}"}, timeout=300).status_code
            != 200
        ):
            time.sleep(0.5)
        print(f"our query workers ready after {time.monotonic() - t0:.1f} s more")

        json_results = "application/sparql-results+json"
        cases = [
            ("per-experiment SELECT", PER_EXPERIMENT, json_results, args.concurrency),
            ("page CONSTRUCT", PAGE_CONSTRUCT, "text/turtle", args.concurrency),
            ("leaderboard", LEADERBOARD, json_results, args.leaderboard_concurrency),
        ]
        print(
            f"\n{'query':<24}{'server':<10}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'errors':>8}"
        )
        use_wrk = shutil.which("wrk") is not None and not args.python_clients
        print("load generator:", "wrk (1 thread)" if use_wrk else "Python threads (httpx)")
        for label, template, accept, concurrency in cases:
            results = {}
            for name, url in (("oxigraph", f"{their_url}/query"), ("qabench", f"{our_url}/sparql")):
                if use_wrk:
                    r = drive_wrk(
                        url, "POST", template, accept, args.experiments, args.duration, concurrency
                    )
                else:
                    r = drive(
                        sparql_request(url, template, args.experiments, accept),
                        args.duration,
                        concurrency,
                    )
                results[name] = r
                print(
                    f"{label:<24}{name:<10}{r['rps']:>10.1f}{r['p50']:>10.2f}{r['p99']:>10.2f}"
                    f"{r['errors']:>8}"
                )
            ratio = results["qabench"]["rps"] / results["oxigraph"]["rps"]
            print(f"{label:<24}{'ratio':<10}{ratio:>10.2f}  (qabench / oxigraph throughput)")
        for label, accept in (
            ("/experiment/{id} HTML", "text/html"),
            ("/experiment/{id} JSON-LD", "application/ld+json"),
        ):
            if use_wrk:
                r = drive_wrk(
                    f"{our_url}/experiment/{{id}}",
                    "GET",
                    "",
                    accept,
                    args.experiments,
                    args.duration,
                    args.concurrency,
                )
            else:
                r = drive(
                    page_request(our_url, args.experiments, accept), args.duration, args.concurrency
                )
            print(
                f"{label:<24}{'qabench':<10}{r['rps']:>10.1f}{r['p50']:>10.2f}{r['p99']:>10.2f}"
                f"{r['errors']:>8}"
            )
        return 0
    finally:
        for process in (ours, theirs):
            if process is not None:
                process.terminate()
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())

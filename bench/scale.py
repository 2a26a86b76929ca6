"""Benchmark: qabench serve at scale — writes, memory, pages, and knowledge-base loads.

For each size (default 100 k and 1 M knowledge-base triples; add 10 M with ``--sizes``) it
builds a data directory holding a DBpedia-like knowledge base of that many triples and
``--experiments`` published experiments (10,000 by default: a real experiment of the demo's
``gold`` system, run once, then copied with fresh ids and one of 40 system names), starts
``qabench serve`` in its own process, and prints:

- ``kb load``: ``qabench kb load`` of the knowledge-base file against ``oxigraph load`` of the
  same file into an empty directory, and their ratio (target ≤ 1.5);
- upload: the time to upload a 10-question dataset over HTTP, and the time until the public
  SPARQL endpoint sees it (targets < 1 s);
- resident memory of the server and its query workers after 1, 10 and 100 uploads (target:
  flat within 10 %);
- p50/p99 of every list page and of an experiment, task, system, dataset-version and
  leaderboard page, each under ``--clients`` concurrent clients for ``--duration`` seconds
  (target p99 < 100 ms).

Everything runs on loopback; nothing is downloaded. Example:

    .venv/bin/python bench/scale.py --sizes 100000 1000000 --experiments 10000

``--random-on DIR`` runs only the random-URL mode (8 clients by default, ``--duration`` seconds
per kind of page) on a kept scale directory, as ``bench/resilience.py --scale DIR`` does.
"""

from __future__ import annotations

import argparse
import json
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
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pyoxigraph import RdfFormat, Store  # noqa: E402

TOKEN = "bench-submit-token"
SYSTEMS = 40
LIST_PAGE = 50  # rows of a list page (server.page_size's default)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_kb(path: Path, triples: int, seed: int = 3) -> None:
    """Write a DBpedia-like N-Triples file: types, labels in two languages, sameAs, abstracts."""
    rng = random.Random(seed)
    classes = [f"http://dbpedia.org/ontology/C{i}" for i in range(200)]
    with path.open("w", encoding="utf-8") as fh:
        written, n = 0, 0
        while written < triples:
            r = f"<http://dbpedia.org/resource/Entity_{n}>"
            lines = [
                f"{r} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{rng.choice(classes)}> .",
                f'{r} <http://www.w3.org/2000/01/rdf-schema#label> "Entity {n}"@en .',
                f'{r} <http://www.w3.org/2000/01/rdf-schema#label> "Ding {n}"@de .',
                f"{r} <http://www.w3.org/2002/07/owl#sameAs> <http://www.wikidata.org/entity/Q{n}> .",
                f'{r} <http://dbpedia.org/ontology/abstract> "Entity {n} is a thing of kind '
                f'{rng.randrange(200)} first described in {1800 + rng.randrange(220)}."@en .',
            ]
            for line in lines[: triples - written]:
                fh.write(line + "\n")
            written += len(lines[: triples - written])
            n += 1


def _run(cmd: list[str], **kw: object) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, **kw)  # type: ignore[call-overload]
    return time.perf_counter() - started


def _config(directory: Path, port: int) -> Path:
    path = directory / "config.toml"
    path.write_text(
        "[server]\n"
        f'base_iri = "http://127.0.0.1:{port}"\nport = {port}\ndemo = false\n'
        "query_workers = 2\n\n[datasets]\n"
        f'reference_data = "{REPO.parent / "shared" / "data"}"\n',
        "utf-8",
    )
    return path


def build_experiments(data: Path, config: Path, count: int) -> int:
    """Run the demo experiment once, then copy it ``count - 1`` times (bulk), published."""
    from server.app import create_app
    from server.config import load_config

    conf = load_config(config, data_dir=data)
    app = create_app(_with_demo(conf))
    svc = app.extensions["services"]
    store = svc.store
    prefix = conf.base_iri + "/graph/experiment/"
    (graph,) = [g for g in store.graphs() if g.value.startswith(prefix)]
    eid = graph.value[len(prefix) :]
    admin = conf.base_iri + "/graph/admin"
    other_tasks = re.compile(rf"/task/{eid}/(?!1[>/])\d+")

    def _kept(text: str) -> bool:
        # One task (the first) and its aggregate results: per-question observations would
        # make 10,000 experiments tens of millions of quads.
        return "/question/" not in text and other_tasks.search(text) is None

    template = [
        text
        for q in store.quads()
        if (q.graph_name == graph or (str(q.graph_name) == f"<{admin}>" and eid in str(q.subject)))
        and _kept(text := str(q) + " .\n")
    ]
    svc.close()
    out = data / "experiments.nq"
    with out.open("w", encoding="utf-8") as fh:
        for n in range(1, count):
            new_id = f"2025{n:08d}"
            system = f"system-{n % SYSTEMS}"
            for line in template:
                fh.write(
                    line.replace(eid, new_id)
                    .replace("/system/example-answers", f"/system/{system}")
                    .replace('"example-answers"', f'"{system}"')
                )
    raw = Store(str(conf.store_path))
    raw.bulk_load(path=str(out), format=RdfFormat.N_QUADS)
    raw.flush()
    del raw
    out.unlink()
    # The bulk load bypassed the server's change journal: its saved experiment index is stale.
    (data / "experiment-index.pickle").unlink(missing_ok=True)
    return len(template)


def _with_demo(conf: object) -> object:
    from dataclasses import replace

    return replace(conf, server=replace(conf.server, demo=True))  # type: ignore[attr-defined]


def _rss(pid: int) -> int:
    """Return the resident memory (bytes) of ``pid`` and all its descendants."""
    total = 0
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += (
                int(next(x for x in status.splitlines() if x.startswith("VmRSS")).split()[1]) * 1024
            )
            for task in Path(f"/proc/{current}/task").iterdir():
                children = (task / "children").read_text().split()
                todo.extend(int(c) for c in children)
        except (OSError, StopIteration):
            continue
    return total


def _dataset(n: int) -> bytes:
    questions = [
        {
            "id": str(i),
            "question": [{"language": "en", "string": f"Bench question {n}.{i}?"}],
            "query": {"sparql": "SELECT ?x WHERE { ?x a <http://dbpedia.org/ontology/C1> }"},
            "answers": [
                {
                    "head": {"vars": ["x"]},
                    "results": {
                        "bindings": [
                            {
                                "x": {
                                    "type": "uri",
                                    "value": f"http://dbpedia.org/resource/Entity_{i}",
                                }
                            }
                        ]
                    },
                }
            ],
        }
        for i in range(10)
    ]
    return json.dumps({"dataset": {"id": f"bench-{n}"}, "questions": questions}).encode()


def _visible(client: httpx.Client, name: str) -> bool:
    query = f'ASK {{ GRAPH ?g {{ ?q <https://w3id.org/qabench/vocab#questionId> "0" . }} FILTER(CONTAINS(STR(?g), "/dataset/{name}/")) }}'
    reply = client.get(
        "/sparql", params={"query": query}, headers={"Accept": "application/sparql-results+json"}
    )
    return reply.status_code == 200 and reply.json().get("boolean") is True


def upload(client: httpx.Client, n: int) -> tuple[float, float]:
    """Upload dataset ``n``; return (upload seconds, seconds until SPARQL sees it)."""
    started = time.perf_counter()
    reply = client.post(
        "/upload/dataset",
        files={"dataset_file": (f"bench-{n}.json", _dataset(n), "application/json")},
        data={"name": f"bench-{n}"},
        headers={"Authorization": f"Bearer {TOKEN}", "Accept": "application/json"},
    )
    uploaded = time.perf_counter() - started
    assert reply.status_code == 201, reply.text[:300]
    while not _visible(client, f"bench-{n}"):
        if time.perf_counter() - started > 60:
            raise RuntimeError("the upload never became visible to SPARQL")
        time.sleep(0.01)
    return uploaded, time.perf_counter() - started


def hammer(url: str, path: str, clients: int, duration: float) -> tuple[list[float], int]:
    """Request ``path`` from ``clients`` threads for ``duration`` s; return latencies and errors."""
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop = time.perf_counter() + duration

    def _client() -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            while time.perf_counter() < stop:
                started = time.perf_counter()
                reply = client.get(path, headers={"Accept": "text/html"})
                took = time.perf_counter() - started
                with lock:
                    latencies.append(took)
                    if reply.status_code != 200:
                        errors[0] += 1

    threads = [threading.Thread(target=_client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, errors[0]


def random_kinds(rng: random.Random, count: int, url: str) -> dict[str, object]:
    """Return, per kind of page, a function that draws one URL of that kind at random."""

    def eid() -> str:
        return f"2025{rng.randrange(1, count):08d}"

    pages = max(1, count // LIST_PAGE)
    return {
        "experiment": lambda: f"/experiment/{eid()}",
        "experiment.ttl": lambda: f"/experiment/{eid()}.ttl",
        "task": lambda: f"/task/{eid()}/1",
        "system": lambda: f"/system/system-{rng.randrange(SYSTEMS)}",
        "experiments list": lambda: f"/experiments?page={rng.randrange(1, pages + 1)}",
        "experiments by score": lambda: (
            f"/experiments?sort=score&page={rng.randrange(1, pages + 1)}"
        ),
        "systems list": lambda: "/systems",
        "datasets list": lambda: "/datasets",
        "home": lambda: "/",
        "void": lambda: "/.well-known/void",
        "dataset version": lambda: f"/dataset/bench-{rng.randrange(3)}/v1",
        "leaderboard": lambda: f"/leaderboard?version={url}/dataset/qabench-example/v1",
        "leaderboards": lambda: "/leaderboard",
    }


def hammer_random(
    url: str, kinds: dict[str, object], clients: int, duration: float
) -> dict[str, tuple[list[float], int]]:
    """Request random URLs of every kind from ``clients`` threads for ``duration`` s.

    Each request draws a kind, then a URL of it (``random_kinds``): most requests miss every
    cache, as at a public instance. Returns per kind the latencies and the errors.
    """
    found: dict[str, tuple[list[float], list[int]]] = {k: ([], [0]) for k in kinds}
    names = list(kinds)
    lock = threading.Lock()
    stop = time.perf_counter() + duration

    def _client(seed: int) -> None:
        draw = random.Random(seed)
        with httpx.Client(base_url=url, timeout=60) as client:
            while time.perf_counter() < stop:
                kind = draw.choice(names)
                with lock:
                    path = kinds[kind]()  # type: ignore[operator]
                started = time.perf_counter()
                reply = client.get(path, headers={"Accept": "text/html"})
                took = time.perf_counter() - started
                with lock:
                    found[kind][0].append(took)
                    if reply.status_code != 200:
                        found[kind][1][0] += 1

    threads = [threading.Thread(target=_client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {k: (lat, err[0]) for k, (lat, err) in found.items()}


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def run_size(triples: int, args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="qabench-scale-", dir=args.tmp))
    try:
        port = _free_port()
        config = _config(work, port)
        data = work / "data"
        kb = work / "kb.nt"
        write_kb(kb, triples)
        exe = Path(sys.executable).with_name("qabench")
        oxi = Path(sys.executable).with_name("oxigraph")
        t_oxi = _run(
            [str(oxi), "load", "--location", str(work / "oxigraph"), "--file", str(kb)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        shutil.rmtree(work / "oxigraph")
        t_kb = _run(
            [
                str(exe),
                "--config",
                str(config),
                "--data-dir",
                str(data),
                "kb",
                "load",
                str(kb),
                "--name",
                "dbpedia",
            ],
            stdout=subprocess.DEVNULL,
        )
        print(f"\n== {triples:,} KB triples + {args.experiments:,} experiments")
        print(
            f"kb load: qabench {t_kb:.1f} s, oxigraph load {t_oxi:.1f} s, ratio {t_kb / t_oxi:.2f}"
        )
        per = build_experiments(data, config, args.experiments)
        print(f"experiments: {args.experiments:,} x {per} quads")
        env = {**os.environ, "QABENCH_SUBMIT_TOKEN": TOKEN}
        server = subprocess.Popen(
            [
                str(exe),
                "--config",
                str(config),
                "--data-dir",
                str(data),
                "serve",
                "--port",
                str(port),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=(work / "serve.log").open("w"),  # a pipe nobody reads would block the server
        )
        url = f"http://127.0.0.1:{port}"
        try:
            started = time.perf_counter()
            with httpx.Client(base_url=url, timeout=60) as client:
                while True:
                    try:
                        if client.get("/sparql", params={"query": "ASK {}"}).status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    if server.poll() is not None:
                        raise RuntimeError((work / "serve.log").read_text()[-2000:])
                    time.sleep(0.2)
                print(f"server ready (SPARQL view built) in {time.perf_counter() - started:.1f} s")
                ups, vis, rss = [], [], {}
                for n in range(args.writes):
                    up, seen = upload(client, n)
                    ups.append(up)
                    vis.append(seen)
                    if n + 1 in (1, 10, args.writes):
                        rss[n + 1] = _rss(server.pid)
                rss1, rss10, rss100 = rss[1], rss.get(10, rss[1]), rss[args.writes]
                print(
                    f"upload p50 {statistics.median(ups) * 1000:.0f} ms, max {max(ups) * 1000:.0f} ms; "
                    f"visible to SPARQL p50 {statistics.median(vis) * 1000:.0f} ms, max {max(vis) * 1000:.0f} ms"
                )
                # Caches (RocksDB blocks, the workers' open views) warm up over the first
                # writes; growth per write shows between the 10th and the last.
                print(
                    f"memory (server + workers) after 1 write {rss1 / 2**20:.0f} MB, after 10 "
                    f"{rss10 / 2**20:.0f} MB, after {args.writes} {rss100 / 2**20:.0f} MB "
                    f"({(rss100 - rss1) / rss1 * 100:+.1f} % from the 1st, "
                    f"{(rss100 - rss10) / rss10 * 100:+.1f} % from the 10th)"
                )
                eid = "202500005000"
                version = f"{url}/dataset/bench-0/v1"
                paths = [
                    "/",
                    "/datasets",
                    "/experiments",
                    "/experiments?page=50",
                    "/experiments?sort=score&page=20",
                    "/systems",
                    f"/experiment/{eid}",
                    f"/task/{eid}/1",
                    "/system/system-7",
                    "/dataset/bench-0/v1",
                    f"/leaderboard?version={version}",
                    f"/leaderboard?version={url}/dataset/qabench-example/v1",
                ]
                print(f"{'page':58s} {'req':>6s} {'p50 ms':>8s} {'p99 ms':>8s} errors")
                for path in paths:
                    lat, err = hammer(url, path, args.clients, args.duration)
                    print(
                        f"{path[:58]:58s} {len(lat):6d} {_pct(lat, 0.5):8.1f} {_pct(lat, 0.99):8.1f} {err}"
                    )
                kinds = random_kinds(random.Random(7), args.experiments, url)
                found = hammer_random(url, kinds, args.clients, args.duration * len(kinds))
                print(f"\nrandom URLs, {args.clients} clients (target p99 < 100 ms)")
                print(f"{'kind':58s} {'req':>6s} {'p50 ms':>8s} {'p99 ms':>8s} errors")
                for kind, (lat, err) in found.items():
                    if lat:
                        print(
                            f"{kind:58s} {len(lat):6d} {_pct(lat, 0.5):8.1f} {_pct(lat, 0.99):8.1f} {err}"
                        )
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(60)
            except subprocess.TimeoutExpired:
                server.kill()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def random_on(scale_dir: Path, args: argparse.Namespace) -> None:
    """Serve a kept scale directory (``bench/resilience.py``'s layout: ``config.toml`` and
    ``data/``) and request random URLs of every kind, dataset versions drawn from its own list."""
    sys.path.insert(0, str(REPO / "bench"))
    from resilience import Server, _built_port

    server = Server(scale_dir / "data", demo=False, port=_built_port(scale_dir))
    print(f"serving {scale_dir} (pages after {server.start()[0]:.1f} s)")
    try:
        listed = httpx.get(server.url + "/datasets", headers={"Accept": "text/html"}, timeout=60)
        names = sorted(set(re.findall(r'href="/dataset/([^"/]+)"', listed.text)))
        rng = random.Random(7)
        kinds = random_kinds(rng, args.experiments, server.url)
        kinds["dataset version"] = lambda: f"/dataset/{rng.choice(names)}/v1"
        found = hammer_random(server.url, kinds, args.clients, args.duration * len(kinds))
        print(f"random URLs, {args.clients} clients (target p99 < 100 ms)")
        print(f"{'kind':24s} {'req':>6s} {'p50 ms':>8s} {'p99 ms':>8s} errors")
        for kind, (lat, err) in found.items():
            print(f"{kind:24s} {len(lat):6d} {_pct(lat, 0.5):8.1f} {_pct(lat, 0.99):8.1f} {err}")
    finally:
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--experiments", type=int, default=10_000)
    parser.add_argument("--writes", type=int, default=100)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--tmp", default=None, help="where to build the stores (default: /tmp)")
    parser.add_argument(
        "--random-on",
        type=Path,
        metavar="DIR",
        help="only the random-URL mode, on a kept scale directory (config.toml and data/)",
    )
    args = parser.parse_args()
    if args.random_on is not None:
        random_on(args.random_on, args)
        return 0
    for size in args.sizes:
        run_size(size, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: the serving layer under attack and faults, on loopback (issue figures of docs/server.md).

Sections (``--only`` picks some; all run by default):

- ``connections``: ``qabench serve`` on the demo data; one address (127.0.0.2) opens 300
  connections, half idle after one request and half sending a request head a byte every few
  seconds, while four readers (127.0.0.1) fetch pages and run SPARQL queries: p50/p99 and
  failures of the readers (target p99 < 2 s). Then bodies over the limit: ``POST /sparql`` and
  ``POST /upload/dataset`` announcing 900 MB: time to the 413 and body bytes the client had to
  send (target 0).
- ``consistency``: the app on our HTTP server in this process; 200 mixed writes over HTTP
  (dataset uploads, experiments of the built-in ``gold`` system, publications, admin updates
  that remove and add the same quad); after each, the public SPARQL endpoint's quads per graph
  (over HTTP) against the main store's public graphs (read directly): mismatches (target 0).
- ``faults``: ``qabench serve`` on a data directory on a 64 MiB tmpfs (root only): kill -9
  while an experiment runs, restart, and a full disk while writing, then space freed: time until
  pages and SPARQL answer again, whether a 503 named a server path, and the endpoint against
  the store after each fault (target: equal, back within 10 s).
- ``restart`` (needs ``--scale DIR``, a data directory built by ``bench/scale.py``'s helpers,
  e.g. 1 M KB triples and 10,000 experiments; ``--build-scale`` builds one there): pages and
  SPARQL after a restart with everything kept, and with the mirror rebuilt (target < 10 s).
- ``dump``: after a public write, time to the first byte of ``/dump.nq`` (target < 1 s); eight
  dump requests abandoned after their first bytes, then page latency (nobody blocked).

- ``crowd``, ``half-sent``, ``entity-bomb``, ``kill-9``: the cases of issue 41
  (``bench/resilience_round3.py`` says what each does and its target).

Runaway SPARQL clients and fairness are measured by ``bench/sparql_fairness.py``.

    .venv/bin/python bench/resilience.py [--only connections consistency faults restart dump
        crowd half-sent entity-bomb kill-9] [--scale DIR] [--build-scale]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
# after the repository: bench/server.py must not shadow the server package
sys.path.append(str(REPO / "bench"))
from resilience_round3 import SECTIONS as ROUND3  # noqa: E402  (a sibling script)

SUBMIT, ADMIN = "bench-submit-token", "bench-admin-token"
EXAMPLE = REPO / "server" / "examples" / "example-questions.json"


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Server:
    """``qabench serve`` in its own process over ``data`` (demo data when the store is empty)."""

    def __init__(
        self, data: Path, *, demo: bool = True, extra: str = "", port: int | None = None
    ) -> None:
        self.data = data
        # A store built elsewhere keeps the base IRI (and so the port) it was built with.
        self.port = port or _port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = data.parent / f"{data.name}.toml"
        self.config.write_text(
            f'[server]\nbase_iri = "{self.url}"\nport = {self.port}\n'
            f"demo = {str(demo).lower()}\n{extra}\n[datasets]\n"
            f'reference_data = "{REPO.parent / "shared" / "data"}"\n',
            "utf-8",
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> tuple[float, float]:
        """Start and return the seconds until a page and until SPARQL answered."""
        env = {**os.environ, "QABENCH_SUBMIT_TOKEN": SUBMIT, "QABENCH_ADMIN_TOKEN": ADMIN}
        started = time.monotonic()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "server",
                "--config",
                str(self.config),
                "--data-dir",
                str(self.data),
                "serve",
                "--port",
                str(self.port),
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=(self.data.parent / f"{self.data.name}.log").open("ab"),
        )
        page = sparql = None
        while page is None or sparql is None:
            assert self.process.poll() is None, "the server stopped"
            assert time.monotonic() - started < 900, "the server did not come up"
            with contextlib.suppress(httpx.HTTPError):
                if page is None and httpx.get(self.url + "/", timeout=30).status_code == 200:
                    page = time.monotonic() - started
                ask = {"query": "ASK {}"}
                if (
                    sparql is None
                    and httpx.get(self.url + "/sparql", params=ask, timeout=30).status_code == 200
                ):
                    sparql = time.monotonic() - started
            time.sleep(0.05)
        return page, sparql

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(120)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)
        self.process = None


def _auth(token: str = SUBMIT) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Accept": "application/json"}


def _dataset(n: int) -> bytes:
    questions = [
        {
            "id": str(i),
            "question": [{"language": "en", "string": f"Bench question {n}-{i}?"}],
            "answers": [
                {
                    "head": {"vars": ["x"]},
                    "results": {
                        "bindings": [
                            {"x": {"type": "uri", "value": f"http://example.org/a{n}-{i}"}}
                        ]
                    },
                }
            ],
        }
        for i in range(10)
    ]
    return json.dumps({"dataset": {"id": f"bench-{n}"}, "questions": questions}).encode()


def _sparql_counts(client: httpx.Client, url: str) -> dict[str, int]:
    query = "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g"
    response = client.get(
        url + "/sparql",
        params={"query": query},
        headers={"Accept": "application/sparql-results+json"},
        timeout=60,
    )
    response.raise_for_status()
    rows = response.json()["results"]["bindings"]
    return {r["g"]["value"]: int(r["n"]["value"]) for r in rows}


def _store_counts(data: Path, base: str) -> dict[str, int]:
    from server.replica.mirror import graph_size
    from store.triplestore import TripleStore
    from store.visibility import VisibilityIndex

    store = TripleStore.open(data / "store")
    try:
        public = VisibilityIndex(store, base).public_graphs()
        return {g.value: n for g in public if (n := graph_size(store, g))}
    finally:
        store.close()


# ---------------------------------------------------------------- connections
def connections(work: Path) -> None:
    # the readers are one client: no per-client query rate, so every failure is the attack's
    server = Server(work / "conn", extra="sparql_requests_per_minute = 0")
    server.start()
    try:
        held: list[socket.socket] = []
        stop = threading.Event()

        def attacker() -> None:
            for n in range(300):
                sock = socket.socket()
                sock.bind(("127.0.0.2", 0))
                sock.settimeout(2)
                with contextlib.suppress(OSError):
                    sock.connect(("127.0.0.1", server.port))
                    if n % 2:
                        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # then idle
                    else:
                        sock.sendall(b"GET / HTTP/1.1\r\n")  # a head that crawls
                held.append(sock)
            while not stop.wait(3):
                for sock in held[::2]:
                    with contextlib.suppress(OSError):
                        sock.sendall(b"X")

        threading.Thread(target=attacker, daemon=True).start()
        time.sleep(2)
        latencies: list[float] = []
        failures = 0
        deadline = time.monotonic() + 20

        statuses: dict[object, int] = {}

        def reader(source: str) -> None:
            nonlocal failures
            paths = ["/", "/experiments", "/sparql?query=ASK%20%7B%7D"]
            transport = httpx.HTTPTransport(local_address=source)
            with httpx.Client(timeout=10, transport=transport) as client:
                n = 0
                while time.monotonic() < deadline:
                    started = time.monotonic()
                    try:
                        status: object = client.get(server.url + paths[n % 3]).status_code
                    except httpx.HTTPError as exc:
                        status = type(exc).__name__
                    statuses[status] = statuses.get(status, 0) + 1
                    ok = status == 200
                    latencies.append(time.monotonic() - started)
                    failures += not ok
                    n += 1

        # four readers, each its own client (a client may run one SPARQL query at a time)
        sources = ["127.0.0.1", "127.0.0.3", "127.0.0.4", "127.0.0.5"]
        readers = [threading.Thread(target=reader, args=(s,)) for s in sources]
        for t in readers:
            t.start()
        for t in readers:
            t.join()
        stop.set()
        for sock in held:
            sock.close()
        print(
            f"connections: one address holding 300 idle/slow connections; readers "
            f"{len(latencies)} requests, p50 {_pct(latencies, 0.5) * 1000:.0f} ms, "
            f"p99 {_pct(latencies, 0.99) * 1000:.0f} ms, failures {failures}"
        )
        for path, headers in (("/sparql", {}), ("/upload/dataset", _auth())):
            for _ in range(3 if path.startswith("/upload") else 1):
                sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
                started = time.monotonic()
                head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
                sock.sendall(
                    f"POST {path} HTTP/1.1\r\nHost: x\r\n{head}"
                    f"Content-Length: 900000000\r\n\r\n".encode()
                )
                answer = sock.recv(200)
                sock.close()
                print(
                    f"  POST {path} announcing 900 MB: {answer.split(b' ')[1].decode()} "
                    f"after {(time.monotonic() - started) * 1000:.1f} ms, 0 body bytes sent"
                )
    finally:
        server.stop()


# ---------------------------------------------------------------- consistency
def consistency(work: Path, writes: int = 200) -> None:
    from waitress import wasyncore

    from server import httpd
    from server.app import create_app
    from server.config import config_from_dict

    port = _port()
    url = f"http://127.0.0.1:{port}"
    os.environ["QABENCH_ADMIN_TOKEN"] = ADMIN
    os.environ["QABENCH_SUBMIT_TOKEN"] = SUBMIT
    config = config_from_dict(
        {
            "server": {"base_iri": url, "demo": True, "sparql_requests_per_minute": 0},
            "store": {"data_dir": str(work / "consistency")},
        },
        source=REPO / "config.toml",
    )
    app = create_app(config)
    svc = app.extensions["services"]
    servers, events, adjustments = httpd.create_servers(app, config.server, "127.0.0.1", port)
    threading.Thread(target=httpd.run, args=(servers, events, adjustments), daemon=True).start()
    from server.replica.mirror import graph_size

    def expected() -> dict[str, int]:
        with svc.writes.lock:
            public = svc.index.public_graphs()
        return {g.value: n for g in public if (n := graph_size(svc.store, g))}

    mismatches, kinds = 0, {"upload": 0, "experiment": 0, "publish": 0, "update": 0}
    started_ids: list[str] = []
    try:
        with httpx.Client(timeout=120) as client:
            for n in range(writes):
                kind = ("upload", "experiment", "update", "publish")[n % 4]
                if kind == "upload":
                    client.post(
                        url + "/upload/dataset",
                        headers=_auth(),
                        files={"dataset_file": (f"b{n}.json", _dataset(n))},
                    )
                elif kind == "experiment":
                    body = client.post(
                        url + "/experiments/new",
                        headers=_auth(),
                        data={"dataset": "qabench-example@1", "builtin": "gold", "languages": "en"},
                    )
                    started_ids.append(body.json()["id"])
                elif kind == "publish" and started_ids:
                    eid = started_ids.pop(0)
                    runner = app.extensions["experiment_runner"]
                    runner.wait(eid, 120)
                    client.post(url + f"/experiments/{eid}/publish", headers=_auth())
                else:
                    triple = f'<{url}/note/{n % 3}> <http://www.w3.org/2000/01/rdf-schema#comment> "same"'
                    update = (
                        f"DELETE DATA {{ GRAPH <{url}/graph/rag> {{ {triple} }} }} ; "
                        f"INSERT DATA {{ GRAPH <{url}/graph/rag> {{ {triple} }} }}"
                    )
                    client.post(
                        url + "/update",
                        content=update.encode(),
                        headers={**_auth(ADMIN), "Content-Type": "application/sparql-update"},
                    )
                kinds[kind] += 1
                # what a reader sees right after the write, against the store itself
                # an anonymous reader (the writing client holds the new experiments' tokens)
                with httpx.Client(timeout=120) as reader:
                    seen = _sparql_counts(reader, url)
                wanted = expected()
                if seen != wanted:
                    mismatches += 1
                    if mismatches <= 3:
                        diff = {
                            g: (seen.get(g), wanted.get(g))
                            for g in seen.keys() | wanted.keys()
                            if seen.get(g) != wanted.get(g)
                        }
                        print(f"  after write {n} ({kind}): (SPARQL, store) {diff}")
        print(
            f"consistency: {writes} writes {kinds}: public SPARQL differed from the store's "
            f"public graphs after {mismatches} of them; heals {svc.views.events}"
        )
    finally:
        wasyncore.close_all(events)
        svc.close()


# ---------------------------------------------------------------- faults
@contextlib.contextmanager
def _tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _compare(server: Server) -> bool:
    with httpx.Client() as client:
        seen = _sparql_counts(client, server.url)
    server.stop()
    return seen == _store_counts(server.data, server.url)


def faults(work: Path) -> None:
    if os.geteuid() != 0:
        print("faults: skipped (mounting a tmpfs needs root)")
        return
    with _tmpfs(work / "disk", "64m") as disk:
        server = Server(disk / "data")
        server.start()
        eid = httpx.post(
            server.url + "/experiments/new",
            headers=_auth(),
            data={"dataset": "qabench-example@1", "builtin": "gold", "languages": "en"},
        ).json()["id"]
        time.sleep(0.3)
        server.stop(signal.SIGKILL)
        page, sparql = server.start()
        print(
            f"faults: kill -9 while experiment {eid} ran: back in {page:.1f} s (pages), "
            f"{sparql:.1f} s (SPARQL); endpoint equals the store: {_compare(server)}"
        )
        server.start()
        ballast = disk / "ballast"
        with ballast.open("wb") as fh, contextlib.suppress(OSError):
            while True:
                fh.write(b"\0" * (1 << 20))
                fh.flush()
        write = httpx.post(
            server.url + "/upload/dataset",
            headers=_auth(),
            files={"dataset_file": ("full.json", _dataset(999))},
            timeout=60,
        )
        answer = httpx.get(server.url + "/sparql", params={"query": "ASK {}"}, timeout=30)
        named_path = str(disk) in answer.text or str(disk) in write.text
        ballast.unlink()
        freed = time.monotonic()
        while (
            httpx.get(server.url + "/sparql", params={"query": "ASK {}"}, timeout=30).status_code
            != 200
        ):
            time.sleep(0.1)
        healed = time.monotonic() - freed
        print(
            f"faults: full disk: the write answered {write.status_code}, SPARQL "
            f"{answer.status_code}, a server path named: {named_path}; SPARQL back "
            f"{healed:.1f} s after space was freed; endpoint equals the store: "
            f"{_compare(server)}"
        )


# ---------------------------------------------------------------- restart
def build_scale(directory: Path, triples: int = 1_000_000, experiments: int = 10_000) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    import scale  # type: ignore[import-not-found]

    directory.mkdir(parents=True, exist_ok=True)
    config = scale._config(directory, _port())
    scale.write_kb(directory / "kb.nt", triples)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "server",
            "--config",
            str(config),
            "--data-dir",
            str(directory / "data"),
            "kb",
            "load",
            str(directory / "kb.nt"),
            "--name",
            "dbpedia",
        ],
        check=True,
        cwd=REPO,
    )
    scale.build_experiments(directory / "data", config, experiments)


def _built_port(scale_dir: Path) -> int:
    """Return the port of the base IRI a scale directory was built with (its config.toml)."""
    import tomllib

    base = tomllib.loads((scale_dir / "config.toml").read_text("utf-8"))["server"]["base_iri"]
    return int(base.rsplit(":", 1)[1].strip("/"))


def restart(scale_dir: Path) -> None:
    server = Server(scale_dir / "data", demo=False, port=_built_port(scale_dir))
    first = server.start()
    server.stop()
    kept = server.start()
    server.stop()
    (scale_dir / "data" / "views" / "mirror.json").unlink(missing_ok=True)
    rebuilt = server.start()
    quads = None
    with contextlib.suppress(httpx.HTTPError, KeyError, ValueError):
        body = httpx.get(
            server.url + "/sparql",
            params={"query": "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"},
            headers={"Accept": "application/sparql-results+json"},
            timeout=60,
        ).json()
        quads = int(body["results"]["bindings"][0]["n"]["value"])
    server.stop()
    print(
        f"restart at {scale_dir} ({quads} public quads): start {first[0]:.1f}/"
        f"{first[1]:.1f} s (pages/SPARQL), restart {kept[0]:.1f}/{kept[1]:.1f} s, "
        f"restart with the mirror rebuilt {rebuilt[0]:.1f}/{rebuilt[1]:.1f} s"
    )


# ---------------------------------------------------------------- dump
def dump(work: Path, scale_dir: Path | None = None) -> None:
    if scale_dir is not None:
        server = Server(scale_dir / "data", demo=False, port=_built_port(scale_dir))
    else:
        server = Server(work / "dump")
    server.start()
    try:
        with httpx.Client(timeout=120) as client:
            client.post(
                server.url + "/upload/dataset",
                headers=_auth(),
                files={"dataset_file": ("d.json", _dataset(int(time.time())))},
            )
            started = time.monotonic()
            with client.stream(
                "GET", server.url + "/dump.nq", headers={"Accept-Encoding": "identity"}
            ) as response:
                next(response.iter_raw(1))
                first = time.monotonic() - started
            abandoned = 0
            for _ in range(8):
                with (
                    client.stream("GET", server.url + "/dump.nq") as response,
                    contextlib.suppress(StopIteration),
                ):
                    next(response.iter_raw(1024))
                abandoned += 1
            latencies = []
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                t = time.monotonic()
                client.get(server.url + "/")
                latencies.append(time.monotonic() - t)
        print(
            f"dump: first byte {first * 1000:.0f} ms after a write; after {abandoned} "
            f"abandoned dump requests the home page p50 {_pct(latencies, 0.5) * 1000:.0f} ms, "
            f"p99 {_pct(latencies, 0.99) * 1000:.0f} ms"
        )
    finally:
        server.stop()


SECTIONS: dict[str, Callable[..., None]] = {
    "connections": connections,
    "consistency": consistency,
    "faults": faults,
    "dump": dump,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=[*SECTIONS, *ROUND3, "restart"])
    parser.add_argument("--scale", type=Path, help="a data directory built for bench/scale.py")
    parser.add_argument("--build-scale", action="store_true", help="build --scale first")
    parser.add_argument("--writes", type=int, default=200)
    args = parser.parse_args()
    chosen = args.only or [*SECTIONS, *ROUND3, "restart"]
    work = Path(tempfile.mkdtemp(prefix="qabench-resilience-"))
    try:
        for name in chosen:
            if name == "restart":
                if args.scale is None:
                    print("restart: skipped (give --scale DIR)")
                    continue
                if args.build_scale:
                    build_scale(args.scale)
                restart(args.scale)
            elif name == "consistency":
                consistency(work, args.writes)
            elif name == "dump":
                dump(work)
                if args.scale is not None:
                    dump(work, args.scale)
            elif name in ROUND3:
                ROUND3[name](work, Server)
            else:
                SECTIONS[name](work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

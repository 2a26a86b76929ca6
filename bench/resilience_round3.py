"""The cases of issue 41 for ``bench/resilience.py`` (sections ``crowd``, ``half-sent``,
``entity-bomb``, ``kill-9``), each against a real ``qabench serve`` or command on loopback.

- ``crowd``: an ordinary client (known to the server: three queries first) asks a one-subject
  query every second for ``CROWD_SECONDS`` while 30 addresses each run one heavy query after
  another (a cross product that runs into the 5 s time limit); then the same with the crowd in
  IPv6 (30 addresses in ten /64s). The addresses are named in ``X-Forwarded-For`` to a server
  that trusts 127.0.0.1 as its proxy. Target: the ordinary client answered (was 0 of 7).
- ``half-sent``: 40 addresses (127.0.2.x) each keep 27 connections with a half-sent request
  (under the per-address cap of 32; 1,080 in all against the limit of 1,000), reopening each
  one closed at once; meanwhile 12 probes from another address. Target: 12 of 12 (was 8).
- ``entity-bomb``: ``qabench kb load`` of a file of nested entity declarations (declared,
  never used) under a 3 GB address-space cap. Target: refused at once (was 46 s, 13.9 GB).
- ``kill-9``: ``kill -9`` of ``qabench serve`` while a worker runs a heavy query: how long the
  query workers and the fork server outlive it (target: none), then the restart until pages and
  SPARQL answer.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
HEAVY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"
LIGHT = "SELECT ?p ?o WHERE { ?s ?p ?o } LIMIT 5"
CROWD_SECONDS = 40.0


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _crowd_round(url: str, crowd: list[str], regular: str) -> tuple[Counter[int], list[float]]:
    stop = time.monotonic() + CROWD_SECONDS
    tally: Counter[int] = Counter()
    took: list[float] = []

    def heavy(address: str) -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            while time.monotonic() < stop:
                with contextlib.suppress(httpx.HTTPError):
                    client.get(
                        "/sparql", params={"query": HEAVY}, headers={"X-Forwarded-For": address}
                    )

    with httpx.Client(base_url=url, timeout=60) as client:
        for _ in range(3):
            client.get("/sparql", params={"query": LIGHT}, headers={"X-Forwarded-For": regular})
        threads = [threading.Thread(target=heavy, args=(a,), daemon=True) for a in crowd]
        for thread in threads:
            thread.start()
        time.sleep(1.0)
        while time.monotonic() < stop:
            started = time.monotonic()
            try:
                status = client.get(
                    "/sparql", params={"query": LIGHT}, headers={"X-Forwarded-For": regular}
                ).status_code
            except httpx.HTTPError:
                status = 0
            took.append(time.monotonic() - started)
            tally[status] += 1
            time.sleep(max(0.0, 1.0 - (time.monotonic() - started)))
        for thread in threads:
            thread.join(60)
    return tally, took


def crowd(work: Path, server_class: Any) -> None:
    server = server_class(work / "crowd", extra='trusted_proxy = "127.0.0.1"')
    server.start()
    try:
        rounds = {
            "IPv4, 30 addresses": ([f"10.41.0.{n + 2}" for n in range(30)], "10.41.1.1"),
            "IPv6, 30 addresses in ten /64s": (
                [f"2001:db8:41:{n % 10}::{n + 1}" for n in range(30)],
                "2001:db8:41:ff::1",
            ),
        }
        for name, (addresses, regular) in rounds.items():
            tally, took = _crowd_round(server.url, addresses, regular)
            print(
                f"crowd ({name}, heavy queries for {CROWD_SECONDS:.0f} s): the ordinary client "
                f"got {tally[200]} of {sum(tally.values())} answered ({dict(tally)}), "
                f"p50 {_pct(took, 0.5) * 1000:.0f} ms, p99 {_pct(took, 0.99) * 1000:.0f} ms"
            )
            time.sleep(6)  # the last heavy queries end
    finally:
        server.stop()


def half_sent(work: Path, server_class: Any) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
    server = server_class(work / "half")
    server.start()
    done = threading.Event()
    opened = Counter[str]()

    def attacker(source: str) -> None:
        held: list[socket.socket] = []
        while not done.is_set():
            for sock in list(held):
                try:
                    sock.settimeout(0.001)
                    if sock.recv(100) == b"":
                        raise OSError("closed")
                except TimeoutError:
                    continue
                except OSError:
                    held.remove(sock)
                    sock.close()
            while len(held) < 27 and not done.is_set():
                sock = socket.socket()
                try:
                    sock.bind((source, 0))
                    sock.settimeout(2)
                    sock.connect(("127.0.0.1", server.port))
                    sock.sendall(b"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Le")
                except OSError:
                    sock.close()
                    break
                held.append(sock)
                opened[source] += 1
            time.sleep(0.05)
        for sock in held:
            sock.close()

    threads = [
        threading.Thread(target=attacker, args=(f"127.0.2.{n}",), daemon=True) for n in range(1, 41)
    ]
    try:
        for thread in threads:
            thread.start()
        time.sleep(5)
        answered, took = 0, []
        for _ in range(12):
            started = time.monotonic()
            with contextlib.suppress(httpx.HTTPError):
                answered += httpx.get(server.url + "/", timeout=10).status_code == 200
            took.append(time.monotonic() - started)
            time.sleep(0.5)
        print(
            f"half-sent: 40 addresses x 27 half-sent requests, reopened at once "
            f"({sum(opened.values())} opened in all); probes {answered} of 12 answered, "
            f"p50 {_pct(took, 0.5) * 1000:.0f} ms, max {max(took) * 1000:.0f} ms"
        )
    finally:
        done.set()
        for thread in threads:
            thread.join(30)
        server.stop()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _bomb(levels: int = 9) -> bytes:
    lines = ['<!ENTITY e0 "lolololololololololololololololololololol">']
    lines += [f'<!ENTITY e{n} "{f"&e{n - 1};" * 10}">' for n in range(1, levels)]
    rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
    return (
        '<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n' + "\n".join(lines) + "\n]>\n"
        f'<rdf:RDF xmlns:rdf="{rdf}"><rdf:Description rdf:about="http://e.test/s"/></rdf:RDF>\n'
    ).encode()


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def entity_bomb(work: Path, server_class: Any) -> None:
    path = work / "bomb.rdf"
    path.write_bytes(_bomb())
    started = time.monotonic()
    command = [sys.executable, "-m", "server", "--data-dir", str(work / "bomb-data")]
    done = subprocess.run(
        [*command, "kb", "load", str(path), "--name", "bomb"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_capped,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    message = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    print(
        f"entity-bomb: kb load of a {len(_bomb())}-byte file of nested declarations (a 3 GB "
        f"cap): exit {done.returncode} after {time.monotonic() - started:.1f} s (the command's "
        f"start included); {message.rpartition(': ')[2][:160]}"
    )


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text()
                if int(stat.rpartition(")")[2].split()[1]) == pid:
                    found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def kill_9(work: Path, server_class: Any) -> None:
    server = server_class(work / "kill9", extra="query_timeout_seconds = 60")
    server.start()
    asking = "import httpx, sys; httpx.get(sys.argv[1], params={'query': sys.argv[2]}, timeout=300)"
    sender = subprocess.Popen(
        [sys.executable, "-c", asking, server.url + "/sparql", HEAVY],
        stderr=subprocess.DEVNULL,  # its server is killed under it
    )
    try:
        time.sleep(2.0)
        helpers = _children(server.process.pid)
        descendants = helpers + [pid for helper in helpers for pid in _children(helper)]
        killed = time.monotonic()
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(30)
        server.process = None
        while any(_alive(pid) for pid in descendants) and time.monotonic() - killed < 120:
            time.sleep(0.05)
        left = [pid for pid in descendants if _alive(pid)]
        gone = time.monotonic() - killed
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        page, sparql = server.start()
        print(
            f"kill-9 with a heavy query running: {len(descendants)} helper processes, all gone "
            f"{gone:.2f} s after the kill ({len(left)} still running after 120 s); restart: "
            f"pages {page:.1f} s, SPARQL {sparql:.1f} s"
        )
    finally:
        sender.kill()
        sender.wait(10)
        server.stop()


SECTIONS = {
    "crowd": crowd,
    "half-sent": half_sent,
    "entity-bomb": entity_bomb,
    "kill-9": kill_9,
}


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.path.append(str(REPO / "bench"))  # after the repository: bench/server.py shadows
    from resilience import Server

    chosen = sys.argv[1:] or list(SECTIONS)
    with tempfile.TemporaryDirectory(prefix="qabench-round3-") as folder:
        for name in chosen:
            SECTIONS[name](Path(folder), Server)

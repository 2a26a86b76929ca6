"""Fairness of the public SPARQL endpoint: runaway clients against everybody else (issue 25).

``run(directory, sizes)`` starts ``qabench serve`` over ``bench/server.py``'s data with the
default per-client limits, then for ``SECONDS`` seconds:

- three *runaway* clients, from source addresses 127.0.0.2, .3 and .4, each with three
  connections sending a query that runs into the time limit (a cross product over the store)
  as fast as they are answered, ignoring ``Retry-After``;
- four ordinary clients (127.0.0.5 ... .8) each sending a one-subject KB lookup every 0.2 s;
- one reader of HTML pages (127.0.0.9), one page every 0.2 s.

It prints how many of the ordinary clients' queries were answered (200) and how fast, what the
runaway clients got, and the pages' latency. Target: ordinary clients >= 90 % answered. Loopback
only, bounded in clients, time and per-request time.
"""

from __future__ import annotations

import collections
import random
import statistics
import threading
import time
from pathlib import Path

import bench_data
import httpx

SECONDS = 40.0
RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
LOOKUP = "SELECT ?p ?o WHERE { <http://dbpedia.org/resource/Entity_%d> ?p ?o }"
TARGET = 0.9


class Tally:
    """Statuses and latencies per group of clients (thread-safe)."""

    def __init__(self) -> None:
        self.statuses: dict[str, collections.Counter[str]] = collections.defaultdict(
            collections.Counter
        )
        self.latencies: dict[str, list[float]] = collections.defaultdict(list)
        self._lock = threading.Lock()

    def add(self, group: str, status: str, seconds: float) -> None:
        with self._lock:
            self.statuses[group][status] += 1
            if status == "200":
                self.latencies[group].append(seconds)


def _client(address: str, url: str) -> httpx.Client:
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=url, transport=transport, timeout=60)


def _loop(address: str, url: str, group: str, tally: Tally, stop: float, pause: float) -> None:
    rng = random.Random(address + group)
    with _client(address, url) as client:
        while time.monotonic() < stop:
            started = time.monotonic()
            try:
                if group == "pages":
                    response = client.get(
                        rng.choice(["/", "/datasets", "/experiments", "/systems"])
                    )
                else:
                    query = RUNAWAY if group == "runaway" else LOOKUP % rng.randrange(1000)
                    response = client.post("/sparql", data={"query": query})
                status = str(response.status_code)
                if response.status_code == 503 and group != "pages":
                    status += " " + _title(response)
            except httpx.HTTPError as exc:
                status = type(exc).__name__
            tally.add(group, status, time.monotonic() - started)
            time.sleep(pause)


def _title(response: httpx.Response) -> str:
    try:
        return str(response.json().get("detail", ""))[:40]
    except ValueError:
        return response.text[:40]


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else float("nan")


def _report(tally: Tally) -> bool:
    ok = True
    for group in ("others", "runaway", "pages"):
        statuses = tally.statuses[group]
        total = sum(statuses.values())
        answered = statuses["200"]
        times = tally.latencies[group]
        share = answered / total if total else 0.0
        median = statistics.median(times) * 1000 if times else float("nan")
        print(
            f"  {group:<8} {answered:>5,} of {total:>5,} answered ({share:.0%}); "
            f"p50 {median:,.0f} ms, p99 {_percentile(times, 0.99) * 1000:,.0f} ms; "
            f"{dict(statuses.most_common())}"
        )
        if group == "others":
            ok = share >= TARGET
    print(f"  ordinary clients answered >= {TARGET:.0%}: {'met' if ok else 'NOT met'}")
    return ok


def run(directory: Path, sizes: bench_data.Sizes, seconds: float = SECONDS) -> bool:
    """Run the scenario over the prepared data; print it and return whether the target is met."""
    del sizes  # the lookups use the first 1,000 entities, present at any size
    print(
        f"\nfairness: 3 runaway clients x 3 connections, 4 ordinary clients, 1 page reader, "
        f"{seconds:g} s, default limits"
    )
    with bench_data.qabench(directory, {}) as server:
        tally = Tally()
        stop = time.monotonic() + seconds
        threads = [
            threading.Thread(
                target=_loop,
                args=(f"127.0.0.{2 + n % 3}", server.url, "runaway", tally, stop, 0.02),
            )
            for n in range(9)
        ]
        threads += [
            threading.Thread(
                target=_loop, args=(f"127.0.0.{5 + n}", server.url, "others", tally, stop, 0.2)
            )
            for n in range(4)
        ]
        threads.append(
            threading.Thread(
                target=_loop, args=("127.0.0.9", server.url, "pages", tally, stop, 0.2)
            )
        )
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(seconds + 120)
        return _report(tally)

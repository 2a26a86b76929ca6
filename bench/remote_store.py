"""Benchmark: the store operations qabench uses, embedded versus ``oxigraph serve`` and Virtuoso.

Runs the same operations on the embedded store (the reference), on ``RemoteStore`` over
``oxigraph serve`` and on ``RemoteStore`` over Virtuoso (both started on loopback by the tests'
helpers, ``tests/store/engines.py``; Virtuoso with the account docs/virtuoso.md describes), and
prints each time with its ratio to the embedded store measured in the same run:

- one ``add`` of ``--quads`` quads (one graph, ten per subject, xsd:double values),
- ``snapshot`` of that graph (every quad read back),
- ten small ``apply`` calls (ten quads removed and added each),
- 200 subject lookups (``quads(subject, None, None, graph)``, what resource documents do).

Keep ``--quads`` below the test Virtuoso's ``ResultSetMaxRows`` (10,000).

    .venv/bin/python bench/remote_store.py [--quads 9000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pyoxigraph import Literal, NamedNode, Quad  # noqa: E402

from store.protocol import RdfStore  # noqa: E402
from store.triplestore import TripleStore  # noqa: E402
from tests.store.engines import serving_oxigraph, serving_virtuoso  # noqa: E402

GRAPH = NamedNode("http://bench.qabench.test/graph/g")
P = NamedNode("http://bench.qabench.test/p")


def _subject(n: int) -> NamedNode:
    return NamedNode(f"http://bench.qabench.test/s{n}")


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def measure(store: RdfStore, quads: list[Quad]) -> dict[str, float]:
    """Return seconds per operation on ``store`` (which must be empty)."""
    times = {f"add {len(quads):,} quads": _timed(lambda: store.add(quads))}
    times["read them back (snapshot)"] = _timed(lambda: store.snapshot([GRAPH]))

    def applies() -> None:
        for i in range(10):
            chunk = quads[i * 10 : (i + 1) * 10]
            store.apply(remove=chunk, add=chunk)

    times["10 small applies"] = _timed(applies)
    times["200 subject lookups"] = _timed(
        lambda: [list(store.quads(_subject(i), None, None, GRAPH)) for i in range(200)]
    )
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quads", type=int, default=9000)
    args = parser.parse_args()
    quads = [Quad(_subject(i // 10), P, Literal(i * 0.123456789), GRAPH) for i in range(args.quads)]
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        embedded = TripleStore.open(Path(tmp) / "embedded")
        results["embedded"] = measure(embedded, quads)
        embedded.close()
        for name, serving in (("oxigraph serve", serving_oxigraph), ("virtuoso", serving_virtuoso)):
            with serving(Path(tmp) / name.split()[0]) as engine:
                remote = engine.store()
                results[name] = measure(remote, quads)
                remote.close()
                print(f"{name} started in {engine.start_seconds:.2f} s", file=sys.stderr)
    print("| operation | " + " | ".join(results) + " |")
    print("| --- |" + " --- |" * len(results))
    for operation, reference in results["embedded"].items():
        cells = [
            f"{r[operation] * 1000:,.0f} ms ({r[operation] / reference:.1f}x)"
            for r in results.values()
        ]
        print(f"| {operation} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

"""Where a running qabench server spends its CPU: py-spy samples summarised for ``bench/server.py``.

``profile(pid, load, seconds)`` samples the server process and its query workers (py-spy
``--subprocesses``) while ``load(seconds)`` drives it, then prints per process kind (the
serving process, the query workers): how busy it was, the share of its busy samples by the
area of the function on top of the stack (waitress, Flask/Werkzeug, the SPARQL endpoint, the
worker hand-off, the engine, ...), the share spent under a few entry points (inclusive), and
the functions with most samples of their own. Samples whose top frame waits (a lock, a
condition, ``select``, a pipe read) are idle and left out. Needs ``py-spy`` (``pip install
py-spy``) and ptrace rights (root, or ``kernel.yama.ptrace_scope = 0``); without them it says so.
"""

from __future__ import annotations

import collections
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

# Areas by the file of the frame on top (first match wins).
AREAS = (
    ("waitress", r"waitress/"),
    ("flask/werkzeug", r"flask/|werkzeug/|jinja2/|itsdangerous/"),
    ("sparql endpoint", r"server/sparql/(endpoint|wsgi|analysis|page)"),
    ("worker hand-off", r"server/sparql/workers|server/sparql/fairness|multiprocessing/"),
    ("engine + serialisers", r"server/sparql/(jobs|results)|store/triplestore"),
    ("guard (rdflib parser)", r"server/sparql/guard|rdflib/|pyparsing/"),
    ("web layer", r"server/web/"),
    ("services / views", r"server/(services|replica)"),
    ("threads, queues, sockets", r"threading\.py|queue\.py|selectors\.py|socket\.py"),
    ("logging", r"logging/"),
)
# Entry points whose inclusive share is shown.
ENTRIES = (
    ("Flask app (wsgi_app)", "wsgi_app (flask/app.py"),
    ("the /sparql view", "endpoint (server/sparql/endpoint.py"),
    ("waiting for and talking to workers (QueryPool.run)", "QueryPool.run"),
    ("evaluate_job (worker)", "evaluate_job"),
)
# Functions that wait: a sample with one of these on top is idle.
WAITS = re.compile(
    r"^(Condition\.wait|Event\.wait|_wait_for_tstate_lock|select|poll|_poll|_recv|recv|"
    r"recv_bytes|_recv_bytes|accept|sleep|get|wait|_PollLikeSelector\.select|"
    r"Connection\._recv|Connection\._poll|SimpleQueue\.get|Queue\.get|readinto) "
)
_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^:()]*)(?::\d+)?\)$")


def _area(leaf: str) -> str:
    found = _FRAME.match(leaf)
    file = found.group("file") if found else ""
    for name, pattern in AREAS:
        if re.search(pattern, file):
            return name
    return "other: " + (Path(file).name if file else leaf[:40])


class Samples:
    """Busy samples of one process kind: by top frame, by area, under each entry point."""

    def __init__(self) -> None:
        self.leaves: collections.Counter[str] = collections.Counter()
        self.areas: collections.Counter[str] = collections.Counter()
        self.entries: collections.Counter[str] = collections.Counter()
        self.idle = 0

    def add(self, frames: list[str], count: int) -> None:
        leaf = frames[-1]
        if WAITS.match(leaf):
            self.idle += count
            return
        self.leaves[leaf] += count
        self.areas[_area(leaf)] += count
        stack = ";".join(frames)
        for name, marker in ENTRIES:
            if marker in stack:
                self.entries[name] += count


def parse(raw: Path) -> dict[str, Samples]:
    """Return busy samples per process kind from py-spy's raw (collapsed) output."""
    kinds: dict[str, Samples] = collections.defaultdict(Samples)
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        kind = "query workers" if "worker_main" in stack or "spawn_main" in stack else "server"
        kinds[kind].add(stack.split(";"), int(count))
    return kinds


def report(kinds: dict[str, Samples], seconds: float, rate: int) -> None:
    """Print the summary of ``parse``."""
    for kind, samples in sorted(kinds.items()):
        busy = sum(samples.leaves.values())
        if not busy:
            continue
        print(f"  {kind}: {busy / seconds / rate:.2f} cores busy ({busy:,} busy samples)")
        for area, count in samples.areas.most_common(7):
            print(f"    {count / busy:6.1%}  {area}")
        for name, count in samples.entries.items():
            print(f"    {count / busy:6.1%}  under {name}")
        print("    top functions (own samples):")
        for leaf, count in samples.leaves.most_common(6):
            print(f"    {count / busy:6.1%}  {leaf[:100]}")


def profile(pid: int, load: Callable[[float], object], seconds: float, rate: int = 100) -> None:
    """Sample ``pid`` and its children while ``load(seconds)`` runs; print the summary."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).exists():
        print("  (py-spy is not installed: pip install py-spy)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "profile.txt"
        command = [
            spy,
            "record",
            "--pid",
            str(pid),
            "--subprocesses",
            "--nonblocking",
            "--rate",
            str(rate),
            "--format",
            "raw",
            "--duration",
            str(int(seconds)),
            "--output",
            str(raw),
        ]
        spying = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        result = load(seconds)
        _, err = spying.communicate(timeout=seconds + 60)
        if spying.returncode != 0 or not raw.exists():
            print(f"  (py-spy failed: {err.decode(errors='replace').strip()[-300:]})")
            return
        print(f"  load while sampling: {result}")
        report(parse(raw), seconds, rate)

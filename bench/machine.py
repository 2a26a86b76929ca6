"""What a benchmark ran on, and where the CPU went while it ran: facts for ``bench/server.py``.

Two machines "of the same kind" (2 cores, the same packages) gave ratios against ``oxigraph
serve`` that differed by half (issue 40). The facts that explain such a difference are printed
with every run:

- ``describe()``: the processor, its cores and clock, the kernel, Python, pyoxigraph, wrk, the
  load average, the hypervisor, and three calibrations measured now: how long this machine
  takes to evaluate an ASK in one process with pyoxigraph (the engine's own speed), one system
  call, and a pipe round trip between two processes (what handing a request to another process
  costs here).
- ``server_processes(pid)``: the serving process and every process under it (the fork server,
  the query workers), each with the allocator it runs with, read from ``/proc/<pid>/maps``: the
  workers are meant to run on jemalloc (docs/server.md), and a worker without it evaluates
  about a fifth slower.
- ``CpuMeter``: during one round, the CPU time each measured process used (the serving
  process, the workers, Oxigraph, wrk itself) and what the rest of the machine used (other
  programs, steal time of the virtual machine), so a reader sees the server's share of the two
  cores and the bench's own cost.

Linux only (``/proc``); elsewhere the facts say they are unknown.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
ALLOCATOR_LIBRARIES = {
    "jemalloc": "libjemalloc.so",
    "mimalloc": "libmimalloc.so",
    "tcmalloc": "libtcmalloc",
}


def _read(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def cpu_model() -> str:
    """Return the processor's model name and clock as /proc/cpuinfo gives them."""
    info = _read("/proc/cpuinfo")
    model = re.search(r"^model name\s*:\s*(.+)$", info, re.M)
    mhz = re.search(r"^cpu MHz\s*:\s*([\d.]+)", info, re.M)
    bogo = re.search(r"^bogomips\s*:\s*([\d.]+)", info, re.M)
    parts = [model.group(1).strip() if model else platform.processor() or "unknown"]
    if mhz:
        parts.append(f"{float(mhz.group(1)):.0f} MHz")
    if bogo:
        parts.append(f"bogomips {float(bogo.group(1)):.0f}")
    return ", ".join(parts)


def _version(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "missing"
    return (
        (done.stdout or done.stderr).strip().splitlines()[0]
        if (done.stdout or done.stderr)
        else "?"
    )


def engine_calibration(seconds: float = 1.0) -> float:
    """Return the microseconds of CPU one ``ASK`` over a small in-memory store takes here.

    A fixed piece of the engine's work (parse, evaluate, write JSON) in this process: it tells
    how fast this machine runs Oxigraph, apart from any server.
    """
    from pyoxigraph import Literal, NamedNode, Quad, QueryResultsFormat, Store

    store = Store()
    store.extend(
        Quad(NamedNode(f"http://e/{n}"), NamedNode("http://e/p"), Literal(str(n)))
        for n in range(10_000)
    )
    done, started, deadline = 0, time.process_time(), time.monotonic() + seconds
    while time.monotonic() < deadline:
        for n in range(200):
            store.query(f"ASK {{ <http://e/{n * 37 % 10_000}> ?p ?o }}").serialize(
                format=QueryResultsFormat.JSON
            )
        done += 200
    return (time.process_time() - started) / done * 1e6


def pipe_round_trip(rounds: int = 5_000) -> float:
    """Return the microseconds of one round trip of a byte between two processes over pipes."""
    if not hasattr(os, "fork"):
        return float("nan")
    there_r, there_w = os.pipe()
    back_r, back_w = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child only echoes
        for _ in range(rounds):
            os.read(there_r, 1)
            os.write(back_w, b"x")
        os._exit(0)
    started = time.perf_counter()
    for _ in range(rounds):
        os.write(there_w, b"x")
        os.read(back_r, 1)
    elapsed = time.perf_counter() - started
    os.waitpid(child, 0)
    for fd in (there_r, there_w, back_r, back_w):
        os.close(fd)
    return elapsed / rounds * 1e6


def syscall_cost(rounds: int = 100_000) -> float:
    """Return the nanoseconds of one system call (``getppid``) here.

    Inside a virtual machine that traps system calls (nested virtualization such as PVM) one
    costs ten or more times what it costs on the host, and a server that crosses processes
    makes several per request where Oxigraph makes a few.
    """
    started = time.perf_counter()
    for _ in range(rounds):
        os.getppid()
    return (time.perf_counter() - started) / rounds * 1e9


def virtualization() -> str:
    """Return what /proc says about the hypervisor this runs under."""
    flags = re.search(r"^flags\s*:(.*)$", _read("/proc/cpuinfo"), re.M)
    if not flags or " hypervisor" not in flags.group(1):
        return "no hypervisor flag"
    wanted = ("nested_pvm", "haltpoll", "mitigations", "firecracker", "sched_vcpu")
    named = [w for w in _read("/proc/cmdline").split() if any(k in w for k in wanted)]
    return "virtual machine" + (f" (kernel command line: {' '.join(named)})" if named else "")


def describe() -> list[str]:
    """Return lines naming what this benchmark runs on (measured now)."""
    import pyoxigraph

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [
        f"processor: {cpu_model()}; {os.cpu_count()} cores ({affinity} usable by this process)",
        f"kernel {platform.release()}; Python {platform.python_version()}; pyoxigraph "
        f"{pyoxigraph.__version__}; {_version(['wrk', '--version']).split(' [')[0]}",
        f"load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (1 / 5 / 15 min)",
        f"{virtualization()}",
        f"calibration: one ASK in-process {engine_calibration():.1f} us of CPU; a system call "
        f"{syscall_cost():.0f} ns; a pipe round trip between two processes "
        f"{pipe_round_trip():.1f} us",
    ]


# ---------------------------------------------------------------- processes and allocators


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        found += [int(x) for x in _read(str(task)).split()]
    return found


def _cmdline(pid: int) -> str:
    return _read(f"/proc/{pid}/cmdline").replace("\0", " ").strip()


def allocator_of(pid: int) -> str:
    """Return the allocator process ``pid`` runs with, from the libraries it has mapped."""
    maps = _read(f"/proc/{pid}/maps")
    if not maps:
        return "unknown"
    for name, library in ALLOCATOR_LIBRARIES.items():
        if f"/{library}" in maps:
            return name
    return "system (glibc)"


@dataclass(frozen=True)
class Proc:
    """One process of a server: its id, its role and its allocator."""

    pid: int
    role: str
    allocator: str


def server_processes(pid: int) -> list[Proc]:
    """Return ``pid`` and the processes under it, each with its role and allocator.

    Roles follow how ``qabench serve`` starts them: the serving process; multiprocessing's
    fork server (a child whose command line names ``forkserver``) and the query workers it
    forked (its children); the resource tracker; anything else is ``other``.
    """
    found = [Proc(pid, "serving process", allocator_of(pid))]
    for child in _children(pid):
        line = _cmdline(child)
        if "forkserver" in line:
            found.append(Proc(child, "fork server", allocator_of(child)))
            found += [Proc(w, "query worker", allocator_of(w)) for w in _children(child)]
        elif "resource_tracker" in line:
            found.append(Proc(child, "resource tracker", allocator_of(child)))
        else:
            found.append(Proc(child, "other: " + line[:40], allocator_of(child)))
    return found


def allocator_lines(pid: int, wanted: str = "jemalloc") -> list[str]:
    """Return lines naming each process of the server at ``pid`` and its allocator, with a
    warning when a query worker does not run on ``wanted``."""
    procs = server_processes(pid)
    lines = [f"  {p.role:<17} pid {p.pid:<7} allocator {p.allocator}" for p in procs]
    workers = [p for p in procs if p.role == "query worker"]
    if not any(p.role == "fork server" for p in procs):
        lines.append("  NOTE: no fork server under the serving process (no worker started yet?)")
    off = [p for p in workers if p.allocator != wanted]
    if off:
        lines.append(
            f"  WARNING: {len(off)} of {len(workers)} query workers do not run on {wanted}"
        )
    return lines


# ---------------------------------------------------------------- CPU during a round


def _process_seconds(pid: int) -> float:
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _machine_ticks() -> list[int]:
    first = _read("/proc/stat").splitlines()[:1]
    return [int(x) for x in first[0].split()[1:]] if first else []


@dataclass
class CpuMeter:
    """CPU used per process group during one round, and by the rest of the machine.

    ``groups`` maps a label to a callable giving the pids to count (read at the start and the
    end of the round: a worker replaced during the round is counted while it lived).
    """

    groups: dict[str, Iterable[int]]
    cores: int = field(default_factory=lambda: os.cpu_count() or 1)

    def __post_init__(self) -> None:
        self._start: dict[int, float] = {}
        self._machine: list[int] = []
        self._t = 0.0

    def _pids(self) -> Iterator[int]:
        for pids in self.groups.values():
            yield from pids

    def start(self) -> None:
        """Note the counters now."""
        self._start = {pid: _process_seconds(pid) for pid in self._pids()}
        self._machine = _machine_ticks()
        self._t = time.monotonic()

    def stop(self, extra: dict[str, float] | None = None) -> dict[str, float]:
        """Return cores used per group since ``start`` (``extra``: seconds of CPU measured
        elsewhere, such as wrk's own rusage), plus ``others`` and ``steal``."""
        elapsed = max(1e-9, time.monotonic() - self._t)
        used: dict[str, float] = {}
        for label, pids in self.groups.items():
            seconds = 0.0
            for pid in pids:
                seconds += max(0.0, _process_seconds(pid) - self._start.get(pid, 0.0))
            used[label] = seconds / elapsed
        for label, seconds in (extra or {}).items():
            used[label] = seconds / elapsed
        ticks = [b - a for a, b in zip(self._machine, _machine_ticks(), strict=False)]
        if len(ticks) >= 8:
            busy = sum(ticks) - ticks[3] - ticks[4]  # idle, iowait
            ours = sum(used.values())
            used["others"] = max(0.0, busy / _TICK / elapsed - ours - ticks[7] / _TICK / elapsed)
            used["steal"] = ticks[7] / _TICK / elapsed
        return used


def main() -> int:
    """Print the facts of this machine (``python bench/machine.py [PID]``)."""
    for line in describe():
        print(line)
    if len(sys.argv) > 1:
        for line in allocator_lines(int(sys.argv[1])):
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

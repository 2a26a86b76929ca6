"""``bench/machine.py``: the facts ``bench/server.py`` prints about what it ran on. The allocator
of each process is read from what it has mapped, the processes of a real query pool are found
with their roles, and the CPU a process burns is counted in cores."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from server.sparql import isolation
from tests import REPO

JEMALLOC = isolation.allocator_library("jemalloc")


@pytest.fixture(scope="module")
def machine() -> Iterator[ModuleType]:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        yield importlib.import_module("machine")
    finally:
        sys.path.remove(str(REPO / "bench"))


def _sleeper(env: dict[str, str]) -> subprocess.Popen[bytes]:
    code = "import sys, time; print('up', flush=True); time.sleep(30)"
    process = subprocess.Popen(
        [sys.executable, "-c", code], env={**os.environ, **env}, stdout=subprocess.PIPE
    )
    assert process.stdout is not None and process.stdout.readline() == b"up\n"
    return process


def _end(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.wait()
    if process.stdout is not None:
        process.stdout.close()


@pytest.mark.skipif(JEMALLOC is None, reason="libjemalloc2 is not installed")
def test_the_allocator_of_a_process_is_read_from_its_mapped_libraries(machine: ModuleType) -> None:
    assert JEMALLOC is not None
    with_it, without = _sleeper({"LD_PRELOAD": JEMALLOC}), _sleeper({"LD_PRELOAD": ""})
    try:
        assert machine.allocator_of(with_it.pid) == "jemalloc"
        assert machine.allocator_of(without.pid) == "system (glibc)"
    finally:
        for process in (with_it, without):
            _end(process)
    assert machine.allocator_of(with_it.pid) == "unknown"  # gone


_POOL_MAIN = """
import sys, time
from server.sparql.workers import QueryPool

if __name__ == "__main__":
    pool = QueryPool(2, 30.0, 1024, allocator=sys.argv[1])
    pool.start()
    assert pool.wait_ready(60)
    print("ready", flush=True)
    time.sleep(60)
"""


@pytest.mark.slow  # a fresh interpreter with a query pool per case
@pytest.mark.skipif(JEMALLOC is None, reason="libjemalloc2 is not installed")
@pytest.mark.parametrize("allocator", ["jemalloc", "system"])
def test_the_processes_of_a_query_pool_are_found_with_their_allocators(
    machine: ModuleType, tmp_path: Path, allocator: str
) -> None:
    main = tmp_path / "main_module.py"
    main.write_text(_POOL_MAIN, "utf-8")
    process = subprocess.Popen(
        [sys.executable, str(main), allocator],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == b"ready\n"
        procs = machine.server_processes(process.pid)
        roles = sorted(p.role for p in procs)
        assert roles.count("query worker") == 2 and roles.count("fork server") == 1, roles
        workers = {p.allocator for p in procs if p.role == "query worker"}
        lines = machine.allocator_lines(process.pid)
    finally:
        _end(process)
    if allocator == "jemalloc":
        assert workers == {"jemalloc"}
        assert not any("WARNING" in line for line in lines), lines
    else:
        assert workers == {"system (glibc)"}
        assert any("2 of 2 query workers do not run on jemalloc" in line for line in lines)


def test_the_cpu_meter_counts_the_cores_a_process_used(machine: ModuleType) -> None:
    code = "import time\nend = time.monotonic() + 30\nwhile time.monotonic() < end: pass"
    busy = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(0.2)
        meter = machine.CpuMeter({"busy": [busy.pid], "idle": [os.getppid()]})
        meter.start()
        time.sleep(0.8)
        used = meter.stop({"wrk": 0.4})  # a process measured elsewhere: 0.4 s of CPU
    finally:
        busy.kill()
        busy.wait()
    # One process spinning: at most one core, and more than nothing even on a loaded machine.
    assert 0.05 < used["busy"] <= 1.05, used
    assert {"busy", "idle", "wrk", "others", "steal"} <= set(used)
    assert 0.3 < used["wrk"] < 0.55, used


def test_the_description_names_the_machine_and_its_calibrations(machine: ModuleType) -> None:
    lines = machine.describe()
    text = "\n".join(lines)
    assert len(lines) == 5 and "cores" in lines[0] and "load average" in lines[2], lines
    assert "ASK in-process" in text and "system call" in text and "pipe round trip" in text

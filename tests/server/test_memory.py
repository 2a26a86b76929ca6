"""The process's memory (``server.memory``): the generation cache computes each entry once,
however many callers ask at once, and keeps only the newest generation; the gate bounds how
many computations run; the heap is settled after start-up."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
import time

import pytest

from server.memory import ComputeGate, GenerationCache


def test_concurrent_misses_compute_once() -> None:
    cache = GenerationCache()
    calls: list[int] = []
    started = threading.Barrier(8)

    def _make() -> str:
        calls.append(1)
        time.sleep(0.2)
        return "value"

    results: list[str] = []

    def _ask() -> None:
        started.wait()
        results.append(cache.get_or_make(1, "key", _make))

    threads = [threading.Thread(target=_ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["value"] * 8 and len(calls) == 1
    # Another generation is another entry.
    assert cache.get_or_make(2, "key", lambda: "newer") == "newer"


def test_a_failed_computation_is_tried_again() -> None:
    cache = GenerationCache()

    def _fail() -> str:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        cache.get_or_make(1, "key", _fail)
    assert cache.get_or_make(1, "key", lambda: "ok") == "ok"


def test_only_the_newest_generation_is_kept() -> None:
    # Memory must not grow with the number of writes: each write starts a generation.
    cache = GenerationCache()
    for generation in range(1, 101):
        for key in ("a", "b", "c"):
            cache.get_or_make(generation, key, lambda: bytes(1000))
    assert len(cache) == 3
    # A late computation for an older generation is answered, not kept.
    assert cache.get_or_make(50, "late", lambda: "old") == "old"
    assert len(cache) == 3
    assert cache.get_or_make(100, "a", lambda: b"recomputed") == bytes(1000)


def test_one_kind_requested_at_random_never_evicts_another_kind() -> None:
    # 40 system pages stay while thousands of random experiment reads pass through
    cache = GenerationCache(entries=8)
    for n in range(4):
        cache.get_or_make(1, f"system-page {n}", lambda: "page")
    made: list[str] = []
    for n in range(1000):
        cache.get_or_make(1, f"experiment-read {n}", lambda: made.append("x") or "read")
    assert len(made) == 1000 and len(cache) == 4 + 8
    for n in range(4):
        assert cache.get_or_make(1, f"system-page {n}", lambda: "recomputed") == "page"
    # within a kind the bound holds, least recently used first
    assert cache.get_or_make(1, "experiment-read 999", lambda: "again") == "read"
    assert cache.get_or_make(1, "experiment-read 0", lambda: "again") == "again"


def test_computations_run_at_most_gate_slots_at_once_and_nest_without_deadlock() -> None:
    from server.memory import ComputeGate

    cache = GenerationCache(gate=ComputeGate(1))
    running: list[int] = []
    most = [0]
    lock = threading.Lock()

    def _read(n: int) -> str:
        with lock:
            running.append(n)
            most[0] = max(most[0], len(running))
        time.sleep(0.01)
        with lock:
            running.remove(n)
        return f"read {n}"

    def _page(n: int) -> str:
        # a page computes (or waits for) a read another thread may be computing
        return "page of " + cache.get_or_make(1, f"read {n % 3}", lambda: _read(n % 3))

    found: list[str] = []

    def _ask(n: int) -> None:
        if n % 2:
            found.append(cache.get_or_make(1, f"page {n}", lambda: _page(n)))
        else:
            found.append(cache.get_or_make(1, f"read {n % 3}", lambda: _read(n % 3)))

    threads = [threading.Thread(target=_ask, args=(n,)) for n in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads), "deadlock"
    assert len(found) == 24 and most[0] == 1
    assert sorted(set(found))[0] == "page of read 0"


def test_the_byte_budget_evicts_the_kind_holding_the_most_bytes() -> None:
    # one client asking for many large documents must not push out everyone's small pages
    cache = GenerationCache(entries=100, max_bytes=10_000)
    for n in range(5):
        cache.get_or_make(1, f"serve-home {n}", lambda: "x" * 100)
    for n in range(40):
        cache.get_or_make(1, f"serve-task {n}", lambda: b"y" * 1_000)
    kept = [n for n in range(40) if cache.get_or_make(1, f"serve-task {n}", lambda: b"") != b""]
    assert kept == list(range(31, 40))  # the newest nine large ones fit beside the small ones
    assert all(cache.get_or_make(1, f"serve-home {n}", lambda: "") == "x" * 100 for n in range(5))
    # a value larger than the budget alone is returned, not kept
    assert cache.get_or_make(1, "serve-dump huge", lambda: b"z" * 20_000) == b"z" * 20_000
    assert cache.get_or_make(1, "serve-dump huge", lambda: b"again") == b"again"


def test_a_stuck_computation_slows_others_but_never_stops_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from server.memory import ComputeGate

    gate = ComputeGate(1, wait=0.2)
    cache = GenerationCache(gate=gate)
    release = threading.Event()
    inside = threading.Event()

    def _slow() -> str:
        inside.set()
        release.wait(60)
        return "late"

    stuck = threading.Thread(target=cache.get_or_make, args=(1, "slow", _slow))
    stuck.start()
    assert inside.wait(30)  # the stuck computation holds the only slot
    with caplog.at_level(logging.WARNING, logger="server.memory"):
        assert cache.get_or_make(1, "other", lambda: "done") == "done"
    # Done while the stuck one still held the slot: it waited for it, then ran without one.
    assert stuck.is_alive()
    assert "no computation slot" in caplog.text
    release.set()
    stuck.join(30)


def test_settling_the_heap_keeps_start_up_objects_out_of_full_collections() -> None:
    # In a fresh interpreter: freezing is process-wide and would change this one's collector.
    script = """
import gc, json, time
from server.memory import GC_THRESHOLDS, settle_heap
built = [[n] for n in range(300_000)]  # what start-up builds (indexes)
before = len(gc.get_objects())
settle_heap()
after = len(gc.get_objects())
print(json.dumps({"before": before, "after": after, "frozen": gc.get_freeze_count(),
                  "threshold": list(gc.get_threshold()), "wanted": list(GC_THRESHOLDS),
                  "kept": len(built)}))
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    found = json.loads(out.stdout)
    assert found["kept"] == 300_000  # frozen objects stay usable
    assert found["before"] > 300_000
    # a full collection now visits what was made after start-up, not the start-up objects
    assert found["after"] < 1_000
    assert found["frozen"] >= 300_000
    assert found["threshold"] == found["wanted"]
    assert found["wanted"][0] > 700  # young collections less often than Python's default


def test_a_computation_waiting_for_another_process_gives_its_slot_away(
    caplog: pytest.LogCaptureFixture,
) -> None:
    gate = ComputeGate(1, wait=5.0)
    waiting = threading.Event()
    go_on = threading.Event()
    order: list[str] = []

    def _offloading() -> None:
        with gate.held():
            order.append("offload starts")
            gate.step_out()
            waiting.set()
            go_on.wait(30)  # the worker process reading
            order.append("offload ends")

    def _other() -> None:
        waiting.wait(30)
        with gate.held():  # would wait 5 s for the one slot if it were not given away
            order.append("other computes")
        go_on.set()

    threads = [threading.Thread(target=_offloading), threading.Thread(target=_other)]
    with caplog.at_level(logging.WARNING, logger="server.memory"):
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    assert order == ["offload starts", "other computes", "offload ends"]
    # The other computation had the slot (it did not wait out the gate and run without one).
    assert "no computation slot" not in caplog.text
    # the one slot is free again afterwards (not lost): another thread gets it, it does not
    # wait the gate out
    entered = threading.Event()

    def _again() -> None:
        with gate.held():
            entered.set()

    with caplog.at_level(logging.WARNING, logger="server.memory"):
        again = threading.Thread(target=_again)
        again.start()
        assert entered.wait(30)
        again.join(30)
    assert "no computation slot" not in caplog.text

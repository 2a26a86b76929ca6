"""The services' generation cache: one computation per entry, however many callers ask at once,
and only the newest generation kept."""

from __future__ import annotations

import threading
import time

import pytest

from server.services import GenerationCache


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

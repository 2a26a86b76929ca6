"""A small real disk for full-disk tests (a plugin, loaded by ``tests/conftest.py``): a tmpfs
mounted under the test's directory.

``small_disk_of(size)`` mounts one (``mount -t tmpfs``; needs root, which CI has; skipped
otherwise) and unmounts it on teardown; ``fill`` takes its free space; ``open_under`` lists
the files this process still holds open below a directory (a file held open keeps its space
after deletion).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


@pytest.fixture
def small_disk_of(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Return a function mounting a tmpfs of the given size ("16m") and returning its path."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a tmpfs needs root")
        where = tmp_path / f"small{len(mounted) or ''}"
        where.mkdir()
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True
        )
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(directory: Path, chunk: int = 1 << 20) -> Path:
    """Write ``directory/ballast`` in ``chunk``-byte pieces until the disk is full; return it."""
    ballast = directory / "ballast"
    with ballast.open("wb") as fh:
        try:
            while True:
                fh.write(b"\0" * chunk)
                fh.flush()
        except OSError:
            pass
    return ballast


def open_under(directory: Path) -> list[str]:
    """Return the paths below ``directory`` that this process holds open."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(directory)):
            found.append(target)
    return found

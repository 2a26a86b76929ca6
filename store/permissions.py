"""Files and directories that hold private data are readable by their owner only.

The data directory holds the store (private experiments, token hashes), uploaded answers files
and the SPARQL workers' snapshots; whatever the process umask says, these are created (or
tightened to) mode 0700 for directories and 0600 for files. This module only sets modes; it
never reads the files.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

PRIVATE_DIRECTORY = 0o700
PRIVATE_FILE = 0o600


def private_directory(path: Path) -> Path:
    """Create ``path`` and its missing parents owner-only (0700), tighten ``path``; return it.

    A directory owned by another user is left as it is (its owner decides).

    Raises:
        OSError: if the directory cannot be created.
    """
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for directory in reversed(missing):
        directory.mkdir(mode=PRIVATE_DIRECTORY, exist_ok=True)
    _tighten(path, PRIVATE_DIRECTORY)
    return path


def private_file(path: Path) -> Path:
    """Make an existing file owner-only (0600); return it."""
    _tighten(path, PRIVATE_FILE)
    return path


def _tighten(path: Path, mode: int) -> None:
    with contextlib.suppress(PermissionError):
        if path.stat().st_uid == os.getuid() and path.stat().st_mode & 0o777 != mode:
            path.chmod(mode)

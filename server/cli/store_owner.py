"""The ``server.json`` file a running ``qabench serve`` keeps in the data directory.

It names the process and URL holding the store, so a command that finds the store locked
(``StoreLockedError``) can tell the user which server to stop. It is written at start-up and
removed at shutdown; a file whose process is gone is ignored.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

FILE_NAME = "server.json"


@dataclass(frozen=True, slots=True)
class RunningServer:
    """A ``qabench serve`` process and the URL it listens on."""

    pid: int
    url: str


def server_file(data_dir: Path) -> Path:
    """Return the path of the server file in ``data_dir``."""
    return data_dir / FILE_NAME


def write_server_file(data_dir: Path, url: str) -> Path:
    """Record this process as the server of ``data_dir`` and return the file path."""
    path = server_file(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": os.getpid(), "url": url}), "utf-8")
    return path


def remove_server_file(data_dir: Path) -> None:
    """Remove the server file if this process wrote it."""
    path = server_file(data_dir)
    found = running_server(data_dir)
    if found is not None and found.pid == os.getpid():
        path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running_server(data_dir: Path) -> RunningServer | None:
    """Return the server recorded in ``data_dir`` if its process still runs."""
    try:
        raw = json.loads(server_file(data_dir).read_text("utf-8"))
        found = RunningServer(int(raw["pid"]), str(raw["url"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return found if _alive(found.pid) else None

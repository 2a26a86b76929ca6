"""``qabench serve`` as a real process: it answers, records itself in server.json, keeps the
store to itself, and cleans up on SIGINT and SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from server.cli.serve import base_warning
from server.cli.store_owner import running_server, server_file
from store.errors import StoreLockedError
from store.triplestore import TripleStore
from tests.plugins.server import REPO


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _interruptible() -> None:
    """Give the server Ctrl+C as a terminal would, even when this suite runs in a background job.

    A background job starts with SIGINT ignored, Python then installs no KeyboardInterrupt
    handler, and the server (rightly) keeps running when sent SIGINT.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_serve_runs_records_itself_and_cleans_up(tmp_path: Path, stop_signal: int) -> None:
    config = tmp_path / "config.toml"
    data = tmp_path / "data"
    config.write_text(
        f'[server]\nbase_iri = "http://serve.test"\ndemo = false\n\n[store]\ndata_dir = "{data}"\n'
    )
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "server", "--config", str(config), "serve", "--port", str(port)],
        cwd=REPO,
        stderr=subprocess.DEVNULL,
        preexec_fn=_interruptible,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None, "qabench serve exited early"
            assert time.monotonic() < deadline, "qabench serve did not answer"
            time.sleep(0.2)
        found = running_server(data)
        assert found is not None and found.pid == process.pid and found.url == url
        with pytest.raises(StoreLockedError):
            TripleStore.open(data / "store")
        answer = httpx.get(f"{url}/sparql", params={"query": "ASK {}"}, timeout=30)
        assert answer.json()["boolean"] is True
    finally:
        os.kill(process.pid, stop_signal)
        process.wait(30)
    assert process.returncode == 0
    assert not server_file(data).exists()
    TripleStore.open(data / "store").close()


@pytest.mark.parametrize(
    ("base", "host", "port", "warned"),
    [
        ("http://localhost:8080", "127.0.0.1", 8080, False),
        ("http://localhost:8080", "127.0.0.1", 9000, True),
        ("http://127.0.0.1:8080", "127.0.0.1", 8081, True),
        ("http://localhost", "127.0.0.1", 80, False),
        ("http://localhost:8080", "0.0.0.0", 8080, False),
        ("http://localhost:8080", "192.0.2.7", 8080, True),
        ("http://192.0.2.7:8080", "192.0.2.7", 8081, True),
        ("https://qa.example.org", "127.0.0.1", 9000, False),
    ],
)
def test_base_warning_when_the_base_names_another_place(
    base: str, host: str, port: int, warned: bool
) -> None:
    assert (base_warning(base, host, port) is not None) == warned


def test_serve_warns_at_start_when_the_port_disagrees_with_the_base(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    data = tmp_path / "data"
    config.write_text(
        '[server]\nbase_iri = "http://localhost:8080"\ndemo = false\n\n'
        f'[store]\ndata_dir = "{data}"\n'
    )
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "server", "--config", str(config), "serve", "--port", str(port)],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_interruptible,
    )
    try:
        assert process.stderr is not None
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            lines.append(line)
            if "qabench serving" in line or not line:
                break
        text = "".join(lines)
        assert f"listens on port {port}" in text and "server.base_iri" in text
    finally:
        os.kill(process.pid, signal.SIGINT)
        process.communicate(timeout=30)

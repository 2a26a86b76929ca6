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

from server.cli.store_owner import running_server, server_file
from store.errors import StoreLockedError
from store.triplestore import TripleStore
from tests.plugins.server import REPO


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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

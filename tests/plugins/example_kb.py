"""A real `oxigraph serve` on loopback holding the example knowledge base (server/examples)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "server" / "examples"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def example_endpoint(tmp_path: Path) -> Iterator[str]:
    """A real `oxigraph serve` on loopback holding the example knowledge base."""
    exe = str(Path(sys.executable).with_name("oxigraph"))
    location = tmp_path / "oxigraph"
    subprocess.run(
        [exe, "load", "--location", str(location), "--file", str(EXAMPLES / "example-kb.ttl")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    port = _free_port()
    proc = subprocess.Popen(
        [exe, "serve-read-only", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/query"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(url, params={"query": "ASK {}"}, timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline and proc.poll() is None, "oxigraph did not start"
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)

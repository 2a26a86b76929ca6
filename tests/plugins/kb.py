"""Knowledge-base fixtures: the shared KB files, and a real ``oxigraph serve`` loaded with them.

The server is the PyPI package ``oxigraph`` (its ``oxigraph`` executable sits next to the test
interpreter), started on a free loopback port and stopped on teardown. It is session-scoped
because it is read-only and costly to start.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from pyoxigraph import RdfFormat, parse, serialize

from tests import EXAMPLES, TEST_DATA

TEST_KB = TEST_DATA / "kb" / "sameas.ttl"
LABEL_FILES = (
    "kb/AKSW_NLIWOD/qa.annotation/src/main/resources/dbpedia_3Eng_class.ttl",
    "kb/AKSW_NLIWOD/qa.annotation/src/main/resources/dbpedia_3Eng_property.ttl",
    "kb/AKSW_NLIWOD/qa.surfaceforms/data/2016-10/en/class_surface_forms.ttl",
    "kb/AKSW_NLIWOD/qa.surfaceforms/data/2016-10/en/matoll_EN_surface_forms.ttl",
)
QTQ = "kb/dice-group_KBQA-PG/KBQA/datasets/qtq/gold/cleaned_for_training/qald9-test-golden.qtq.json"


def qtq_triples(path: Path, target: Path) -> int:
    """Write the N-Triples strings of a KBQA-PG question/triples/query file as one .nt file."""
    quads = []
    for question in json.loads(path.read_text())["questions"]:
        for line in question["triples"]:
            try:
                quads.extend(parse(line + " .", RdfFormat.N_TRIPLES))
            except SyntaxError:
                continue  # four lines of the file are not valid N-Triples
    with target.open("wb") as fh:
        serialize(quads, fh, RdfFormat.N_TRIPLES)
    return len(quads)


@pytest.fixture(scope="session")
def kb_files(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Return the KB files: shared label files (Turtle), QALD-9 test triples, our sameAs file."""
    nt = tmp_path_factory.mktemp("kb") / "qald9-test-triples.nt"
    assert qtq_triples(shared_data / QTQ, nt) == 650
    return [*(shared_data / f for f in LABEL_FILES), nt, TEST_KB]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving_oxigraph(files: list[Path], location: Path) -> Iterator[str]:
    """Load ``files`` into a new Oxigraph directory, serve it on loopback, yield the query URL."""
    exe = str(Path(sys.executable).with_name("oxigraph"))
    for f in files:
        subprocess.run(
            [exe, "load", "--location", str(location), "--file", str(f)],
            check=True,
            capture_output=True,
            timeout=120,
        )
    port = _free_port()
    server = subprocess.Popen(
        [exe, "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
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
            if time.monotonic() > deadline or server.poll() is not None:
                pytest.fail("oxigraph serve did not start")
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture(scope="session")
def oxigraph_endpoint(
    kb_files: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """Yield the SPARQL query URL of a real ``oxigraph serve`` holding ``kb_files``."""
    with serving_oxigraph(kb_files, tmp_path_factory.mktemp("oxigraph")) as url:
        yield url


@pytest.fixture
def example_endpoint(tmp_path: Path) -> Iterator[str]:
    """Yield the query URL of a real `oxigraph serve` holding the example knowledge base."""
    with serving_oxigraph([EXAMPLES / "example-kb.ttl"], tmp_path / "oxigraph") as url:
        yield url

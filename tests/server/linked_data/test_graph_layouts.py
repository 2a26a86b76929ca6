"""A graph's page layout is made in the server's background, never by a load (issue 41: made in
``kb load`` it was 6.4 s of a 20 s load at 2.6 M quads, 1.8 times ``oxigraph load``). A reader
who asks for a page before it is made waits for it within ``server.layout_wait_seconds``, then
gets 503 with ``Retry-After``; pages once it is made are the graph, cut as before."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from pyoxigraph import NamedNode

from evaluators.knowledge.bases import kb_graphs, load_kb
from server.cli.serve import lay_out_knowledge_bases
from server.linked_data.parts import graph_layout
from server.memory import GRAPH_VALUE_QUEUE, GraphValues, NotReadyError
from server.services import Services
from store import queries
from store.triplestore import layouts_path
from tests.plugins.server import BASE as SERVED
from tests.plugins.server import REPO, build_app, server_config
from vocab.standard import RDFS, VOID, XSD

BASE = "http://layouts.test"
ADMIN = "layouts-admin-token"
KB_LIST = queries.load("kb_list")


def _slot(graph: str, epoch: int = 0) -> tuple[str, str, int, int]:
    return ("graph-layout", graph, 0, epoch)


def test_a_value_is_made_once_for_all_who_wait_and_a_wait_that_runs_out_is_a_retry() -> None:
    values = GraphValues()
    gate, calls = threading.Event(), []

    def make() -> str:
        calls.append(threading.current_thread().name)
        gate.wait(30)
        return "layout"

    try:
        with pytest.raises(NotReadyError) as refused:
            values.get(_slot("g"), make, 0.05)  # still being made: the reader does not hang
        assert refused.value.retry_after > 0 and "being laid out" in str(refused.value)
        answers: list[str] = []
        readers = [
            threading.Thread(target=lambda: answers.append(values.get(_slot("g"), make, 30)))
            for _ in range(3)
        ]
        for reader in readers:
            reader.start()
        gate.set()
        for reader in readers:
            reader.join(30)
        assert answers == ["layout"] * 3
        assert calls == ["qabench-layouts"]  # once, in the background, for all four readers
        assert values.get(_slot("g"), make, 0) == "layout"  # kept: no wait at all now
        assert values.get(_slot("g", 1), lambda: "again", 30) == "again"  # a write: made again
    finally:
        gate.set()
        values.close()


def test_a_failure_reaches_its_readers_and_the_next_reader_tries_again() -> None:
    values = GraphValues()
    attempts: list[int] = []

    def make() -> int:
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("the engine could not count")
        return len(attempts)

    try:
        with pytest.raises(OSError, match="could not count"):
            values.get(_slot("g"), make, 30)
        assert values.get(_slot("g"), make, 30) == 2
    finally:
        values.close()


def test_values_waiting_to_be_made_are_bounded() -> None:
    values = GraphValues()
    gate = threading.Event()
    try:
        for n in range(GRAPH_VALUE_QUEUE):
            with pytest.raises(NotReadyError):
                values.get(_slot(f"g{n}"), lambda: gate.wait(30), 0)
        with pytest.raises(NotReadyError, match="other graphs"):
            values.get(_slot("one more"), lambda: True, 30)  # refused at once, not after 30 s
    finally:
        gate.set()
        values.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _halves(folder: Path, subjects: int) -> list[Path]:
    lines = [
        f'<http://e.test/s{n // 7}> <http://e.test/p{n % 7}> "{n}" .\n' for n in range(subjects * 7)
    ]
    cut = len(lines) // 2
    files = [folder / "part1.nt", folder / "part2.nt"]
    files[0].write_text("".join(lines[:cut]), encoding="utf-8")
    files[1].write_text("".join(lines[cut:]), encoding="utf-8")
    return files


def _page(client: httpx.Client, number: int) -> httpx.Response:
    path = "/kb/big" + (f"?page={number}" if number > 1 else "")
    return client.get(path, headers={"Accept": "application/n-triples"})


def _kb_lines(reply: httpx.Response) -> list[str]:
    """Return the page's triples of the knowledge base (a page also says where it stands)."""
    return [line for line in reply.text.splitlines() if line.startswith("<http://e.test/")]


def _ready_page(client: httpx.Client, number: int) -> tuple[httpx.Response, int]:
    """Return page ``number`` once it is answered, and how many 503s came before."""
    refusals, deadline = 0, time.monotonic() + 60
    while (reply := _page(client, number)).status_code == 503:
        assert int(reply.headers["Retry-After"]) > 0
        refusals += 1
        assert time.monotonic() < deadline, "the layout was never made"
        time.sleep(0.2)
    return reply, refusals


def test_the_start_states_a_knowledge_bases_triples_once_its_layout_has_counted_them(
    tmp_path: Path,
) -> None:
    # Issue 41: kb load counted the graph with the engine (up to 1.9 s of a 16 s load at 2.6 M
    # triples); the layout the server makes after its start counts every subject's triples,
    # and the knowledge base's description states a number only from then on.
    app = build_app(server_config(tmp_path / "served"), [])
    svc: Services = app.extensions["services"]
    client = app.test_client()
    try:
        info = load_kb(svc.store, SERVED, _halves(tmp_path, 300), "small")  # 2,100 triples
        # another one nobody reads before the start's pass: counted in the background
        (tmp_path / "other").mkdir()
        other = load_kb(svc.store, SERVED, _halves(tmp_path / "other", 2), "other")
        svc.notify_write()
        stated = f"<{info.iri}> <{VOID.triples.value}>"
        before = client.get("/kb/small", headers={"Accept": "application/n-triples"})
        assert before.status_code == 200 and stated not in before.text
        assert f"<{info.iri}> <{RDFS.label.value}>" in before.text  # the entry is there
        lay_out_knowledge_bases(svc)
        layout = graph_layout(svc, NamedNode(info.graph), wait=30)
        assert layout.quads == 2_100
        after = client.get("/kb/small", headers={"Accept": "application/n-triples"})
        assert f'{stated} "2100"^^<{XSD.integer.value}> .' in after.text
        assert graph_layout(svc, NamedNode(other.graph), wait=30).quads == 14
        listed = {row["name"].value: row["triples"].value for row in svc.store.select(KB_LIST)}
        assert listed == {"small": "2100", "other": "14"}
        assert kb_graphs(svc.store, SERVED, uncounted=True) == []
        # the next start finds it stated: no write at all
        generation = svc.generation
        lay_out_knowledge_bases(svc)
        assert graph_layout(svc, NamedNode(info.graph), wait=30) is layout
        assert svc.generation == generation
    finally:
        svc.close()


@pytest.mark.slow
def test_a_served_knowledge_base_is_laid_out_after_the_start_and_pages_wait_for_it(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    config = tmp_path / "config.toml"
    config.write_text(
        f'[server]\nbase_iri = "{BASE}"\ndemo = false\nlayout_wait_seconds = 0\n\n'
        f'[store]\ndata_dir = "{data}"\n'
    )
    env = {**os.environ, "QABENCH_ADMIN_TOKEN": ADMIN, "PYTHONPATH": str(REPO)}
    server = [sys.executable, "-m", "server", "--config", str(config)]
    # 105,000 triples in two files: pages of 50,000, 50,000 and 5,000
    files = [str(f) for f in _halves(tmp_path, 15_000)]
    loaded = subprocess.run(
        [*server, "kb", "load", *files, "--name", "big"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    assert "triples not counted yet" in loaded.stdout  # the server counts them
    layouts = layouts_path(data / "store")
    assert not list(layouts.glob("*.layout"))  # the load did the engine's work only

    port = _free_port()
    process = subprocess.Popen(
        [*server, "serve", "--port", str(port)], cwd=REPO, env=env, stderr=subprocess.DEVNULL
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            deadline = time.monotonic() + 60
            # made after the start with nobody asking for a page
            while not list(layouts.glob("*.layout")):
                assert process.poll() is None, "qabench serve exited early"
                assert time.monotonic() < deadline, "no layout after the start"
                time.sleep(0.1)
            first, _ = _ready_page(client, 1)
            # the layout counted the graph: its description says so, to SPARQL clients too
            assert f'<{VOID.triples.value}> "105000"' in first.text
            counted = {"query": f"SELECT ?n WHERE {{ <{BASE}/kb/big> <{VOID.triples.value}> ?n }}"}
            while not (rows := client.get("/sparql", params=counted).json()["results"]["bindings"]):
                assert time.monotonic() < deadline, "the count never reached the endpoint"
                time.sleep(0.1)
            assert [row["n"]["value"] for row in rows] == ["105000"]
            pages = [first, _page(client, 2), _page(client, 3)]
            assert [p.status_code for p in pages] == [200, 200, 200]
            lines = [_kb_lines(p) for p in pages]
            assert [len(n) for n in lines] == [50_000, 50_000, 5_000]
            assert len({line for page in lines for line in page}) == 105_000
            assert '</kb/big?page=3>; rel="last"' in first.headers["Link"]

            # a write to the graph: the layout is made again, and readers are told to retry
            update = (
                'INSERT { GRAPH ?g { <http://e.test/s0> <http://e.test/p9> "new" } } WHERE { '
                f"GRAPH ?c {{ <{BASE}/kb/big> <https://w3id.org/qabench/vocab#graph> ?g }} }}"
            )
            written = client.post(
                "/update",
                data={"update": update},
                headers={"Authorization": f"Bearer {ADMIN}"},
            )
            assert written.status_code in (200, 204), written.text
            refused = _page(client, 3)
            assert refused.status_code == 503, refused.status_code
            assert int(refused.headers["Retry-After"]) > 0
            assert refused.headers["Content-Type"].startswith("application/problem+json")
            assert "no-store" in refused.headers.get("Cache-Control", "")
            problem = refused.json()
            assert problem["status"] == 503 and "being laid out" in problem["detail"]
            again, _ = _ready_page(client, 3)
            assert len(_kb_lines(again)) == 5_001
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    assert process.returncode == 0

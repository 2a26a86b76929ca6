"""A knowledge-base load that fails at any point leaves the store (and what readers see) as it was.

Each case starts from a store holding a loaded KB, makes a second load fail — a syntax error half
way through, ``kill -9`` while the bulk loader is reading (the file is a FIFO, so the kill lands
mid-load every time), a disk that fills up (a file-size limit on the loading process) — and then
checks that the catalog still names the first load, that the graphs a reader can see hold what
they held, and that the next start removes the failed load's graph.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evaluators.errors import KnowledgeBaseError
from evaluators.knowledge.bases import kb_graph_of, load_kb
from store.triplestore import TripleStore
from store.visibility import orphan_graphs, visible_graphs
from tests import REPO

BASE = "http://faults.test"


def _triples(n: int, start: int = 0) -> str:
    return "".join(
        f"<http://x.test/s{i}> <http://x.test/p> <http://x.test/o{i}> .\n"
        for i in range(start, start + n)
    )


def _visible(store: TripleStore) -> set[str]:
    return {str(q) for g in visible_graphs(store, BASE) for q in store.quads(graph=g)}


@pytest.fixture
def loaded(tmp_path: Path) -> Path:
    """A store directory holding knowledge base ``kb`` (100 triples)."""
    first = tmp_path / "first.nt"
    first.write_text(_triples(100), "utf-8")
    store = TripleStore.open(tmp_path / "store")
    load_kb(store, BASE, first, "kb")
    store.close()
    return tmp_path / "store"


def _state(path: Path) -> tuple[set[str], str | None]:
    store = TripleStore.open(path)
    try:
        graph = kb_graph_of(store, BASE, "kb")
        return _visible(store), graph.value if graph else None
    finally:
        store.close()


def _after_restart(path: Path) -> list[str]:
    store = TripleStore.open(path)
    try:
        orphans = orphan_graphs(store, BASE)
        store.drop_graphs(orphans)
        assert orphan_graphs(store, BASE) == []
        return [g.value for g in orphans]
    finally:
        store.close()


def test_a_syntax_error_half_way_changes_nothing(loaded: Path, tmp_path: Path) -> None:
    before = _state(loaded)
    bad = tmp_path / "bad.nt"
    bad.write_text(_triples(5000, 1000) + "<http://x.test/broken> .\n" + _triples(10), "utf-8")
    store = TripleStore.open(loaded)
    with pytest.raises(KnowledgeBaseError, match=r"bad\.nt"):
        load_kb(store, BASE, bad, "kb")
    assert orphan_graphs(store, BASE) == []  # the partial graph was dropped at once
    store.close()
    assert _state(loaded) == before


_LOADER = """
import sys
from pathlib import Path
from evaluators.knowledge.bases import load_kb
from store.triplestore import TripleStore
store = TripleStore.open(Path(sys.argv[1]))
print("open", flush=True)
load_kb(store, sys.argv[2], Path(sys.argv[3]), "kb")
print("loaded", flush=True)
"""


def test_kill_9_during_the_bulk_load_changes_nothing_visible(loaded: Path, tmp_path: Path) -> None:
    before = _state(loaded)
    fifo = tmp_path / "stream.nt"
    os.mkfifo(fifo)
    child = subprocess.Popen(
        [sys.executable, "-c", _LOADER, str(loaded), BASE, str(fifo)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "open"
    writer_done = threading.Event()

    def _feed() -> None:
        try:
            with fifo.open("w", encoding="utf-8") as fh:
                fh.write(_triples(20000, 1000))  # half a file; the loader waits for the rest
                fh.flush()
                time.sleep(1.0)
                child.send_signal(signal.SIGKILL)
                child.wait(30)
        except BrokenPipeError:
            pass
        writer_done.set()

    feeder = threading.Thread(target=_feed)
    feeder.start()
    feeder.join(60)
    child.stdout.close()
    assert writer_done.is_set() and child.returncode == -signal.SIGKILL
    assert _state(loaded) == before
    dropped = _after_restart(loaded)
    assert len(dropped) <= 1 and all("/graph/kb/kb/" in g for g in dropped)
    assert _state(loaded) == before


_FULL_DISK = """
import resource, signal, sys
from pathlib import Path
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
from evaluators.errors import KnowledgeBaseError
from evaluators.knowledge.bases import load_kb
from store.triplestore import TripleStore
store = TripleStore.open(Path(sys.argv[1]))
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[4]), int(sys.argv[4])))
try:
    load_kb(store, sys.argv[2], Path(sys.argv[3]), "kb")
except KnowledgeBaseError as exc:
    print("refused:", exc, flush=True)
    sys.exit(3)
print("loaded", flush=True)
"""


def test_a_full_disk_during_the_load_changes_nothing_visible(loaded: Path, tmp_path: Path) -> None:
    before = _state(loaded)
    big = tmp_path / "big.nt"
    big.write_text(_triples(200_000, 1000), "utf-8")
    # Files may not grow past 1 MB: the loader's table files hit the limit long before the end.
    done = subprocess.run(
        [sys.executable, "-c", _FULL_DISK, str(loaded), BASE, str(big), str(1 << 20)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0, done.stdout + done.stderr
    assert _state(loaded) == before
    _after_restart(loaded)
    assert _state(loaded) == before
    assert resource.getrlimit(resource.RLIMIT_FSIZE)[0] == resource.RLIM_INFINITY


def test_the_next_start_removes_what_a_killed_load_left(loaded: Path, tmp_path: Path) -> None:
    # The state a load killed between its bulk write and its catalog entry leaves behind:
    # a knowledge-base graph and a dataset-version graph the catalog does not name.
    from pyoxigraph import RdfFormat

    from server.app import create_app
    from server.config import config_from_dict
    from store import graphs

    before = _state(loaded)
    left = tmp_path / "left.nt"
    left.write_text(_triples(300, 5000), "utf-8")
    store = TripleStore.open(loaded)
    kb_orphan = graphs.kb_graph(BASE, "kb", "killed")
    version_orphan = graphs.dataset_graph(BASE, "never", 1)
    store.bulk_load(left, RdfFormat.N_TRIPLES, graph=kb_orphan)
    store.bulk_load(left, RdfFormat.N_TRIPLES, graph=version_orphan)
    assert _visible(store) == before[0]  # invisible already: the catalog does not name them
    store.close()
    config = config_from_dict(
        {
            "server": {"base_iri": BASE, "demo": False},
            "store": {"path": str(loaded), "data_dir": str(tmp_path / "data")},
        },
        source=REPO / "config.toml",
    )
    app = create_app(config)
    svc = app.extensions["services"]
    try:
        assert not svc.store.has_graph(kb_orphan) and not svc.store.has_graph(version_orphan)
        assert svc.view().quads == len(before[0])
    finally:
        svc.close()
    assert _state(loaded) == before

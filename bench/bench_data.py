"""The data and servers of ``bench/server.py``: a KB plus experiments, qabench and Oxigraph.

``prepare(directory, kb, experiments)`` writes (once; reused while the sizes match) a qabench
data directory and an Oxigraph directory holding the same quads: the catalog (systems, dataset
versions, and the KB named with ``qab:graph`` so that its graph is public), ``experiments``
experiment graphs with ``tasks`` tasks of twelve Data Cube observations each, and a DBpedia-like KB
of ``kb`` triples (``bench/scale.py``'s generator) in ``<BASE>/graph/kb/dbpedia``.
``qabench(directory, settings)`` and ``oxigraph(directory)`` run the two servers on loopback
for the length of a ``with`` block.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import random
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
from pyoxigraph import Literal, NamedNode, Quad, RdfFormat, serialize

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from scale import write_kb  # noqa: E402

from store import graphs  # noqa: E402
from vocab import iris  # noqa: E402
from vocab.project import QAB  # noqa: E402
from vocab.qb import QB  # noqa: E402
from vocab.standard import DCTERMS, GERBIL, PROV, RDF, RDFS, XSD  # noqa: E402

BASE = "http://bench.qabench.test"
KB_GRAPH = f"{BASE}/graph/kb/dbpedia"
MEASURES = [
    GERBIL.macroF1,
    GERBIL.microF1,
    GERBIL.macroPrecision,
    GERBIL.macroRecall,
    GERBIL.microPrecision,
    GERBIL.microRecall,
]
SYSTEMS = 40
DATASETS = 25
# Triples per KB entity in bench/scale.py's generator.
TRIPLES_PER_ENTITY = 5


@dataclass(frozen=True)
class Sizes:
    """What the data holds: experiments, KB triples and KB entities."""

    experiments: int
    tasks: int
    kb: int

    @property
    def entities(self) -> int:
        """Return the number of KB entities (Entity_0 ... Entity_{n-1})."""
        return max(1, self.kb // TRIPLES_PER_ENTITY)


def experiment_id(n: int) -> str:
    """Return the id of the ``n``-th generated experiment."""
    return f"2024{n:08d}"


def _catalog(rng: random.Random) -> tuple[list[Quad], list[NamedNode], list[NamedNode]]:
    catalog = graphs.catalog_graph(BASE)
    quads: list[Quad] = []
    systems = [iris.system_iri(BASE, f"system-{s}") for s in range(SYSTEMS)]
    versions = [iris.dataset_version_iri(BASE, f"dataset-{d}", 1) for d in range(DATASETS)]
    for s, system in enumerate(systems):
        quads += [
            Quad(system, RDF.type, QAB.System, catalog),
            Quad(system, RDFS.label, Literal(f"System {s}"), catalog),
        ]
    for d, version in enumerate(versions):
        quads += [
            Quad(version, RDF.type, QAB.DatasetVersion, catalog),
            Quad(version, DCTERMS.title, Literal(f"Dataset {d}"), catalog),
        ]
    kb = NamedNode(f"{BASE}/kb/dbpedia")
    quads += [
        Quad(kb, RDFS.label, Literal("DBpedia-like bench KB"), catalog),
        Quad(kb, QAB.graph, NamedNode(KB_GRAPH), catalog),
    ]
    return quads, systems, versions


def _experiment(
    n: int, tasks: int, rng: random.Random, systems: list[NamedNode], versions: list[NamedNode]
) -> list[Quad]:
    eid = experiment_id(n)
    g = graphs.experiment_graph(BASE, eid)
    exp = iris.experiment_iri(BASE, eid)
    when = Literal("2024-05-01T10:00:00Z", datatype=XSD.dateTime)
    quads = [
        Quad(exp, RDF.type, QAB.Experiment, g),
        Quad(exp, DCTERMS.created, when, g),
    ]
    for t in range(1, tasks + 1):
        task = iris.task_iri(BASE, eid, t)
        quads += [
            Quad(exp, QAB.task, task, g),
            Quad(task, RDF.type, QAB.Task, g),
            Quad(task, QAB.system, rng.choice(systems), g),
            Quad(task, QAB.datasetVersion, rng.choice(versions), g),
            Quad(task, DCTERMS.language, Literal("en"), g),
            Quad(task, QAB.state, QAB.Finished, g),
            Quad(task, PROV.startedAtTime, when, g),
            Quad(task, PROV.endedAtTime, when, g),
        ]
        quads += _observations(exp, task, t, g, rng)
    return quads


def _observations(
    exp: NamedNode, task: NamedNode, t: int, g: NamedNode, rng: random.Random
) -> list[Quad]:
    quads = []
    when = Literal("2024-05-01T10:05:00Z", datatype=XSD.dateTime)
    for kind in (GERBIL.QA, GERBIL.C2KB):
        for measure in MEASURES:
            name = (str(t), kind.value.rsplit("#", 1)[-1], measure.value.rsplit("#", 1)[-1])
            obs = iris.sub_iri(exp, "observation", *name)
            quads += [
                Quad(obs, RDF.type, QB.Observation, g),
                Quad(obs, QB.dataSet, iris.sub_iri(exp, "cube"), g),
                Quad(obs, QAB.ofTask, task, g),
                Quad(obs, QAB.experimentType, kind, g),
                Quad(obs, QB.measureType, measure, g),
                Quad(obs, measure, Literal(f"{rng.random():.4f}", datatype=XSD.double), g),
                Quad(obs, PROV.generatedAtTime, when, g),
                Quad(obs, RDFS.label, Literal(" ".join(name)), g),
            ]
    return quads


def generate(experiments: int, tasks: int, seed: int = 7) -> list[Quad]:
    """Return the catalog and ``experiments`` experiment graphs of ``tasks`` tasks each."""
    rng = random.Random(seed)
    quads, systems, versions = _catalog(rng)
    for n in range(experiments):
        quads += _experiment(n, tasks, rng, systems, versions)
    return quads


def prepare(directory: Path, kb: int, experiments: int, tasks: int) -> Sizes:
    """Write both stores into ``directory`` unless it already holds these sizes."""
    sizes = Sizes(experiments, tasks, kb)
    marker = directory / "sizes.json"
    if marker.exists() and json.loads(marker.read_text()) == dataclasses.asdict(sizes):
        print(f"reusing the data in {directory}")
        return sizes
    for old in ("qabench", "oxigraph", "sizes.json"):
        shutil.rmtree(directory / old, ignore_errors=True)
    directory.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    data, kb_file = directory / "data.nq", directory / "kb.nt"
    with data.open("wb") as fh:
        serialize(generate(experiments, tasks), fh, RdfFormat.N_QUADS)
    write_kb(kb_file, kb)
    print(
        f"generated {experiments:,} experiments of {tasks} tasks and {kb:,} KB triples "
        f"in {time.monotonic() - started:.0f} s"
    )
    started = time.monotonic()
    from store.triplestore import TripleStore

    store = TripleStore.open(directory / "qabench" / "store")
    store.raw.bulk_load(path=str(data), format=RdfFormat.N_QUADS)
    store.raw.bulk_load(path=str(kb_file), format=RdfFormat.N_TRIPLES, to_graph=NamedNode(KB_GRAPH))
    store.close()
    location = str(directory / "oxigraph")
    _run([oxigraph_binary(), "load", "--location", location, "--file", str(data)])
    _run(
        [
            oxigraph_binary(),
            "load",
            "--location",
            location,
            "--file",
            str(kb_file),
            "--graph",
            KB_GRAPH,
        ]
    )
    data.unlink()
    kb_file.unlink()
    marker.write_text(json.dumps(dataclasses.asdict(sizes)))
    print(f"loaded both stores in {time.monotonic() - started:.0f} s")
    return sizes


def _run(command: list[str]) -> None:
    subprocess.run(command, check=True, capture_output=True)


def oxigraph_binary() -> str:
    """Return the ``oxigraph`` command (the PyPI package ``oxigraph`` ships it)."""
    return shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")


def free_port() -> int:
    """Return a free TCP port on loopback."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_http(url: str, timeout: float = 600) -> None:
    """Wait until ``url`` answers below 500."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=5).status_code < 500:
                return
        time.sleep(0.3)
    raise RuntimeError(f"{url} did not come up")


def _settings_toml(settings: dict[str, object]) -> str:
    # Settings this tree does not know are left out, so the bench also measures older trees.
    from server.config import ServerConfig

    known = {f.name for f in dataclasses.fields(ServerConfig)}
    lines = []
    for key, value in settings.items():
        if key in known:
            lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines)


@dataclass
class Running:
    """A server started by the bench: its URL and process id."""

    url: str
    pid: int


@contextlib.contextmanager
def qabench(directory: Path, settings: dict[str, object]) -> Iterator[Running]:
    """Run ``qabench serve`` over the prepared data with ``settings`` (``[server]`` keys)."""
    port = free_port()
    config = directory / "config.toml"
    config.write_text(
        f'[server]\nbase_iri = "{BASE}"\ndemo = false\n{_settings_toml(settings)}\n'
        f'\n[store]\ndata_dir = "{directory / "qabench"}"\n'
    )
    log = (directory / "qabench.log").open("wb")
    command = [
        sys.executable,
        "-m",
        "server",
        "--config",
        str(config),
        "serve",
        "--port",
        str(port),
    ]
    process = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{url}/")
        started = time.monotonic()
        while httpx.post(f"{url}/sparql", data={"query": "ASK {}"}, timeout=300).status_code != 200:
            time.sleep(0.5)
        print(f"qabench ready (query workers {time.monotonic() - started:.1f} s after the pages)")
        yield Running(url, process.pid)
    finally:
        _stop(process)
        log.close()


@contextlib.contextmanager
def oxigraph(directory: Path) -> Iterator[Running]:
    """Run ``oxigraph serve --union-default-graph`` over the prepared Oxigraph directory."""
    port = free_port()
    process = subprocess.Popen(
        [
            oxigraph_binary(),
            "serve",
            "--location",
            str(directory / "oxigraph"),
            "--bind",
            f"127.0.0.1:{port}",
            "--union-default-graph",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{url}/query")
        yield Running(url, process.pid)
    finally:
        _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)

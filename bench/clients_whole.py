"""Benchmark: the linked-data clients of the ecosystem read a large experiment's documents whole.

Builds the largest experiment the benchmarks make (``bench/experiment_page.py``'s ten
answers-file systems x 408 questions: 60 tasks with every sub-experiment scored), serves it over
real HTTP on loopback with ``server.base_iri`` where it listens, and follows the experiment's
document and each task's document from page to page (``Link: rel="next"``). Every page is read
by each client, unchanged, and its triple count compared with the page's N-Triples form:

- rdflib (``Graph.parse`` of the Turtle) and pyld (``jsonld.to_rdf`` of the JSON-LD);
- rdflib.js and jsonld.js (``tests/clients/read.js`` with the machine's node);
- Comunica with the document as its source (``COUNT(*)``);
- ``rapper`` (Debian's raptor2-utils) and Jena's ``arq.sparql --data=URL`` (Debian's
  libapache-jena-java), each dereferencing the page itself.

Each page is also read in every RDF form the server offers (Turtle, JSON-LD, N-Triples,
RDF/XML, N-Quads, TriG) with pyoxigraph's parsers, the triples of each compared with the
N-Triples form ("forms").

It prints, per client, the pages read and how many were read whole, and the largest page.
The clients come from ``./dev test`` (npm ci in tests/clients, the Debian packages).

    .venv/bin/python bench/clients_whole.py [--systems 10] [--questions 408] [--tasks 6]

With ``--wrong-iris N`` the experiment is issue 41's attack instead: one answers-file system
that answers each of ``--questions`` questions with N wrong IRIs (the issue's task held
980,419 quads and every RDF form of it was a 500; 150 questions x 3,000 make 971,646):

    .venv/bin/python bench/clients_whole.py --wrong-iris 3000 --questions 150
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from experiment_page import _question, build_wide_experiment  # noqa: E402
from pyld import jsonld  # noqa: E402
from pyoxigraph import RdfFormat, parse  # noqa: E402
from rdflib import Graph  # noqa: E402
from waitress import wasyncore  # noqa: E402

from evaluators.datasets import library  # noqa: E402
from evaluators.experiments.runner import ExperimentRequest, SystemRequest  # noqa: E402
from evaluators.systems.protocol import SystemKind  # noqa: E402
from server import httpd  # noqa: E402
from server.app import create_app  # noqa: E402
from server.config import config_from_dict  # noqa: E402
from server.services import RUNNER_KEY  # noqa: E402
from server.web.representations import DOCUMENT_FORMATS  # noqa: E402
from tests.clients.jena import jena_command  # noqa: E402

CLIENTS = REPO / "tests" / "clients"
NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


def _run(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-500:])
    return done.stdout


def build_attacked_experiment(
    folder: Path, base: str, questions: int, wrong: int
) -> tuple[Any, str, int]:
    """Create an app over a fresh store in ``folder`` holding one published experiment: one
    answers-file system answering each of ``questions`` questions with ``wrong`` wrong IRIs
    (issue 41's attack); return the app, the experiment id and its number of tasks."""
    config = config_from_dict(
        {
            "server": {"base_iri": base, "demo": False, "query_workers": 1},
            "store": {"data_dir": str(folder / "data")},
        },
        source=REPO / "config.toml",
    )
    app = create_app(config)
    svc = app.extensions["services"]
    dataset = folder / "wide.json"
    gold = [_question(n, n) for n in range(1, questions + 1)]
    dataset.write_text(json.dumps({"dataset": {"id": "wide"}, "questions": gold}), "utf-8")
    mine = []
    for n in range(1, questions + 1):
        question = _question(n, n)
        bindings = [
            {"x": {"type": "uri", "value": f"http://dbpedia.org/resource/Wrong_{n}_{k}"}}
            for k in range(wrong)
        ]
        question["answers"] = [{"head": {"vars": ["x"]}, "results": {"bindings": bindings}}]
        mine.append(question)
    answers = folder / "attacker.json"
    answers.write_text(json.dumps({"questions": mine}), "utf-8")
    library.load_dataset(svc.store, base, dataset, name="wide")
    svc.notify_write()
    runner = app.extensions[RUNNER_KEY]
    request = SystemRequest("attacker", SystemKind.ANSWER_FILE, answers_path=answers)
    run = runner.submit(ExperimentRequest(systems=(request,), datasets=("wide",), publish=True))
    runner.run(run.id)
    return app, run.id, len(runner.summary(run.id).tasks)


def every_form(url: str) -> int:
    """Read the page at ``url`` in every RDF form the server offers (pyoxigraph's parsers);
    return its triples when every form holds the same ones (else raise, naming the form)."""
    found: dict[str, int] = {}
    for rep in DOCUMENT_FORMATS:
        if rep.rdf_format is None:
            continue
        reply = httpx.get(url, headers={"Accept": rep.media_type}, timeout=300)
        reply.raise_for_status()
        triples = {
            (q.subject, q.predicate, q.object)
            for q in parse(reply.content, rep.rdf_format, base_iri=url)
        }
        found[rep.extension] = len(triples)
    if len(set(found.values())) != 1:
        raise RuntimeError(f"the forms disagree: {found}")
    return found[RdfFormat.N_TRIPLES.file_extension]


def readers(work: Path) -> dict[str, Callable[[str], int]]:
    """Every client that is installed: a function from a page URL to the triples it read."""

    def node_read(which: str) -> Callable[[str], int]:
        def read(url: str) -> int:
            found = json.loads(_run(["node", str(CLIENTS / "read.js"), url]))[which]
            if not isinstance(found, int):
                raise RuntimeError(str(found))
            return found

        return read

    def comunica(url: str) -> int:
        program = CLIENTS / "node_modules" / ".bin" / "comunica-sparql"
        rows = json.loads(
            _run(
                [
                    "node",
                    str(program),
                    url,
                    "SELECT (COUNT(*) AS ?n) WHERE { SELECT DISTINCT ?s ?p ?o WHERE { ?s ?p ?o } }",
                    "-t",
                    "application/json",
                ]
            )
        )
        return int(rows[0]["n"].split("^^")[0].strip('"'))

    def pyld_read(url: str) -> int:
        doc = httpx.get(url, headers={"Accept": "application/ld+json"}, timeout=120).json()
        nquads = jsonld.to_rdf(doc, {"format": "application/n-quads", "base": url})
        return len([line for line in nquads.splitlines() if line.strip()])

    found: dict[str, Callable[[str], int]] = {
        "forms": every_form,
        "rdflib": lambda url: len(Graph().parse(url, format="turtle")),
        "pyld": pyld_read,
    }
    if (CLIENTS / "node_modules" / "rdflib").exists():
        found["rdflib.js"] = node_read("rdflib")
        found["jsonld.js"] = node_read("jsonld")
        found["comunica"] = comunica
    if shutil.which("rapper"):
        found["rapper"] = lambda url: len(
            _run(["rapper", "-q", "-i", "turtle", "-o", "ntriples", url]).splitlines()
        )
    java = jena_command(work / "jena")
    if java is not None:

        def jena(url: str) -> int:
            # ARQ loads the URL over HTTP with RIOT's content negotiation
            query = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
            out = _run([*java, "arq.sparql", f"--data={url}", "--results=json", query])
            return int(json.loads(out)["results"]["bindings"][0]["n"]["value"])

        found["jena arq"] = jena
    return found


def pages(url: str) -> list[tuple[str, set[str]]]:
    """Return every page of a document (following ``Link: rel=next``) with its triples."""
    out = []
    while url:
        reply = httpx.get(url, headers={"Accept": "application/n-triples"}, timeout=120)
        reply.raise_for_status()
        out.append((url, {line for line in reply.text.splitlines() if line.strip()}))
        found = NEXT.search(reply.headers.get("Link", ""))
        url = str(httpx.URL(url).join(found.group(1))) if found else ""
    return out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def check(read: Callable[[str], int], cases: list[tuple[str, int]]) -> tuple[int, list[str]]:
    """Read every (url, expected triples) case; return how many were whole and the problems."""
    whole, problems = 0, []
    for url, expected in cases:
        try:
            got = read(url)
        except Exception as error:
            problems.append(f"{url}: {str(error).strip()[:160]}")
            continue
        if got == expected:
            whole += 1
        else:
            problems.append(f"{url}: {got} of {expected} triples")
    return whole, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--questions", type=int, default=408)
    parser.add_argument("--tasks", type=int, default=0, help="read only the first N tasks")
    parser.add_argument(
        "--wrong-iris", type=int, default=0, help="one system answering N wrong IRIs a question"
    )
    parser.add_argument("--clients", default="", help="only these readers (comma-separated)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        started = time.perf_counter()
        if args.wrong_iris:
            app, experiment, tasks = build_attacked_experiment(
                folder, base, args.questions, args.wrong_iris
            )
        else:
            app, experiment, tasks = build_wide_experiment(
                folder, base, args.systems, args.questions
            )
        svc = app.extensions["services"]  # type: ignore[attr-defined]
        settings = svc.config.server
        # as `qabench serve` does: the query workers write anonymous readers' documents
        svc.pool.start()
        svc.pool.wait_ready(60)
        servers, events, adjustments = httpd.create_servers(app, settings, "127.0.0.1", port)
        threading.Thread(target=httpd.run, args=(servers, events, adjustments), daemon=True).start()
        shape = (
            f"one system answering {args.wrong_iris:,} wrong IRIs to each of {args.questions}"
            if args.wrong_iris
            else f"{args.systems} systems x {args.questions}"
        )
        graph = f"{base}/graph/experiment/{experiment}"
        quads = svc.store.query(
            f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}"
        )
        print(f"experiment of {shape} questions ({tasks} tasks, "
              f"{int(next(iter(quads))['n'].value):,} quads) built in "
              f"{time.perf_counter() - started:.0f} s (load {os.getloadavg()})")  # fmt: skip
        chosen = range(1, (args.tasks or tasks) + 1)
        docs = [
            f"{base}/experiment/{experiment}",
            *(f"{base}/task/{experiment}/{n}" for n in chosen),
        ]
        found = {doc: pages(doc) for doc in docs}
        every = [(url, len(triples)) for doc in docs for url, triples in found[doc]]
        # Comunica follows hydra:next itself: from a first page it reads the whole document.
        whole_docs = [(doc, len(set().union(*(t for _u, t in found[doc])))) for doc in docs]
        largest = max(every, key=lambda p: p[1])
        print(f"{len(docs)} documents, {len(every)} pages, {sum(n for _u, n in every):,} "
              f"triples; largest page {largest[1]:,} triples "
              f"({largest[0].removeprefix(base)})")  # fmt: skip
        failures = 0
        chosen_readers = set(filter(None, args.clients.split(",")))
        for name, read in readers(folder).items():
            if chosen_readers and name not in chosen_readers:
                continue
            cases = whole_docs if name == "comunica" else every
            whole, problems = check(read, cases)
            failures += len(problems)
            unit = "documents (from their first page)" if name == "comunica" else "pages"
            print(f"{name:10s} {whole}/{len(cases)} {unit} whole"
                  + (f"; first problem: {problems[0].removeprefix(base)}" if problems else ""))  # fmt: skip
        wasyncore.close_all(events)
        app.extensions["services"].close()  # type: ignore[attr-defined]
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""The demo loaded by ``qabench serve`` on an empty store (``server.demo = true``).

It loads the example knowledge base and questions written for qabench (``server/examples``),
builds the demo literature index from the example abstracts in its own directory
(``<data_dir>/demo-index``, named as the demo; a real index never holds them), and runs and
publishes one experiment: the example answers file and the ``gold`` system, each under the
``strict`` and ``gerbil`` profiles, so the pages show real results and the differences between
the profiles.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Protocol

from evaluators.datasets.library import load_dataset
from evaluators.experiments.plan import ExperimentRequest, SystemRequest
from evaluators.experiments.runner import ExperimentRunner
from evaluators.knowledge.bases import load_kb
from evaluators.systems.protocol import SystemKind
from evaluators.systems.registry import builtin_registry
from rag.corpus.reader import read_corpus
from rag.errors import IndexMissingError, RagError
from rag.retrieval.index import MANIFEST, open_index, write_manifest
from server.config import Config
from server.runner import run_limits, software_release
from store.protocol import RdfStore

log = logging.getLogger(__name__)

EXAMPLES = Path(__file__).resolve().parent / "examples"
DEMO_DATASET = "qabench-example"
DEMO_KB = "example"


class DemoHost(Protocol):
    """What the demo needs from the app's services."""

    @property
    def config(self) -> Config: ...

    @property
    def store(self) -> RdfStore: ...


def ensure_demo(svc: DemoHost) -> str:
    """Load the example data and run the published demo experiment; return its id."""
    config, store, base = svc.config, svc.store, svc.config.base_iri
    load_kb(store, base, EXAMPLES / "example-kb.ttl", DEMO_KB)
    load_dataset(
        store,
        base,
        EXAMPLES / "example-questions.json",
        name=DEMO_DATASET,
        knowledge_base=DEMO_KB,
        title="qabench example questions",
    )
    ensure_example_index(config.demo_index_dir, config.index_dir)
    runner = ExperimentRunner(
        store,
        base,
        limits=run_limits(config),
        registry=builtin_registry(),
        release=software_release(),
        kb=DEMO_KB,
    )
    request = ExperimentRequest(
        systems=(
            SystemRequest(
                "example-answers",
                SystemKind.ANSWER_FILE,
                answers_path=EXAMPLES / "example-answers.json",
                description="Answers written for the demo: some right, some right "
                "only under the strict profile, some wrong.",
            ),
            SystemRequest(
                "gold",
                SystemKind.BUILT_IN,
                builtin="gold",
                description="Answers with the gold data (a sanity check).",
            ),
        ),
        datasets=(DEMO_DATASET,),
        profiles=("strict", "gerbil"),
        owner="demo",
        publish=True,
    )
    submission = runner.submit(request)
    runner.run(submission.id)
    log.info("demo experiment %s is ready at %s", submission.id, submission.iri)
    return submission.id


DEMO_INDEX_NAME = "demo: 12 example abstracts written for qabench (not real literature)"


def example_pmids() -> frozenset[str]:
    """Return the ids of the example abstracts (the demo index's documents)."""
    return frozenset(a.pmid for a in read_corpus(EXAMPLES / "example-abstracts.jsonl"))


def ensure_example_index(demo_dir: Path, index_dir: Path | None = None) -> None:
    """Build the demo index from the example abstracts in its own directory, unless it exists.

    The demo is kept apart from the real literature index (``index_dir``); a real index that
    an earlier release built from the examples (only the example abstracts, no name recorded)
    is removed, so that the real index's place is free and the demo says it is the demo.
    """
    if index_dir is not None:
        _drop_old_demo(index_dir)
    try:
        open_index(demo_dir).close()
        return
    except IndexMissingError:
        pass
    with open_index(demo_dir, create=True) as index:
        index.add(read_corpus(EXAMPLES / "example-abstracts.jsonl"))
    write_manifest(demo_dir, DEMO_INDEX_NAME, demo=True)


def _drop_old_demo(index_dir: Path) -> None:
    """Remove an index directory that holds nothing but the example abstracts."""
    if not index_dir.is_dir() or (index_dir / MANIFEST).exists():
        return
    try:
        with open_index(index_dir) as index:
            held = {a.pmid for a in index.articles()} if index.info().documents <= 50 else None
    except (IndexMissingError, RagError):
        return
    if held and held <= example_pmids():
        log.info("removing the old demo index in %s (the demo now has its own)", index_dir)
        shutil.rmtree(index_dir)

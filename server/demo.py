"""The demo loaded by ``qabench serve`` on an empty store (``server.demo = true``).

It loads the example knowledge base and questions written for qabench (``server/examples``),
builds a literature index from the example abstracts when there is none, and runs and publishes
one experiment: the example answers file and the ``gold`` system, each under the ``strict`` and
``gerbil`` profiles, so the pages show real results and the differences between the profiles.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Protocol

from evaluators.datasets.library import load_dataset
from evaluators.experiments.plan import ExperimentRequest, SystemRequest
from evaluators.experiments.runner import ExperimentRunner
from evaluators.knowledge.bases import load_kb
from evaluators.systems.protocol import SystemKind
from evaluators.systems.registry import builtin_registry
from rag.corpus.reader import read_corpus
from rag.errors import IndexMissingError
from rag.retrieval.index import open_index
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
    ensure_example_index(config.index_dir)
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


def ensure_example_index(index_dir: Path) -> None:
    """Build the literature index from the example abstracts unless an index exists."""
    try:
        open_index(index_dir).close()
        return
    except IndexMissingError:
        pass
    with open_index(index_dir, create=True) as index:
        index.add(read_corpus(EXAMPLES / "example-abstracts.jsonl"))

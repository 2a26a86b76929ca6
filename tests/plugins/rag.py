"""Fixtures for the rag tests: a 200-article corpus written here and indexes built from it.

Seven hand-written articles carry the facts the tests query for; 193 generated ones (a seeded
mix of neutral biomedical words) make the collection statistics realistic. Nothing is copied
from real abstracts.

Answering over that index: ``make_rag_system(generator)`` builds a ``RagSystem`` over the
shared fixture index (read-only); ``rag_config`` is a server configuration whose
``rag.index_dir`` is that index; ``rag_app`` and ``rag_client`` are the Flask app and test client
over it; ``rag_server_config`` makes variants (e.g. ``rag.openai_base_url`` pointing at an LLM
stub).
"""

from __future__ import annotations

import contextlib
import json
import random
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rag.corpus.article import Article
from rag.models.generators import Generator
from rag.pipeline import RagSystem
from rag.retrieval.index import LiteratureIndex, open_index
from rag.retrieval.retrievers import Retriever, WhooshRetriever
from rag.run import RagSettings
from rag.stages import Stages
from server.app import create_app
from server.config import Config, config_from_dict
from tests import REPO

CORPUS_SIZE = 200

HANDWRITTEN = (
    Article(
        "1000001",
        "Aspirin after myocardial infarction: a randomised trial.",
        "Aspirin lowered the rate of recurrent myocardial infarction in 1,204 patients. "
        "Bleeding was uncommon, e.g. in 2.5% of cases (Fig. 2). Smith et al. saw the same "
        "benefit in older cohorts.",
        ("Aspirin", "Myocardial Infarction"),
        2001,
    ),
    Article(
        "1000002",
        "Heart attack care in rural clinics.",
        "Clopidogrel was compared with aspirin in survivors of a heart attack. The rate of a "
        "second attack fell by a third. Clinics with H2-receptor antagonist stock were rare.",
        ("Myocardial Infarction", "Rural Health"),
        2005,
    ),
    Article(
        "1000003",
        "Lung function after heart surgery.",
        "Lung volumes declined in the week after cardiac surgery. The heart rate recovered "
        "within two days.",
        ("Cardiac Surgical Procedures", "Lung"),
        2010,
    ),
    Article(
        "1000004",
        "Café-au-lait macules in neurofibromatosis type 1.",
        "Café-au-lait macules were counted in 83 children. Ünusual pigmentation… was rare in "
        "this group. The Müller cells stained for β-catenin in all biopsies.",
        ("Neurofibromatosis 1",),
        2015,
    ),
    Article(
        "1000005",
        "Delirium during famotidine treatment in older adults.",
        "Six hospitalised adults developed delirium while receiving famotidine. Symptoms "
        "resolved after the drug was withdrawn.",
        ("Delirium", "Famotidine"),
        1996,
    ),
    Article(
        "1000006",
        "Cardiomyopathy and cardiotoxicity of anthracyclines.",
        "Anthracycline cardiotoxicity led to dilated cardiomyopathy in 12 of 300 women. "
        "Dexrazoxane reduced the risk.",
        ("Cardiomyopathies", "Anthracyclines"),
        2012,
    ),
    Article(
        "1000007",
        "Hepatitis B vaccination of newborns.",
        "Mothers had an infection with hepatitis B. The vaccine protected 95% of their "
        "newborns. No serious adverse events occurred.",
        ("Hepatitis B Vaccines",),
        2008,
    ),
)

_SUBJECTS = (
    "renal tubules",
    "retinal cells",
    "bone density",
    "gut microbiota",
    "skin barrier",
    "platelet counts",
    "muscle fibres",
    "thyroid nodules",
    "sleep quality",
    "blood glucose",
)
_ACTIONS = ("improved", "worsened", "did not change", "varied with", "predicted", "tracked")
_CONTEXTS = (
    "in a cohort of farmers",
    "during pregnancy",
    "among adolescents",
    "in a mouse model",
    "after exercise",
    "in dialysis units",
    "in a cross-sectional survey",
    "in twins",
)


def generated_article(number: int, rng: random.Random) -> Article:
    """Return one filler article built from the neutral word lists."""
    subject, other = rng.sample(_SUBJECTS, 2)
    sentences = [
        f"The {rng.choice(_SUBJECTS)} {rng.choice(_ACTIONS)} {rng.choice(_CONTEXTS)}."
        for _ in range(rng.randint(2, 5))
    ]
    return Article(
        pmid=str(2000000 + number),
        title=f"Study {number} of {subject} and {other} {rng.choice(_CONTEXTS)}.",
        abstract=" ".join(sentences),
        mesh=(subject.title(),),
        year=1990 + number % 30,
    )


def fixture_articles() -> list[Article]:
    """Return the 200 fixture articles (deterministic)."""
    rng = random.Random(20240601)
    filler = [generated_article(n, rng) for n in range(CORPUS_SIZE - len(HANDWRITTEN))]
    return [*HANDWRITTEN, *filler]


def article_json(article: Article) -> str:
    """Return one JSON Lines record for an article."""
    return json.dumps(
        {
            "pmid": article.pmid,
            "title": article.title,
            "abstract": article.abstract,
            "mesh": list(article.mesh),
            "year": article.year,
        },
        ensure_ascii=False,
    )


@pytest.fixture(scope="session")
def rag_corpus_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a JSON Lines file holding the 200 fixture articles."""
    path = tmp_path_factory.mktemp("rag-corpus") / "corpus.jsonl"
    path.write_text("\n".join(article_json(a) for a in fixture_articles()) + "\n", "utf-8")
    return path


@pytest.fixture(scope="session")
def rag_index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return the directory of a 200-article index; read-only for the tests sharing it."""
    directory = tmp_path_factory.mktemp("rag-index") / "index"
    with open_index(directory, create=True) as index:
        index.add(fixture_articles())
    return directory


@pytest.fixture
def rag_index(rag_index_dir: Path) -> Iterator[LiteratureIndex]:
    """Return the shared 200-article index, open for searching."""
    with open_index(rag_index_dir) as index:
        yield index


@pytest.fixture
def rag_writable_index(rag_index_dir: Path, tmp_path: Path) -> Iterator[LiteratureIndex]:
    """Return a private copy of the 200-article index that a test may change."""
    directory = tmp_path / "index"
    shutil.copytree(rag_index_dir, directory)
    with open_index(directory) as index:
        yield index


# Plugins must not import each other (pytest rewrites them in alphabetical order).
BASE = "http://qabench.test"


def retriever_opener(index_dir: Path) -> Callable[[], contextlib.AbstractContextManager[Retriever]]:
    """Return a function that opens the index at ``index_dir`` for one run."""

    @contextlib.contextmanager
    def opener() -> Iterator[Retriever]:
        with open_index(index_dir) as index:
            yield WhooshRetriever(index)

    return opener


@pytest.fixture
def make_rag_system(rag_index_dir: Path) -> Callable[..., RagSystem]:
    """Return ``make(generator, settings=None, stages=None)`` over the fixture index."""

    def make(
        generator: Generator, settings: RagSettings | None = None, stages: Stages | None = None
    ) -> RagSystem:
        return RagSystem(
            retriever_opener(rag_index_dir), generator, settings or RagSettings(), stages=stages
        )

    return make


def rag_server_config(tmp: Path, index_dir: Path, **rag: Any) -> Config:
    """Return a server configuration over ``index_dir`` with extra ``[rag]`` keys."""
    return config_from_dict(
        {
            # No per-client rate here: the tests of the limits set it themselves.
            "server": {
                "base_iri": BASE,
                "demo": False,
                "query_workers": 1,
                "rag_requests_per_minute": 0,
            },
            "store": {"data_dir": str(tmp / "data")},
            "rag": {"index_dir": str(index_dir), **rag},
        },
        source=REPO / "config.toml",
    )


@pytest.fixture
def rag_config(tmp_path: Path, rag_index_dir: Path) -> Config:
    """Return a configuration whose literature index is the 200-article fixture index."""
    return rag_server_config(tmp_path, rag_index_dir)


@pytest.fixture
def rag_app(rag_config: Config) -> Iterator[Any]:
    """Return the app over an empty store and the fixture index."""
    application = create_app(rag_config)
    yield application
    application.extensions["rag"].close()
    application.extensions["services"].close()


@pytest.fixture
def rag_client(rag_app: Any) -> Any:
    """Return the Flask test client of ``rag_app``."""
    return rag_app.test_client()

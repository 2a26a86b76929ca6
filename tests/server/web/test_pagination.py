"""Every list is paged the same way: rel links in HTML and Link headers, Hydra in RDF, 404 past
the end, 400 for a page that is not a number; rows never silently dropped.

The app has a page size of 2 and holds five published experiments of two systems (submitted,
not run: a queued experiment is listed like any other) and the example datasets.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import RdfFormat, parse

from evaluators.experiments.plan import ExperimentRequest, SystemRequest
from evaluators.systems.protocol import SystemKind
from server.app import create_app
from server.config import config_from_dict
from server.services import RUNNER_KEY, Services
from tests import EXAMPLES, REPO
from vocab.standard import HYDRA

BASE = "http://paging.test"
HTML = {"Accept": "text/html"}


@pytest.fixture(scope="module")
def paged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, list[str]]]:
    from evaluators.datasets import library

    tmp: Path = tmp_path_factory.mktemp("paging")
    config = config_from_dict(
        {
            "server": {"base_iri": BASE, "demo": False, "page_size": 2, "query_workers": 1},
            "store": {"data_dir": str(tmp / "data")},
        },
        source=REPO / "config.toml",
    )
    app = create_app(config)
    svc: Services = app.extensions["services"]
    for name in ("one", "two", "three"):
        library.load_dataset(svc.store, BASE, EXAMPLES / "example-questions.json", name=name)
    svc.notify_write()
    runner = app.extensions[RUNNER_KEY]
    ids = []
    for n in range(5):
        system = SystemRequest(f"system-{n % 2}", SystemKind.BUILT_IN, builtin="gold")
        submitted = runner.submit(
            ExperimentRequest(systems=(system,), datasets=("one",), publish=True)
        )
        ids.append(submitted.id)
    svc.notify_write()
    yield app, ids
    svc.close()


def _rows(html: str) -> list[str]:
    return re.findall(r'href="/experiment/(\d+)"', html)


def test_experiments_are_paged_newest_first_with_links(paged: tuple[Any, list[str]]) -> None:
    app, ids = paged
    client = app.test_client()
    seen: list[str] = []
    for number in (1, 2, 3):
        response = client.get(f"/experiments?page={number}", headers=HTML)
        assert response.status_code == 200
        html = response.get_data(as_text=True)
        seen += _rows(html)
        assert f"page {number} of 3 (5 in all)" in html
        links = response.headers["Link"]
        assert ('rel="next"' in links) == (number < 3) and ('rel="prev"' in links) == (number > 1)
        assert ('rel="next"' in html) == (number < 3)
    assert seen == sorted(ids, reverse=True)  # every experiment once, newest first


def test_a_page_past_the_end_is_404_and_a_bad_page_400(paged: tuple[Any, list[str]]) -> None:
    client = paged[0].test_client()
    for path in ("/experiments", "/systems", "/datasets"):
        assert client.get(f"{path}?page=9", headers=HTML).status_code == 404, path
        assert client.get(f"{path}?page=x", headers=HTML).status_code == 400, path
        assert client.get(f"{path}?page=0", headers=HTML).status_code == 400, path
    assert client.get("/dataset/one/v1?page=9", headers=HTML).status_code == 404


def test_the_rdf_form_of_a_page_describes_it_with_hydra(paged: tuple[Any, list[str]]) -> None:
    client = paged[0].test_client()
    body = client.get("/experiments.nt?page=2").get_data()
    triples = {
        (t.subject.value, t.predicate, str(t.object)) for t in parse(body, RdfFormat.N_TRIPLES)
    }
    here = f"{BASE}/experiments?page=2"
    assert (
        f"{BASE}/experiments",
        HYDRA.totalItems,
        '"5"^^<http://www.w3.org/2001/XMLSchema#integer>',
    ) in triples
    assert (f"{BASE}/experiments", HYDRA.view, f"<{here}>") in triples
    assert (here, HYDRA.next, f"<{BASE}/experiments?page=3>") in triples
    assert (here, HYDRA.previous, f"<{BASE}/experiments>") in triples
    members = [t for t in triples if t[1] == HYDRA.member]
    assert len(members) == 2


def _cells(html: str) -> list[list[str]]:
    rows = re.findall(r"<tr>(.*?)</tr>", html, flags=re.S)
    return [
        [
            re.sub(r"<[^>]+>", "", c).strip()
            for c in re.findall(r"<td[^>]*>(.*?)</td>", r, flags=re.S)
        ]
        for r in rows
    ]


def test_systems_and_datasets_are_paged_too(paged: tuple[Any, list[str]]) -> None:
    client = paged[0].test_client()
    systems = _cells(client.get("/systems", headers=HTML).get_data(as_text=True))
    # system-0 ran in experiments 0, 2 and 4, system-1 in 1 and 3: one task each.
    counts = {row[0]: (row[1], row[2]) for row in systems if len(row) == 5}
    assert counts == {"system-0": ("3", "3"), "system-1": ("2", "2")}
    first = client.get("/datasets", headers=HTML).get_data(as_text=True)
    second = client.get("/datasets?page=2", headers=HTML).get_data(as_text=True)
    assert "page 1 of 2 (3 in all)" in first and "page 2 of 2 (3 in all)" in second
    names = {n for n in ("one", "two", "three") if f"/dataset/{n}" in first + second}
    assert names == {"one", "two", "three"}


def test_an_experiment_submitted_later_is_listed_first(paged: tuple[Any, list[str]]) -> None:
    app, ids = paged
    rows = _rows(app.test_client().get("/experiments", headers=HTML).get_data(as_text=True))
    assert rows == sorted(ids, reverse=True)[:2]
    svc: Services = app.extensions["services"]
    assert [e.id for e in svc.experiments.entries()] == sorted(ids)
    assert all(e.tasks == 1 and e.states == ("Queued",) for e in svc.experiments.entries())
    assert {s.iri for e in svc.experiments.entries() for s in e.systems} == {
        f"{BASE}/system/system-0",
        f"{BASE}/system/system-1",
    }


def test_generated_links_never_carry_a_token(paged: tuple[Any, list[str]]) -> None:
    app, _ids = paged
    response = app.test_client().get("/experiments?token=some-secret&page=2", headers=HTML)
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert 'rel="next"' in html and 'rel="prev"' in html
    assert "some-secret" not in html and "some-secret" not in response.headers["Link"]

"""The demo that `./dev serve` shows: example data, an index, a finished published experiment."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from server.cli import main
from server.config import Config, load_config
from server.demo import DEMO_DATASET, ensure_demo
from store.triplestore import TripleStore
from tests import REPO


class Host:
    def __init__(self, config: Config, store: TripleStore) -> None:
        self.config = config
        self.store = store


def test_demo_runs_a_published_experiment_with_profile_differences(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg_file = tmp_path / "config.toml"
    cfg_file.write_text('[server]\nbase_iri = "http://demo.test"\n[store]\ndata_dir = "data"\n')
    config = load_config(cfg_file)
    cli = ["--config", str(cfg_file)]
    store = TripleStore.open(config.store_path)
    try:
        experiment_id = ensure_demo(Host(config, store))
    finally:
        store.close()
    assert main([*cli, "experiment", "show", experiment_id, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["published"] is True
    tasks = {(t["system"], t["profile"]): t for t in doc["tasks"]}
    assert len(tasks) == 4
    assert all(t["state"] == "finished" and t["errors"] == 0 for t in tasks.values())
    for profile in ("strict", "gerbil"):
        assert tasks[("gold", profile)]["results"]["QA"]["micro_f1"] == 1.0
    strict = tasks[("example-answers", "strict")]["results"]["QA"]
    gerbil = tasks[("example-answers", "gerbil")]["results"]["QA"]
    assert 0 < gerbil["micro_f1"] < strict["micro_f1"] < 1
    assert main([*cli, "datasets", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in listed] == [DEMO_DATASET]
    assert main([*cli, "index", "info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    # the demo index stands apart from the real one and says what it is
    assert info["documents"] == 12 and info["demo"] is True
    assert info["directory"].endswith("demo-index") and "not real literature" in info["name"]


def test_serving_an_empty_store_loads_the_demo(tmp_path: Path) -> None:
    from server.app import create_app
    from server.config import config_from_dict

    config = config_from_dict(
        {
            "server": {"base_iri": "http://demo.test", "demo": True},
            "store": {"data_dir": str(tmp_path / "data")},
        },
        source=REPO / "config.toml",
    )
    app = create_app(config)
    try:
        client = app.test_client()
        page = client.get("/", headers={"Accept": "text/html"})
        assert page.status_code == 200
        listing = client.get("/experiments", headers={"Accept": "text/html"})
        assert listing.status_code == 200
        assert b"2026" in listing.data or b"experiment/" in listing.data
        found = client.get(
            "/sparql",
            query_string={
                "query": "SELECT (COUNT(*) AS ?n) WHERE { ?o a <http://purl.org/linked-data/cube#Observation> }"
            },
            headers={"Accept": "application/sparql-results+json"},
        )
        assert found.status_code == 200
        assert int(found.json["results"]["bindings"][0]["n"]["value"]) > 50
        # the experiment page names the headline of each profile in the order of its tables
        path = re.search(r'href="(/experiment/[0-9]+)"', listing.get_data(as_text=True))
        assert path is not None
        html = client.get(path.group(1), headers={"Accept": "text/html"}).get_data(as_text=True)
        headlines = re.search(r'<p id="headlines">(.*?)</p>', html, re.S)
        assert headlines is not None
        said = re.findall(r"for the (\w+) profile", headlines.group(1))
        shown = re.findall(r"systems x datasets \((\w+) profile", html)
        # strict first wherever profiles are listed (issue 37)
        assert said == ["strict", "gerbil"] and shown[: len(said)] == said
    finally:
        app.extensions["services"].close()

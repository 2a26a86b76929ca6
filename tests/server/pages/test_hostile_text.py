"""Text that users choose (system names) reaching CSV and HTML: formulas are neutralised in every
CSV the pages offer, control and bidirectional characters are shown, never passed on raw."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaluators.experiments.runner import ExperimentRequest, SystemRequest
from evaluators.systems.protocol import SystemKind
from server.services import RUNNER_KEY
from tests import EXAMPLES
from tests.plugins.experiment_pages import EXAMPLE_DATASET, PAGES_BASE, make_forms_app

FORMULAS = ('=HYPERLINK("http://evil.test")', "+1+cmd|' /C calc'!A0", "@SUM(A1)", "-2+3")
HIDDEN = "evil\u202egpj.exe\x00\x1b[31m"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str]]:
    app = make_forms_app(tmp_path_factory.mktemp("hostile"))
    runner = app.extensions[RUNNER_KEY]
    names = (*FORMULAS, HIDDEN)
    submission = runner.submit(
        ExperimentRequest(
            systems=tuple(
                SystemRequest(
                    name,
                    SystemKind.ANSWER_FILE,
                    answers_path=Path(EXAMPLES) / "example-answers.json",
                )
                for name in names
            ),
            datasets=(EXAMPLE_DATASET,),
            publish=True,
        )
    )
    runner.run(submission.id)
    yield app, submission.id
    app.extensions["services"].close()


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def _csv_paths(experiment: str) -> list[str]:
    version = f"{PAGES_BASE}/dataset/{EXAMPLE_DATASET}/v1"
    tasks = "&".join(f"task={experiment}/{n}" for n in (1, 2, 3))
    return [
        f"/experiment/{experiment}?format=csv",
        f"/leaderboard?version={version}&profile=any&format=csv",
        f"/compare?{tasks}&format=csv",
    ]


def test_every_csv_neutralises_formulas(hostile: tuple[Any, str]) -> None:
    app, experiment = hostile
    client = app.test_client()
    checked = 0
    for path in _csv_paths(experiment):
        response = client.get(path)
        assert response.status_code == 200 and response.mimetype == "text/csv", path
        cells = _cells(response.get_data(as_text=True))
        assert not any(c.startswith(("=", "+", "@")) for c in cells), path
        assert not any(
            c.startswith("-") and not c.lstrip("-").replace(".", "").isdigit() for c in cells
        )
        # The names are there (where a cell starts with one, behind the quote that makes it text).
        shown = [name for name in FORMULAS if any(name in c for c in cells)]
        assert len(shown) >= 3, path
        checked += 1
    assert checked == 3


def test_numbers_stay_numbers_in_csv(hostile: tuple[Any, str]) -> None:
    app, experiment = hostile
    text = app.test_client().get(f"/experiment/{experiment}?format=csv").get_data(as_text=True)
    assert "0.61875" in _cells(text)


@pytest.mark.parametrize("path", ["/experiment/{id}", "/task/{id}/5", "/systems", "/experiments"])
def test_control_and_bidi_characters_are_shown_not_passed_on(
    hostile: tuple[Any, str], path: str
) -> None:
    app, experiment = hostile
    response = app.test_client().get(path.format(id=experiment), headers={"Accept": "text/html"})
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    for raw in ("\u202e", "\x00", "\x1b"):
        assert raw not in html
    if "{id}" in path:
        assert "evil⟦U+202E⟧gpj.exe⟦U+0000⟧⟦U+001B⟧[31m" in html
    # The RDF form keeps the data exactly.
    data = app.test_client().get(f"/experiment/{experiment}.nt").get_data(as_text=True)
    assert "\\u202E" in data or "\u202e" in data

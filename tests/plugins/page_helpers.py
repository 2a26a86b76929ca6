"""Helpers of the experiment-page tests: reading HTML tables, the forms' CSRF token, re-scoring
the example answers, running a page's SPARQL link. No fixtures (those are in
``experiment_pages``)."""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urlsplit

from evaluators.datasets import library
from evaluators.experiments.read import TaskSummary, list_experiments
from evaluators.qa.scoring import evaluate
from evaluators.results import ExperimentTypeResult
from evaluators.systems.answer_files import parse_answer_file
from server.services import RUNNER_KEY
from tests.plugins.experiment_pages import (
    EXAMPLE_DATASET,
    EXAMPLES,
    PAGES_BASE,
    SUBMIT_TOKEN,
    PagesWorld,
)


class _Tables(HTMLParser):
    """Collect the text of every cell of every table, with each cell's attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[tuple[dict[str, str], list[list[tuple[str, dict[str, str]]]]]] = []
        self._stack: list[list[list[tuple[str, dict[str, str]]]]] = []
        self._cell: list[str] | None = None
        self._attrs: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "table":
            rows: list[list[tuple[str, dict[str, str]]]] = []
            self.tables.append((found, rows))
            self._stack.append(rows)
        elif tag == "tr" and self._stack:
            self._stack[-1].append([])
        elif tag in ("td", "th") and self._stack and self._stack[-1]:
            self._cell, self._attrs = [], found

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._stack:
            text = " ".join("".join(self._cell).split())
            self._stack[-1][-1].append((text, self._attrs))
            self._cell = None
        elif tag == "table" and self._stack:
            self._stack.pop()

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def html_tables(html: str, css_class: str) -> list[list[list[tuple[str, dict[str, str]]]]]:
    """Return the tables whose class list holds ``css_class``: rows of (text, attributes)."""
    parser = _Tables()
    parser.feed(html)
    return [rows for attrs, rows in parser.tables if css_class in attrs.get("class", "").split()]


def cell_texts(row: list[tuple[str, dict[str, str]]]) -> list[str]:
    """Return the texts of a row's cells."""
    return [text for text, _ in row]


HTML = {"Accept": "text/html"}
JSON = {"Accept": "application/json"}


def tasks_by_system(world: PagesWorld, experiment_id: str) -> dict[str, TaskSummary]:
    """Return an experiment's tasks by system name, as the runner reads them back."""
    return {t.plan.system: t for t in world.runner.summary(experiment_id).tasks}


def qa_result(task: TaskSummary) -> ExperimentTypeResult:
    """Return a task's QA result."""
    return next(r for r in task.results if r.experiment_type == "QA")


def get_page(world: PagesWorld, path: str, headers: dict[str, str] | None = None) -> Any:
    """Return the response to a GET (HTML unless ``headers`` say otherwise)."""
    return world.app.test_client().get(path, headers=headers or HTML)


def example_scores(world: PagesWorld, kind: str = "QA") -> dict[str, float]:
    """Re-score the example answers file with the evaluation engine (strict, English)."""
    store = world.services.store
    version = library.resolve_version(store, PAGES_BASE, EXAMPLE_DATASET)
    dataset = library.read_dataset(store, version)
    data = (EXAMPLES / "example-answers.json").read_bytes()
    answers = parse_answer_file(data, source="example-answers.json").by_id()
    typed = evaluate(dataset, answers, profile="strict", language="en").get(kind)
    assert typed is not None
    return {q.question_id: q.value("f1") or 0.0 for q in typed.per_question}


def run_query_link(world: PagesWorld, html: str) -> list[dict[str, dict[str, str]]]:
    """Run a page's "SPARQL query behind this table" at /sparql and return its rows."""
    marker = '<p class="reproduce"><a href="'
    start = html.index(marker) + len(marker)
    link = html[start : html.index('"', start)].replace("&amp;", "&")
    assert link.startswith("/sparql?")
    query = parse_qs(urlsplit(link).query)["query"][0]
    response = world.app.test_client().get(
        "/sparql",
        query_string={"query": query},
        headers={"Accept": "application/sparql-results+json"},
    )
    assert response.status_code == 200, response.data[:300]
    rows: list[dict[str, dict[str, str]]] = response.get_json()["results"]["bindings"]
    return rows


BEARER = {"Authorization": f"Bearer {SUBMIT_TOKEN}", **JSON}
WAIT_SECONDS = 60


def csrf_of(client: Any, path: str = "/experiments/new") -> str:
    """Open a form page with ``client`` and return the CSRF token of its session."""
    page = client.get(path, headers=HTML).get_data(as_text=True)
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found is not None
    return found.group(1)


def experiment_ids(app: Any) -> list[str]:
    """Return the ids of every experiment in the app's store (private ones too)."""
    return [e.id for e in list_experiments(app.extensions["services"].store, PAGES_BASE)]


def gold_form(**extra: Any) -> dict[str, Any]:
    """Return the fields of a new-experiment form running ``gold`` on the example dataset."""
    return {"dataset": f"{EXAMPLE_DATASET}@1", "builtin": "gold", "languages": "en", **extra}


def upload(data: bytes, name: str = "answers.json") -> tuple[io.BytesIO, str]:
    """Return a file field for the Flask test client."""
    return io.BytesIO(data), name


def wait_for(app: Any, experiment_id: str) -> None:
    """Wait until the app's runner has finished a background experiment."""
    assert app.extensions[RUNNER_KEY].wait(experiment_id, WAIT_SECONDS)

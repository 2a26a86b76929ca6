"""What a researcher reads and takes away from a published two-system, two-profile experiment:
headline values with their 95% intervals, ``strict`` first, the historical profile's note with
the number of answers it scores differently (counted here from the stored per-question values,
not taken from the page's code), the compare form's defaults and refusals, the experiment's
tables as LaTeX and Markdown, and a task's per-question table as CSV."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import NamedNode

from evaluators import cube
from evaluators.experiments.plan import ExperimentRequest, SystemRequest
from evaluators.experiments.results import question_values
from evaluators.systems.protocol import SystemKind
from server.pages.tables import format_value
from server.services import RUNNER_KEY, Services
from store import graphs
from tests import EXAMPLES
from tests.plugins.experiment_pages import (
    EXAMPLE_DATASET,
    PAGES_BASE,
    make_forms_app,
    wrong_answers_file,
)
from tests.plugins.page_helpers import HTML, cell_texts, html_tables

PROFILES = ("gerbil-legacy", "strict")  # asked in this order: pages list strict first


def wrong_literals_file(folder: Path) -> Path:
    """Answer every literal and boolean question of the example data wrongly (and the rest
    rightly): GERBIL's 2019-2024 counter takes any two such answers for a match."""
    gold = json.loads((EXAMPLES / "example-questions.json").read_text("utf-8"))
    for question in gold["questions"]:
        for answer in question["answers"]:
            if "boolean" in answer:
                answer["boolean"] = not answer["boolean"]
            for binding in answer.get("results", {}).get("bindings", []):
                for value in binding.values():
                    if value["type"] != "uri":
                        value["value"] = "wrong " + value["value"]
    path = folder / "wrong-literals.json"
    path.write_text(json.dumps(gold), "utf-8")
    return path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str]]:
    tmp = tmp_path_factory.mktemp("researcher")
    app = make_forms_app(tmp)
    runner = app.extensions[RUNNER_KEY]
    request = ExperimentRequest(
        systems=(
            SystemRequest(
                "literal-guesser", SystemKind.ANSWER_FILE, answers_path=wrong_literals_file(tmp)
            ),
            SystemRequest(
                "example-answers",
                SystemKind.ANSWER_FILE,
                answers_path=EXAMPLES / "example-answers.json",
            ),
            SystemRequest(
                "wrong-answers", SystemKind.ANSWER_FILE, answers_path=wrong_answers_file(tmp)
            ),
        ),
        datasets=(EXAMPLE_DATASET,),
        profiles=PROFILES,
        publish=True,
    )
    submission = runner.submit(request)
    runner.run(submission.id)
    yield app, submission.id
    app.extensions["services"].close()


def _tasks(app: Any, eid: str) -> dict[tuple[str, str], Any]:
    summary = app.extensions[RUNNER_KEY].summary(eid)
    return {(t.plan.system, t.plan.profile): t for t in summary.tasks}


def _f1(app: Any, eid: str, task: Any) -> dict[str, float]:
    svc: Services = app.extensions["services"]
    graph = graphs.experiment_graph(PAGES_BASE, eid)
    term = cube.experiment_type_term(PAGES_BASE, "QA")
    return {
        v.id: v.value("f1") or 0.0
        for v in question_values(svc.store, graph, NamedNode(task.iri), term)
    }


def test_the_page_lists_strict_first_with_intervals_and_the_counted_profile_note(world) -> None:  # type: ignore[no-untyped-def]
    app, eid = world
    html = app.test_client().get(f"/experiment/{eid}", headers=HTML).get_data(as_text=True)
    # strict's table and headline come first, though gerbil-legacy was asked first
    assert html.index("strict profile, en)") < html.index("gerbil-legacy profile, en)")
    assert "Macro F1 QALD for the strict profile; Macro F1 QALD for the gerbil-legacy" in html
    tasks = _tasks(app, eid)
    glance = html_tables(html, "glance")
    assert len(glance) == 2
    shown = 0
    for row in glance[0][1:]:  # strict: every value with its stored interval
        system, text = cell_texts(row)[:2]
        qa = next(r for r in tasks[(system, "strict")].results if r.experiment_type == "QA")
        value, low, high = (
            qa.value(m) for m in ("macro_f1_qald", "macro_f1_qald_ci_low", "macro_f1_qald_ci_high")
        )
        if value is None:
            continue
        assert low is not None and high is not None and low <= value <= high
        f = "macro_f1_qald"
        assert text.startswith(
            f"{format_value(f, value)} [{format_value(f, low)}, {format_value(f, high)}]"
        )
        shown += 1
    assert shown == 2  # wrong-answers has no defined Macro F1 QALD
    # the note counts, from the stored per-question F1, the answers gerbil-legacy scores higher
    higher = lower = answers = 0
    for system in ("literal-guesser", "example-answers", "wrong-answers"):
        legacy = _f1(app, eid, tasks[(system, "gerbil-legacy")])
        strict = _f1(app, eid, tasks[(system, "strict")])
        answers += len(legacy)
        higher += sum(legacy[q] > strict[q] for q in legacy)
        lower += sum(legacy[q] < strict[q] for q in legacy)
    assert higher >= 4  # the literal guesser's wrong literals and boolean at least
    assert f"it scores {higher} of {answers} answers higher than strict and {lower} lower" in html
    assert '<details class="more" id="significance" open>' in html


def test_the_compare_form_starts_with_two_systems_under_one_profile(world) -> None:  # type: ignore[no-untyped-def]
    app, eid = world
    html = app.test_client().get(f"/experiment/{eid}", headers=HTML).get_data(as_text=True)
    tasks = {t.plan.number: t for t in _tasks(app, eid).values()}
    chosen = []
    for name in ("a", "b"):
        select = html[html.index(f'<select id="compare-{name}"') :]
        select = select[: select.index("</select>")]
        option = select[: select.index(" selected")]
        chosen.append(int(option[option.rindex("/") + 1 : option.rindex('"')]))
    a, b = (tasks[n].plan for n in chosen)
    assert a.profile == b.profile == "strict" and a.system != b.system


def test_compare_refuses_tasks_of_different_profiles(world) -> None:  # type: ignore[no-untyped-def]
    app, eid = world
    tasks = _tasks(app, eid)
    a = tasks[("example-answers", "strict")].plan.number
    b = tasks[("example-answers", "gerbil-legacy")].plan.number
    client = app.test_client()
    for query in (f"a={eid}/{a}&b={eid}/{b}", f"task={eid}/{a}&task={eid}/{b}"):
        response = client.get(f"/compare?{query}", headers={"Accept": "application/json"})
        assert response.status_code == 400, query
        problem = response.get_json()
        assert problem["profiles"] == ["strict", "gerbil-legacy"]
        assert "not a difference between systems" in problem["detail"]


def test_the_experiment_answers_latex_and_markdown_with_intervals(world) -> None:  # type: ignore[no-untyped-def]
    app, eid = world
    client = app.test_client()
    latex = client.get(f"/experiment/{eid}", headers={"Accept": "application/x-latex"})
    assert latex.status_code == 200 and latex.mimetype == "application/x-latex"
    same = client.get(f"/experiment/{eid}?format=latex")
    assert same.status_code == 200 and same.data == latex.data
    text = latex.get_data(as_text=True)
    assert text.count(r"\begin{table}") == 3  # two matrices (strict first), the results
    assert text.index("strict profile") < text.index("gerbil-legacy profile")
    assert r"\toprule" in text and "95\\% bootstrap interval" in text
    tasks = _tasks(app, eid)
    qa = next(r for r in tasks[("example-answers", "strict")].results if r.experiment_type == "QA")
    low, high = qa.value("macro_f1_qald_ci_low"), qa.value("macro_f1_qald_ci_high")
    assert low is not None and high is not None
    assert f"[{low:.4f}, {high:.4f}]" in text
    markdown = client.get(f"/experiment/{eid}?format=markdown")
    assert markdown.status_code == 200 and markdown.mimetype == "text/markdown"
    assert f"[{low:.4f}, {high:.4f}]" in markdown.get_data(as_text=True)


def test_the_results_csv_has_interval_columns(world) -> None:  # type: ignore[no-untyped-def]
    app, eid = world
    rows = list(
        csv.DictReader(
            io.StringIO(
                app.test_client().get(f"/experiment/{eid}?format=csv").get_data(as_text=True)
            )
        )
    )
    qa = [r for r in rows if r["Type"] == "QA"]
    assert len(qa) == 6
    tasks = _tasks(app, eid)
    for row in qa:
        result = next(
            r for r in tasks[(row["System"], row["Profile"])].results if r.experiment_type == "QA"
        )
        low = result.value("macro_f1_qald_ci_low")
        assert row["Macro F1 QALD 95% CI low"] == ("" if low is None else repr(low))
        assert row["Macro F1 95% CI high"] == repr(result.value("macro_f1_ci_high"))


def test_a_task_answers_its_per_question_table_as_csv(world) -> None:  # type: ignore[no-untyped-def]
    app, eid = world
    task = _tasks(app, eid)[("literal-guesser", "strict")]
    client = app.test_client()
    response = client.get(f"/task/{eid}/{task.plan.number}", headers={"Accept": "text/csv"})
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert client.get(f"/task/{eid}/{task.plan.number}?format=csv").data == response.data
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert list(rows[0]) == [
        "question", "text", "gold", "system", "tp", "fp", "fn", "precision", "recall", "f1", "error",
    ]  # fmt: skip
    svc: Services = app.extensions["services"]
    graph = graphs.experiment_graph(PAGES_BASE, eid)
    term = cube.experiment_type_term(PAGES_BASE, "QA")
    stored = {v.id: v for v in question_values(svc.store, graph, NamedNode(task.iri), term)}
    assert len(rows) == len(stored) == 8  # one row per question of the example data
    for row in rows:
        found = stored[row["question"]]
        for measure in ("tp", "fp", "fn"):
            assert row[measure] == str(int(found.value(measure) or 0))
        assert row["f1"] == repr(found.value("f1"))
        assert row["text"]  # the question's English text
        assert isinstance(json.loads(row["gold"]), list) and isinstance(
            json.loads(row["system"]), list
        )
    wrong = next(r for r in rows if r["question"] == "2")  # a number answered wrongly
    assert json.loads(wrong["gold"]) == ["291134"] and json.loads(wrong["system"]) == [
        "wrong 291134"
    ]
    assert wrong["f1"] == "0.0"
    # one page holds up to 1000 questions: a second page does not exist
    assert client.get(f"/task/{eid}/{task.plan.number}?format=csv&page=2").status_code == 404


def test_experiments_name_the_profile_of_each_headline_and_prefer_strict(world) -> None:  # type: ignore[no-untyped-def]
    app, eid = world
    html = app.test_client().get("/experiments", headers=HTML).get_data(as_text=True)
    row = html[html.index(f">{eid}<") :]
    row = row[: row.index("</tr>")]
    # the best strict result, named as such, though gerbil-legacy's is higher
    assert "Macro F1 QALD, strict profile" in row
    assert "gerbil-legacy" not in row

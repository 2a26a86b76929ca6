"""The leaderboard and compare pages through the Flask client, and the pure parts of the pages
(ranking, chart geometry, cell formatting, docstring examples).

Values are checked against the runner's stored results, a re-scoring with
``evaluators.qa.scoring.evaluate``, ``approximate_randomisation`` called directly, and each page's
SPARQL link run at ``/sparql``.
"""

from __future__ import annotations

import json

import pytest

from evaluators.significance import approximate_randomisation
from server.pages.compare import ITERATIONS
from server.pages.tables import DASH, format_value
from tests.plugins.experiment_pages import (
    EXAMPLE_DATASET,
    PAGES_BASE,
    PagesWorld,
)
from tests.plugins.page_helpers import (
    HTML,
    JSON,
    cell_texts,
    example_scores,
    get_page,
    html_tables,
    qa_result,
    run_query_link,
    tasks_by_system,
)

VERSION = f"{PAGES_BASE}/dataset/{EXAMPLE_DATASET}/v1"


# ---------------------------------------------------------------- leaderboard


def test_leaderboard_ranks_published_systems_by_macro_then_micro_f1(
    pages_world: PagesWorld,
) -> None:
    token = {"Authorization": f"Bearer {pages_world.private.token}", **HTML}
    response = get_page(pages_world, f"/leaderboard?version={VERSION}", token)
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    (table,) = html_tables(html, "results")
    rows = [cell_texts(r) for r in table[1:]]
    tasks = tasks_by_system(pages_world, pages_world.published.id)
    finished = {s: t for s, t in tasks.items() if t.results}
    assert [r[1] for r in rows] == sorted(
        finished,
        key=lambda s: (
            -(qa_result(finished[s]).value("macro_f1") or 0.0),
            -(qa_result(finished[s]).value("micro_f1") or 0.0),
        ),
    )
    for row in rows:
        qa = qa_result(finished[row[1]])
        assert row[2] == format_value("macro_f1", qa.value("macro_f1") or 0.0)
        assert row[3] == format_value("micro_f1", qa.value("micro_f1") or 0.0)
    assert "gold-private" not in html  # private results never count, token or not
    assert html.count("<rect ") == len(rows)
    assert '<svg class="chart" role="img" aria-labelledby="chart-title chart-desc"' in html
    assert '<desc id="chart-desc">3 bars. gold: 1.0000' in html


def test_leaderboard_refuses_unknown_types_and_profiles(pages_world: PagesWorld) -> None:
    for query in ("type=NOPE%20NOPE", "profile=nope"):
        response = get_page(pages_world, f"/leaderboard?version={VERSION}&{query}", JSON)
        assert response.status_code == 400, query
    empty = get_page(pages_world, f"/leaderboard?version={VERSION}&profile=gerbil")
    assert "No published results" in empty.get_data(as_text=True)
    c2kb = get_page(pages_world, f"/leaderboard?version={VERSION}&type=C2KB").get_data(as_text=True)
    assert "C2KB on" in c2kb


# ---------------------------------------------------------------- compare


def test_compare_counts_questions_and_tests_significance(pages_world: PagesWorld) -> None:
    eid = pages_world.published.id
    tasks = tasks_by_system(pages_world, eid)
    a, b = tasks["example-answers"].plan.number, tasks["gold"].plan.number
    html = get_page(pages_world, f"/compare?a={eid}/{a}&b={PAGES_BASE}/task/{eid}/{b}").get_data(
        as_text=True
    )
    scores = example_scores(pages_world)
    ids = sorted(scores, key=int)
    right = sum(1 for q in ids if scores[q] == 1.0)
    (contingency,) = html_tables(html, "contingency")
    assert cell_texts(contingency[1])[1:] == [str(right), "0"]
    assert cell_texts(contingency[2])[1:] == [str(len(ids) - right), "0"]
    test = approximate_randomisation(
        [scores[q] for q in ids], [1.0] * len(ids), iterations=ITERATIONS, seed=0
    )
    assert f"p = {test.p_value:.4f}" in html
    assert f"{test.difference:+.4f}" in html


def test_compare_refuses_tasks_on_different_dataset_versions(pages_world: PagesWorld) -> None:
    a = f"{pages_world.published.id}/4"
    b = f"{pages_world.tiny.id}/1"
    response = get_page(pages_world, f"/compare?a={a}&b={b}", JSON)
    assert response.status_code == 400 and response.mimetype == "application/problem+json"
    detail = response.get_json()["detail"]
    assert "different dataset versions" in detail and "tiny-qa v1" in detail


def test_compare_problems_for_unknown_private_malformed_and_emptytasks_by_system(
    pages_world: PagesWorld,
) -> None:
    eid, private = pages_world.published.id, pages_world.private
    assert get_page(pages_world, f"/compare?a={eid}/2&b={eid}/99", JSON).status_code == 404
    assert get_page(pages_world, f"/compare?a={eid}/2&b={private.id}/1", JSON).status_code == 404
    owner = {"Authorization": f"Bearer {private.token}", **JSON}
    assert get_page(pages_world, f"/compare?a={eid}/2&b={private.id}/1", owner).status_code == 200
    assert get_page(pages_world, f"/compare?a=nonsense&b={eid}/2", JSON).status_code == 400
    aborted = get_page(pages_world, f"/compare?a={eid}/1&b={eid}/2", JSON)
    assert aborted.status_code == 400 and "per-question" in aborted.get_json()["detail"]
    form = get_page(pages_world, "/compare")
    assert form.status_code == 200 and 'name="a"' in form.get_data(as_text=True)


def test_problem_documents_are_json_for_scripts(pages_world: PagesWorld) -> None:
    response = get_page(pages_world, "/compare?a=x/1&b=y/1", JSON)
    assert response.status_code == 404
    body = json.loads(response.data)
    assert body["status"] == 404 and body["type"].endswith("#NotFound")


def test_compare_system_and_leaderboard_links_reproduce_their_tables(
    pages_world: PagesWorld,
) -> None:
    eid = pages_world.published.id
    tasks = tasks_by_system(pages_world, eid)
    a, b = tasks["example-answers"].plan.number, tasks["gold"].plan.number
    compare = get_page(pages_world, f"/compare?a={eid}/{a}&b={eid}/{b}").get_data(as_text=True)
    assert 'type="application/sparql-results+json"' in compare  # the table as data
    rows = run_query_link(pages_world, compare)
    scores = example_scores(pages_world)
    assert len(rows) == len(scores)
    for row in rows:
        qid = row["question"]["value"].rsplit("/", 1)[-1]
        assert float(row["f1A"]["value"]) == scores[qid] and float(row["f1B"]["value"]) == 1.0
    system = get_page(pages_world, "/system/gold").get_data(as_text=True)
    found = {r["task"]["value"] for r in run_query_link(pages_world, system)}
    assert found == {tasks["gold"].iri, f"{PAGES_BASE}/task/{pages_world.tiny.id}/1"}
    board = get_page(pages_world, f"/leaderboard?version={VERSION}").get_data(as_text=True)
    ranked = {r["label"]["value"] for r in run_query_link(pages_world, board)}
    assert ranked == {s for s, t in tasks.items() if t.results}


# ---------------------------------------------------------------- pure parts


def _row(task: str, system: str, measure: str, value: float) -> dict[str, str]:
    return {"task": task, "system": system, "measure": measure, "value": str(value)}


def test_best_per_system_ranks_by_macro_then_micro_f1() -> None:
    from server.pages.leaderboard import best_per_system

    rows = [
        _row("t1", "A", "macro_f1", 0.5),
        _row("t1", "A", "micro_f1", 0.2),
        _row("t2", "A", "macro_f1", 0.5),
        _row("t2", "A", "micro_f1", 0.4),  # same macro F1: the better micro F1 wins
        _row("t3", "B", "macro_f1", 0.5),
        _row("t3", "B", "micro_f1", 0.3),
        _row("t4", "C", "micro_f1", 0.9),  # macro F1 undefined: ranked last
        _row("t5", "D", "macro_f1", 0.7),
    ]
    board = best_per_system(rows, ("macro_f1", "micro_f1"))
    assert [(e.system, e.task, e.tasks) for e in board] == [
        ("D", "t5", 1),
        ("A", "t2", 2),
        ("B", "t3", 1),
        ("C", "t4", 1),
    ]
    assert board[0].second is None and board[-1].first is None
    assert best_per_system([], ("macro_f1", "micro_f1")) == []


@pytest.mark.parametrize(
    ("values", "maximum", "widths"),
    [
        ([], 1.0, []),
        ([("a", 0.25)], 1.0, [105.0]),
        ([("a", 2.0), ("b", 1.0)], 1.0, [420.0, 210.0]),  # the axis grows to the largest value
        ([("a", -0.5)], 1.0, [0.0]),
        ([("a", 0.0)], 0.0, [0.0]),
    ],
)
def test_bar_chart_geometry(
    values: list[tuple[str, float]], maximum: float, widths: list[float]
) -> None:
    from server.pages.charts import PLOT_WIDTH, bar_chart

    chart = bar_chart("t", values, maximum=maximum)
    assert [b.width for b in chart.bars] == widths
    assert all(0 <= b.width <= PLOT_WIDTH for b in chart.bars)
    assert len({b.y for b in chart.bars}) == len(values)  # bars never overlap
    assert chart.description.startswith(f"{len(values)} bars.")
    assert chart.height > chart.axis_y >= max((b.y for b in chart.bars), default=0)


@pytest.mark.parametrize(
    ("value", "reason", "text", "undefined"),
    [
        (0.123456, None, "0.1235", False),
        (1.0, None, "1.0000", False),
        (None, "no questions", "undefined", True),
    ],
)
def test_cells_show_four_decimals_or_undefined_with_a_footnote(
    value: float | None, reason: str | None, text: str, undefined: bool
) -> None:
    from evaluators.results import MeasureValue
    from server.pages.tables import Footnotes, cell

    notes = Footnotes()
    shown = cell(MeasureValue("macro_f1", value, reason), notes)
    assert (shown.text, shown.undefined) == (text, undefined)
    if undefined:
        assert shown.title == reason and shown.note == 1
        assert notes.listing()[0].reason == reason
        again = cell(MeasureValue("micro_f1", None, reason), notes)
        assert again.note == 1 and len(notes.listing()) == 1  # one footnote per reason
    assert cell(None, notes).text == DASH

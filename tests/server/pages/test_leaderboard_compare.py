"""The leaderboard and compare pages through the Flask client, and the pure parts of the pages
(ranking, chart geometry, cell formatting, docstring examples).

Values are checked against the runner's stored results, a re-scoring with
``evaluators.qa.scoring.evaluate``, ``approximate_randomisation`` called directly, and each page's
SPARQL link run at ``/sparql``.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pytest

from evaluators.results import MEASURES
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


def _undefined_last(value: float | None) -> float:
    return -1.0 if value is None else value


def test_leaderboard_ranks_by_the_headline_measure_with_sanity_systems_apart(
    pages_world: PagesWorld,
) -> None:
    token = {"Authorization": f"Bearer {pages_world.private.token}", **HTML}
    response = get_page(pages_world, f"/leaderboard?version={VERSION}", token)
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    ranked_table, sanity_table = html_tables(html, "results")
    rows = [cell_texts(r) for r in ranked_table[1:]]
    tasks = tasks_by_system(pages_world, pages_world.published.id)
    finished = {s: t for s, t in tasks.items() if t.results and s != "gold"}
    # strict's headline: Macro F1 QALD, then macro F1
    assert cell_texts(ranked_table[0])[2:4] == ["Macro F1 QALD", "Macro F1"]
    assert [r[1] for r in rows] == sorted(
        finished,
        key=lambda s: (
            -_undefined_last(qa_result(finished[s]).value("macro_f1_qald")),
            -_undefined_last(qa_result(finished[s]).value("macro_f1")),
        ),
    )
    for row in rows:
        qa = qa_result(finished[row[1]])
        first = qa.value("macro_f1_qald")
        low, high = qa.value("macro_f1_qald_ci_low"), qa.value("macro_f1_qald_ci_high")
        interval = f" [{format_value('macro_f1', low)}, {format_value('macro_f1', high)}]"
        assert row[2] == (
            format_value("macro_f1_qald", first) + interval if first is not None else "undefined"
        )  # the headline with its stored 95% interval
        assert row[3] == format_value("macro_f1", qa.value("macro_f1") or 0.0)
    # gold answers from the gold standard: listed apart, never ranked
    assert [cell_texts(r)[0] for r in sanity_table[1:]] == ["gold"]
    assert "gold-private" not in html  # private results never count, token or not
    assert html.count("<rect ") == len([r for r in rows if r[2] != "undefined"])
    assert '<svg class="chart" role="img" aria-labelledby="chart-title chart-desc"' in html
    assert "gold: 1.0000" not in html.split('<desc id="chart-desc">', 1)[1].split("</desc>")[0]


def test_leaderboard_ranks_by_another_measure_on_request_and_as_csv(
    pages_world: PagesWorld,
) -> None:
    import csv
    import io

    url = f"/leaderboard?version={VERSION}&measure=micro_f1"
    html = get_page(pages_world, url).get_data(as_text=True)
    ranked_table, _ = html_tables(html, "results")
    assert cell_texts(ranked_table[0])[2:4] == ["Micro F1", "Macro F1 QALD"]
    values = [float(cell_texts(r)[2]) for r in ranked_table[1:]]
    assert values == sorted(values, reverse=True)
    response = get_page(pages_world, url, {"Accept": "text/csv"})
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert "Accept" in response.headers["Vary"]
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    tasks = tasks_by_system(pages_world, pages_world.published.id)
    for row in rows:
        expected = qa_result(tasks[row["System"]]).value("micro_f1")
        assert float(row["Micro F1"]) == expected
        assert row["Sanity check"] == ("yes" if row["System"] == "gold" else "no")
        assert (row["Rank"] == "") == (row["System"] == "gold")
    assert get_page(pages_world, f"{url}&format=csv").mimetype == "text/csv"
    bad = get_page(pages_world, f"/leaderboard?version={VERSION}&measure=f2", JSON)
    assert bad.status_code == 400


def test_leaderboard_refuses_unknown_types_and_profiles(pages_world: PagesWorld) -> None:
    for query in ("type=NOPE%20NOPE", "profile=nope"):
        response = get_page(pages_world, f"/leaderboard?version={VERSION}&{query}", JSON)
        assert response.status_code == 400, query
    empty = get_page(pages_world, f"/leaderboard?version={VERSION}&profile=gerbil")
    assert "No published QA results for this version under the gerbil profile" in empty.get_data(
        as_text=True
    )
    c2kb = get_page(pages_world, f"/leaderboard?version={VERSION}&type=C2KB").get_data(as_text=True)
    assert "C2KB on" in c2kb
    # a system whose answers carry no queries is said to be unmeasured there, not wrong
    assert 'id="undefined-note"' in c2kb and "carry no queries" in c2kb


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
    linked = run_query_link(pages_world, board)
    ranked = {r["label"]["value"] for r in linked}
    assert ranked == {s for s, t in tasks.items() if t.results}
    # The page reads the experiment index; the linked query gives the same values.
    by_query = {
        (r["task"]["value"], r["measure"]["value"]): float(r["value"]["value"]) for r in linked
    }
    doc = get_page(pages_world, f"/leaderboard?version={VERSION}", JSON).get_json()
    entries = doc["entries"] + doc["sanity_checks"]
    assert len(entries) == len(ranked) >= 3
    for entry in entries:
        for measure in doc["ranking"]:
            key = (entry["task"], str(MEASURES[measure].term.value))
            assert entry[measure] == by_query.get(key)


# ---------------------------------------------------------------- pure parts


def _row(task: str, system: str, measure: str, value: float) -> dict[str, str]:
    return {"task": task, "system": system, "measure": measure, "value": str(value)}


def test_best_per_system_ranks_by_macro_then_micro_f1() -> None:
    from evaluators.reports.leaderboard import best_per_system, board

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
    ranked = board(best_per_system(rows, ("macro_f1", "micro_f1")))
    assert [(n, e.system, e.task, e.tasks) for n, e in ranked.ranked] == [
        (1, "D", "t5", 1),
        (2, "A", "t2", 2),
        (3, "B", "t3", 1),
        (4, "C", "t4", 1),
    ]
    assert ranked.ranked[0][1].second is None and ranked.ranked[-1][1].first is None
    assert best_per_system([], ("macro_f1", "micro_f1")) == []
    gold = [{**_row("t9", "G", "macro_f1", 1.0), "kind": "built-in", "builtin": "gold"}]
    with_gold = board(best_per_system(rows + gold, ("macro_f1", "micro_f1")))
    assert [e.system for e in with_gold.sanity] == ["G"] and len(with_gold.ranked) == 4


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
    from evaluators.reports.charts import PLOT_WIDTH, bar_chart

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


def test_compare_many_tasks_ranks_tests_and_answers_json_and_csv(
    pages_world: PagesWorld,
) -> None:
    import csv
    import io

    from evaluators.significance import friedman, pairwise
    from server.pages.compare import PAIRWISE_ITERATIONS, SEED

    eid = pages_world.published.id
    tasks = tasks_by_system(pages_world, eid)
    names = ("wrong-answers", "gold", "example-answers")
    query = "&".join(f"task={eid}/{tasks[n].plan.number}" for n in names)
    doc = get_page(pages_world, f"/compare?{query}", JSON).get_json()
    assert doc["ranking"] == ["macro_f1_qald", "macro_f1"]
    ranked = [t["system"] for t in doc["tasks"] if not t["sanity_check"]]
    assert ranked == ["example-answers", "wrong-answers"]  # by Macro F1 QALD
    assert [t["system"] for t in doc["tasks"] if t["sanity_check"]] == ["gold"]
    scores = example_scores(pages_world)
    wrong = {}
    html = get_page(pages_world, f"/compare?{query}&format=csv")
    assert html.mimetype == "text/csv"
    rows = list(csv.reader(io.StringIO(html.get_data(as_text=True))))
    assert len(rows) == 1 + len(scores)
    for row in rows[1:]:
        assert float(row[3]) == scores[row[0]]  # example-answers, the third task named
        assert float(row[2]) == 1.0  # gold
        wrong[row[0]] = float(row[1])
    ids = sorted(scores)
    matrix = [[scores[q] for q in ids], [wrong[q] for q in ids]]
    expected = friedman(matrix)
    assert doc["friedman"]["p_value"] == expected.p_value
    (pair,) = pairwise(matrix, iterations=PAIRWISE_ITERATIONS, seed=SEED)
    assert doc["pairwise"][0]["holm_p_value"] == pair.adjusted_p
    page = get_page(pages_world, f"/compare?{query}").get_data(as_text=True)
    assert 'id="friedman"' in page and "(sanity check, not ranked)" in page
    switched = get_page(pages_world, f"/compare?{query}&measure=micro_f1", JSON).get_json()
    assert switched["ranking"] == ["micro_f1", "macro_f1_qald"]


def test_leaderboard_as_json(pages_world: PagesWorld) -> None:
    doc = get_page(pages_world, f"/leaderboard?version={VERSION}", JSON).get_json()
    assert doc["ranking"] == ["macro_f1_qald", "macro_f1"]
    assert [e["rank"] for e in doc["entries"]] == sorted(e["rank"] for e in doc["entries"])
    assert [e["label"] for e in doc["sanity_checks"]] == ["gold"]


def test_leaderboard_opens_on_a_list_of_boards_and_a_profile_with_data(
    pages_world: PagesWorld, tmp_path: Any
) -> None:
    chooser = get_page(pages_world, "/leaderboard").get_data(as_text=True)
    (boards,) = html_tables(chooser, "boards")
    labels = [cell_texts(r)[0] for r in boards[1:]]
    assert labels == [f"{EXAMPLE_DATASET} v1", "tiny-qa v1"]
    # which profiles scored the tasks
    assert re.search(r'strict <span class="hint">\(\d+ tasks?\)', chooser)
    # The results are strict: a server whose default profile is gerbil still opens on them.
    svc = pages_world.services
    config = svc.config
    object.__setattr__(
        svc,
        "config",
        replace(config, evaluation=replace(config.evaluation, default_profile="gerbil")),
    )
    try:
        html = get_page(pages_world, f"/leaderboard?version={VERSION}").get_data(as_text=True)
    finally:
        object.__setattr__(svc, "config", config)
    assert '<option value="strict" selected>' in html and "No published" not in html
    # only the measures the board's tasks have are offered
    offered = re.findall(
        r'<option value="([a-z0-9_]+)"[^>]*>\1', html.split('id="measure"')[1].split("</select>")[0]
    )
    assert "macro_f1_qald" in offered and "map" not in offered and "mrr" not in offered
    assert len(offered) < len(MEASURES)

"""The experiment, task, system, leaderboard and compare pages through the Flask client.

The app holds experiments run by its own runner (``tests/plugins/experiment_pages.py``). Values
on the pages are checked against independent readings: the runner's summary (stored results
read by ``evaluators``), a re-scoring of the same answers with ``evaluators.scoring.evaluate``,
the significance functions called directly, and the pages' own SPARQL links run at ``/sparql``.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from pyoxigraph import NamedNode, RdfFormat, parse

from evaluators import library
from evaluators.experiment_read import TaskSummary
from evaluators.scoring import evaluate
from evaluators.significance import approximate_randomisation
from evaluators.systems import parse_answer_file
from server.compare import ITERATIONS
from server.result_table import DASH, MAIN_MEASURES, QALD_TYPES, format_value
from tests.plugins.experiment_pages import (
    EXAMPLE_DATASET,
    EXAMPLES,
    PAGES_BASE,
    TINY_TEXTS,
    PagesWorld,
    cell_texts,
    html_tables,
)

HTML = {"Accept": "text/html"}
JSON = {"Accept": "application/json"}
VERSION = f"{PAGES_BASE}/dataset/{EXAMPLE_DATASET}/v1"


def _tasks(world: PagesWorld, experiment_id: str) -> dict[str, TaskSummary]:
    return {t.plan.system: t for t in world.runner.summary(experiment_id).tasks}


def _qa(task: TaskSummary) -> Any:
    return next(r for r in task.results if r.experiment_type == "QA")


def _get(world: PagesWorld, path: str, headers: dict[str, str] | None = None) -> Any:
    return world.app.test_client().get(path, headers=headers or HTML)


def _example_scores(world: PagesWorld, kind: str = "QA") -> dict[str, float]:
    """Re-score the example answers file with the evaluation engine (strict, English)."""
    store = world.services.store
    dataset = library.read_dataset(
        store, library.resolve_version(store, PAGES_BASE, "qabench-example")
    )
    data = (EXAMPLES / "example-answers.json").read_bytes()
    answers = parse_answer_file(data, source="example-answers.json").by_id()
    result = evaluate(dataset, answers, profile="strict", language="en")
    typed = result.get(kind)
    assert typed is not None
    return {q.question_id: q.value("f1") or 0.0 for q in typed.per_question}


# ---------------------------------------------------------------- experiment page


def test_experiment_page_has_a_row_per_task_and_type_with_the_stored_values(
    pages_world: PagesWorld,
) -> None:
    eid = pages_world.published.id
    response = _get(pages_world, f"/experiment/{eid}")
    assert response.status_code == 200 and response.mimetype == "text/html"
    assert "Accept" in response.headers["Vary"]
    assert f'</experiment/{eid}.ttl>; rel="alternate"' in response.headers["Link"]
    html = response.get_data(as_text=True)
    assert f"{PAGES_BASE}/experiment/{eid}" in html  # the citable IRI
    (table,) = html_tables(html, "results")
    body = [cell_texts(row) for row in table[1:]]
    tasks = _tasks(pages_world, eid)
    checked = 0
    for system in ("example-answers", "wrong-answers", "gold"):
        task = tasks[system]
        start = next(n for n, row in enumerate(body) if f"Task {task.plan.number}" in row)
        kinds = [r.experiment_type for r in task.results]
        expected_types = [t for t in QALD_TYPES if t in kinds]
        first = body[start]
        assert first[1:6] == [system, f"{EXAMPLE_DATASET} v1", "en", "strict", "QA"]
        for offset, kind in enumerate(expected_types):
            row = body[start + offset]
            cells = row[6:13] if offset == 0 else row[1:8]
            assert (row[5] if offset == 0 else row[0]) == kind
            result = next(r for r in task.results if r.experiment_type == kind)
            for measure, text in zip(MAIN_MEASURES, cells, strict=True):
                value = next((m for m in result.measures if m.measure == measure), None)
                if value is None:
                    assert text == DASH
                elif value.value is None:
                    assert text.startswith("undefined")
                else:
                    assert text == format_value(measure, value.value)
                checked += 1
        assert first[-1].startswith("finished") and first[13] == str(task.errors)
    assert checked >= 3 * 5 * 7


def test_aborted_task_shows_its_state_message_and_error_count(pages_world: PagesWorld) -> None:
    eid = pages_world.published.id
    task = _tasks(pages_world, eid)["down-service"]
    assert task.status.value == "aborted" and task.message
    html = _get(pages_world, f"/experiment/{eid}").get_data(as_text=True)
    (table,) = html_tables(html, "results")
    row = next(cell_texts(r) for r in table if f"Task {task.plan.number}" in cell_texts(r))
    assert row[1] == "down-service"
    assert task.message in row[6]  # one cell spans the measure columns
    assert row[7] == str(task.errors) == "3"
    assert row[-1].startswith("aborted (-108)")
    assert "NaN" not in html and "?</td>" not in html


def test_undefined_values_read_undefined_with_their_reason(pages_world: PagesWorld) -> None:
    eid = pages_world.published.id
    task = _tasks(pages_world, eid)["wrong-answers"]
    qa = next(r for r in task.results if r.experiment_type == "QA")
    undefined = next(m for m in qa.measures if m.measure == "macro_f1_qald")
    assert undefined.value is None and undefined.undefined_reason
    html = _get(pages_world, f"/experiment/{eid}").get_data(as_text=True)
    (table,) = html_tables(html, "results")
    row = next(r for r in table if f"Task {task.plan.number}" in cell_texts(r))
    text, attrs = row[12]
    assert text.startswith("undefined") and attrs["title"] == undefined.undefined_reason
    assert f'<li id="note-1" value="1">{undefined.undefined_reason}</li>' in html


def _run_link(world: PagesWorld, html: str) -> list[dict[str, dict[str, str]]]:
    """Run the page's "SPARQL query behind this table" at /sparql and return its rows."""
    start = html.index('<p class="reproduce"><a href="') + len('<p class="reproduce"><a href="')
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


def test_experiment_sparql_link_reproduces_the_table(pages_world: PagesWorld) -> None:
    eid = pages_world.published.id
    html = _get(pages_world, f"/experiment/{eid}").get_data(as_text=True)
    rows = _run_link(pages_world, html)
    gold = _tasks(pages_world, eid)["gold"]
    found = {
        (r["type"]["value"].rsplit("#", 1)[-1], r["measure"]["value"].rsplit("#", 1)[-1])
        for r in rows
        if r["task"]["value"] == gold.iri and "value" in r
    }
    assert ("QA", "macroF1") in found and ("C2KB", "microF1") in found
    assert len(found) == sum(1 for r in gold.results for m in r.measures if m.value is not None)


def test_experiment_rdf_forms_are_unchanged(pages_world: PagesWorld) -> None:
    eid = pages_world.published.id
    response = _get(pages_world, f"/experiment/{eid}", {"Accept": "text/turtle"})
    assert response.status_code == 200 and response.mimetype == "text/turtle"
    triples = list(parse(response.data, RdfFormat.TURTLE, base_iri=PAGES_BASE))
    subjects = {t.subject for t in triples}
    assert NamedNode(f"{PAGES_BASE}/experiment/{eid}") in subjects
    assert NamedNode(f"{PAGES_BASE}/task/{eid}/2/obs/QA/macro_f1") in subjects


def test_unknown_and_private_experiments_are_404_and_the_owner_sees_publish(
    pages_world: PagesWorld,
) -> None:
    missing = _get(pages_world, "/experiment/199901010000", JSON)
    assert missing.status_code == 404 and missing.mimetype == "application/problem+json"
    private = pages_world.private
    assert _get(pages_world, f"/experiment/{private.id}").status_code == 404
    owner = _get(
        pages_world,
        f"/experiment/{private.id}",
        {**HTML, "Authorization": f"Bearer {private.token}"},
    )
    assert owner.status_code == 200
    html = owner.get_data(as_text=True)
    assert f'action="/experiments/{private.id}/publish"' in html
    assert 'name="csrf_token"' in html and "not yet: private" in html
    published = _get(
        pages_world,
        f"/experiment/{pages_world.published.id}",
        {**HTML, "Authorization": f"Bearer {private.token}"},
    )
    assert "/publish" not in published.get_data(as_text=True)


def test_a_running_experiment_page_reloads_itself(forms_app: Any) -> None:
    from evaluators.experiment import ExperimentRequest, SystemRequest
    from evaluators.systems import SystemKind
    from server.services import RUNNER_KEY

    runner = forms_app.extensions[RUNNER_KEY]
    queued = runner.submit(
        ExperimentRequest(
            systems=(SystemRequest("gold", SystemKind.BUILT_IN, builtin="gold"),),
            datasets=(EXAMPLE_DATASET,),
            publish=True,
        )
    )
    html = (
        forms_app.test_client().get(f"/experiment/{queued.id}", headers=HTML).get_data(as_text=True)
    )
    assert '<meta http-equiv="refresh" content="3">' in html
    assert "running: 0 of 1 tasks done" in html and "no results yet" in html
    runner.run(queued.id)
    done = (
        forms_app.test_client().get(f"/experiment/{queued.id}", headers=HTML).get_data(as_text=True)
    )
    assert 'http-equiv="refresh"' not in done and ">finished<" in done


# ---------------------------------------------------------------- task page


def test_task_page_lists_every_question_with_the_engines_scores(pages_world: PagesWorld) -> None:
    eid = pages_world.published.id
    task = _tasks(pages_world, eid)["example-answers"]
    expected = _example_scores(pages_world)
    html = _get(pages_world, f"/task/{eid}/{task.plan.number}").get_data(as_text=True)
    (questions,) = html_tables(html, "questions")
    header = cell_texts(questions[0])
    f1 = header.index("F1")
    rows = [cell_texts(r) for r in questions[1:]]
    assert len(rows) == len(expected) == 8
    for row in rows:
        qid = row[1].split()[0]
        assert row[f1] == format_value("f1", expected[qid]), qid
    assert "exact" in html  # matched pairs name their rule
    assert f"{len(expected)} of {len(expected)} questions (QA)" in html


def test_task_page_filters_wrong_questions_and_types_on_the_server(pages_world: PagesWorld) -> None:
    eid = pages_world.published.id
    number = _tasks(pages_world, eid)["example-answers"].plan.number
    wrong = {q for q, f1 in _example_scores(pages_world).items() if f1 < 1.0}
    html = _get(pages_world, f"/task/{eid}/{number}?wrong=1").get_data(as_text=True)
    (questions,) = html_tables(html, "questions")
    shown = {cell_texts(r)[1].split()[0] for r in questions[1:]}
    assert shown == wrong and 0 < len(wrong) < 8
    c2kb = _example_scores(pages_world, "C2KB")
    html = _get(pages_world, f"/task/{eid}/{number}?type=C2KB").get_data(as_text=True)
    assert "Per-question diagnostics, C2KB" in html
    (questions,) = html_tables(html, "questions")
    assert len(questions) - 1 == len(c2kb)
    # (``application/json`` would ask for the task's JSON-LD, which has no filters)
    bad = _get(pages_world, f"/task/{eid}/{number}?type=NOPE")
    assert bad.status_code == 400 and "it has: QA, " in bad.get_data(as_text=True)


def test_task_page_breakdowns_cover_the_datasets_answer_types(pages_world: PagesWorld) -> None:
    eid = pages_world.published.id
    number = _tasks(pages_world, eid)["gold"].plan.number
    store = pages_world.services.store
    dataset = library.read_dataset(
        store, library.resolve_version(store, PAGES_BASE, EXAMPLE_DATASET)
    )
    types = {q.answer_type.value for q in dataset.questions if q.answer_type is not None}
    html = _get(pages_world, f"/task/{eid}/{number}").get_data(as_text=True)
    tables = html_tables(html, "results")
    breakdown = [cell_texts(r) for r in tables[-1][1:]]
    assert {r[1] for r in breakdown if r[0] == "answer type"} == types
    assert all(r[3] == "1.0000" for r in breakdown)  # gold is right everywhere


def test_task_page_shows_markup_in_questions_as_text(pages_world: PagesWorld) -> None:
    html = _get(pages_world, f"/task/{pages_world.tiny.id}/1").get_data(as_text=True)
    assert "<script>window.__xss" not in html
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;Tiny &lt;b&gt;two&lt;/b&gt;?" in html
    assert TINY_TEXTS[0] in html


def test_unknown_and_private_tasks_are_404(pages_world: PagesWorld) -> None:
    eid = pages_world.published.id
    assert _get(pages_world, f"/task/{eid}/99", JSON).status_code == 404
    private = pages_world.private
    assert _get(pages_world, f"/task/{private.id}/1").status_code == 404
    owner = _get(
        pages_world, f"/task/{private.id}/1", {**HTML, "Authorization": f"Bearer {private.token}"}
    )
    assert owner.status_code == 200 and "gold-private" in owner.get_data(as_text=True)


def test_task_page_paginates_a_real_dataset(tmp_path: Any, shared_data: Any) -> None:
    from evaluators.experiment import ExperimentRequest, SystemRequest
    from evaluators.systems import SystemKind
    from server.services import RUNNER_KEY
    from server.task_views import PAGE_SIZE
    from tests.plugins.experiment_pages import make_forms_app
    from tests.plugins.qa_stub_experiments import QALD_FILES

    app = make_forms_app(tmp_path)
    try:
        svc = app.extensions["services"]
        info = library.load_dataset(
            svc.store, PAGES_BASE, shared_data / QALD_FILES["qald-9-test"], name="qald-9-test"
        ).info
        runner = app.extensions[RUNNER_KEY]
        run = runner.submit(
            ExperimentRequest(
                systems=(SystemRequest("gold", SystemKind.BUILT_IN, builtin="gold"),),
                datasets=("qald-9-test",),
                publish=True,
            )
        )
        runner.run(run.id)
        client = app.test_client()
        questions = _qa(runner.summary(run.id).tasks[0]).value("questions")
        assert questions is not None and questions > 2 * PAGE_SIZE and info.questions >= questions
        pages = -(-int(questions) // PAGE_SIZE)
        second = client.get(f"/task/{run.id}/1?page=2", headers=HTML).get_data(as_text=True)
        (table,) = html_tables(second, "questions")
        numbers = [int(cell_texts(r)[0]) for r in table[1:]]
        assert len(numbers) == PAGE_SIZE and numbers == sorted(numbers)
        assert f"page 2 of {pages}" in second
        assert 'rel="prev"' in second and 'rel="next"' in second
        last = client.get(f"/task/{run.id}/1?page=999", headers=HTML).get_data(as_text=True)
        (table,) = html_tables(last, "questions")
        assert len(table) - 1 == questions - (pages - 1) * PAGE_SIZE
        assert 'rel="next"' not in last
    finally:
        app.extensions["services"].close()


# ---------------------------------------------------------------- system page


def test_system_page_lists_the_visible_tasks_of_the_system(pages_world: PagesWorld) -> None:
    html = _get(pages_world, "/system/gold").get_data(as_text=True)
    (table,) = html_tables(html, "results")
    starts = [cell_texts(r)[0] for r in table[1:] if cell_texts(r)[0].startswith("Task")]
    assert sorted(starts) == sorted(
        [f"Task 4 of {pages_world.published.id}", f"Task 1 of {pages_world.tiny.id}"]
    )
    assert _get(pages_world, "/system/gold-private").status_code == 404
    token = {"Authorization": f"Bearer {pages_world.private.token}", **HTML}
    assert _get(pages_world, "/system/gold-private", token).status_code == 200


# ---------------------------------------------------------------- leaderboard


def test_leaderboard_ranks_published_systems_by_macro_then_micro_f1(
    pages_world: PagesWorld,
) -> None:
    token = {"Authorization": f"Bearer {pages_world.private.token}", **HTML}
    response = _get(pages_world, f"/leaderboard?version={VERSION}", token)
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    (table,) = html_tables(html, "results")
    rows = [cell_texts(r) for r in table[1:]]
    tasks = _tasks(pages_world, pages_world.published.id)
    finished = {s: t for s, t in tasks.items() if t.results}
    assert [r[1] for r in rows] == sorted(
        finished,
        key=lambda s: (
            -(_qa(finished[s]).value("macro_f1") or 0.0),
            -(_qa(finished[s]).value("micro_f1") or 0.0),
        ),
    )
    for row in rows:
        qa = _qa(finished[row[1]])
        assert row[2] == format_value("macro_f1", qa.value("macro_f1") or 0.0)
        assert row[3] == format_value("micro_f1", qa.value("micro_f1") or 0.0)
    assert "gold-private" not in html  # private results never count, token or not
    assert html.count("<rect ") == len(rows)
    assert '<svg class="chart" role="img" aria-labelledby="chart-title chart-desc"' in html
    assert '<desc id="chart-desc">3 bars. gold: 1.0000' in html


def test_leaderboard_refuses_unknown_types_and_profiles(pages_world: PagesWorld) -> None:
    for query in ("type=NOPE%20NOPE", "profile=nope"):
        response = _get(pages_world, f"/leaderboard?version={VERSION}&{query}", JSON)
        assert response.status_code == 400, query
    empty = _get(pages_world, f"/leaderboard?version={VERSION}&profile=gerbil")
    assert "No published results" in empty.get_data(as_text=True)
    c2kb = _get(pages_world, f"/leaderboard?version={VERSION}&type=C2KB").get_data(as_text=True)
    assert "C2KB on" in c2kb


# ---------------------------------------------------------------- compare


def test_compare_counts_questions_and_tests_significance(pages_world: PagesWorld) -> None:
    eid = pages_world.published.id
    tasks = _tasks(pages_world, eid)
    a, b = tasks["example-answers"].plan.number, tasks["gold"].plan.number
    html = _get(pages_world, f"/compare?a={eid}/{a}&b={PAGES_BASE}/task/{eid}/{b}").get_data(
        as_text=True
    )
    scores = _example_scores(pages_world)
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
    response = _get(pages_world, f"/compare?a={a}&b={b}", JSON)
    assert response.status_code == 400 and response.mimetype == "application/problem+json"
    detail = response.get_json()["detail"]
    assert "different dataset versions" in detail and "tiny-qa v1" in detail


def test_compare_problems_for_unknown_private_malformed_and_empty_tasks(
    pages_world: PagesWorld,
) -> None:
    eid, private = pages_world.published.id, pages_world.private
    assert _get(pages_world, f"/compare?a={eid}/2&b={eid}/99", JSON).status_code == 404
    assert _get(pages_world, f"/compare?a={eid}/2&b={private.id}/1", JSON).status_code == 404
    owner = {"Authorization": f"Bearer {private.token}", **JSON}
    assert _get(pages_world, f"/compare?a={eid}/2&b={private.id}/1", owner).status_code == 200
    assert _get(pages_world, f"/compare?a=nonsense&b={eid}/2", JSON).status_code == 400
    aborted = _get(pages_world, f"/compare?a={eid}/1&b={eid}/2", JSON)
    assert aborted.status_code == 400 and "per-question" in aborted.get_json()["detail"]
    form = _get(pages_world, "/compare")
    assert form.status_code == 200 and 'name="a"' in form.get_data(as_text=True)


def test_problem_documents_are_json_for_scripts(pages_world: PagesWorld) -> None:
    response = _get(pages_world, "/compare?a=x/1&b=y/1", JSON)
    assert response.status_code == 404
    body = json.loads(response.data)
    assert body["status"] == 404 and body["type"].endswith("#NotFound")


def test_compare_system_and_leaderboard_links_reproduce_their_tables(
    pages_world: PagesWorld,
) -> None:
    eid = pages_world.published.id
    tasks = _tasks(pages_world, eid)
    a, b = tasks["example-answers"].plan.number, tasks["gold"].plan.number
    compare = _get(pages_world, f"/compare?a={eid}/{a}&b={eid}/{b}").get_data(as_text=True)
    assert 'type="application/sparql-results+json"' in compare  # the table as data
    rows = _run_link(pages_world, compare)
    scores = _example_scores(pages_world)
    assert len(rows) == len(scores)
    for row in rows:
        qid = row["question"]["value"].rsplit("/", 1)[-1]
        assert float(row["f1A"]["value"]) == scores[qid] and float(row["f1B"]["value"]) == 1.0
    system = _get(pages_world, "/system/gold").get_data(as_text=True)
    found = {r["task"]["value"] for r in _run_link(pages_world, system)}
    assert found == {tasks["gold"].iri, f"{PAGES_BASE}/task/{pages_world.tiny.id}/1"}
    board = _get(pages_world, f"/leaderboard?version={VERSION}").get_data(as_text=True)
    ranked = {r["label"]["value"] for r in _run_link(pages_world, board)}
    assert ranked == {s for s, t in tasks.items() if t.results}


def test_bioasq_tasks_get_a_table_of_their_own_measures(
    forms_app: Any, shared_data: Any, tmp_path: Any
) -> None:
    from evaluators.experiment import ExperimentRequest, SystemRequest
    from evaluators.systems import SystemKind
    from server.result_table import BIOASQ_TYPES
    from server.services import RUNNER_KEY

    source = next((shared_data / "bioasq").rglob("BioASQ-trainingDataset2b.json"))
    doc = json.loads(source.read_text("utf-8"))
    doc["questions"] = doc["questions"][:20]
    gold = tmp_path / "bioasq-20.json"
    gold.write_text(json.dumps(doc), "utf-8")
    svc = forms_app.extensions["services"]
    library.load_dataset(svc.store, PAGES_BASE, gold, name="bioasq-20")
    runner = forms_app.extensions[RUNNER_KEY]
    run = runner.submit(
        ExperimentRequest(
            systems=(SystemRequest("gold", SystemKind.BUILT_IN, builtin="gold"),),
            datasets=("bioasq-20",),
            profiles=("bioasq",),
            publish=True,
        )
    )
    runner.run(run.id)
    (task,) = runner.summary(run.id).tasks
    html = forms_app.test_client().get(f"/experiment/{run.id}", headers=HTML).get_data(as_text=True)
    assert "BioASQ measures" in html
    (table,) = html_tables(html, "results")  # no QALD table: the task has no QALD types
    header = cell_texts(table[0])
    for label in ("MAP", "GMAP", "Mean F1", "Accuracy", "MRR", "ROUGE-2 F1"):
        assert label in header, label
    rows = [cell_texts(r) for r in table[1:]]
    kinds = [r.experiment_type for r in task.results]
    assert [r[5] if n == 0 else r[0] for n, r in enumerate(rows)] == [
        t for t in BIOASQ_TYPES if t in kinds
    ]
    documents = next(r for r in task.results if r.experiment_type == "documents")
    map_value = documents.value("map")
    assert map_value is not None
    assert rows[0][6 + header[6:].index("MAP")] == format_value("map", map_value)


# ---------------------------------------------------------------- pure parts


@pytest.mark.parametrize(
    "module",
    [
        "server.charts",
        "server.compare",
        "server.experiment_data",
        "server.experiment_form",
        "server.experiment_views",
        "server.result_table",
        "server.task_data",
    ],
)
def test_docstring_examples(module: str) -> None:
    import doctest
    import importlib

    outcome = doctest.testmod(importlib.import_module(module))
    assert outcome.failed == 0 and outcome.attempted >= 1


def _row(task: str, system: str, measure: str, value: float) -> dict[str, str]:
    return {"task": task, "system": system, "measure": measure, "value": str(value)}


def test_best_per_system_ranks_by_macro_then_micro_f1() -> None:
    from server.leaderboard import best_per_system

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
    from server.charts import PLOT_WIDTH, bar_chart

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
    from server.result_table import Footnotes, cell

    notes = Footnotes()
    shown = cell(MeasureValue("macro_f1", value, reason), notes)
    assert (shown.text, shown.undefined) == (text, undefined)
    if undefined:
        assert shown.title == reason and shown.note == 1
        assert notes.listing()[0].reason == reason
        again = cell(MeasureValue("micro_f1", None, reason), notes)
        assert again.note == 1 and len(notes.listing()) == 1  # one footnote per reason
    assert cell(None, notes).text == DASH

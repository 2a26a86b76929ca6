"""The experiment, task and system pages through the Flask client.

The app holds experiments run by its own runner (``tests/plugins/experiment_pages.py``). Values
on the pages are checked against independent readings: the runner's summary (stored results
read by ``evaluators``), a re-scoring of the same answers with ``evaluators.qa.scoring.evaluate``,
and the pages' own SPARQL links run at ``/sparql``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pyoxigraph import NamedNode, RdfFormat, parse

from evaluators.datasets import library
from evaluators.experiments.read import read_experiment, read_task
from evaluators.results import INTERVALS, QA_TYPES, shown_in_tables
from server.pages.tables import DASH, MAIN_MEASURES, format_value
from store import graphs, queries
from tests.plugins.experiment_pages import (
    EXAMPLE_DATASET,
    PAGES_BASE,
    TINY_TEXTS,
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

# ---------------------------------------------------------------- experiment page


def test_experiment_page_has_a_row_per_task_and_type_with_the_stored_values(
    pages_world: PagesWorld,
) -> None:
    eid = pages_world.published.id
    response = get_page(pages_world, f"/experiment/{eid}")
    assert response.status_code == 200 and response.mimetype == "text/html"
    assert "Accept" in response.headers["Vary"]
    assert f'</experiment/{eid}.ttl>; rel="alternate"' in response.headers["Link"]
    html = response.get_data(as_text=True)
    assert f"{PAGES_BASE}/experiment/{eid}" in html  # the citable IRI
    # QA rows first; each task's sub-experiment rows in the (collapsed) second table
    qa_table, sub_table = html_tables(html, "results")[:2]
    body = [cell_texts(row) for row in qa_table[1:]]
    sub_body = [cell_texts(row) for row in sub_table[1:]]
    tasks = tasks_by_system(pages_world, eid)
    checked = hidden = intervals = 0
    for system in ("example-answers", "wrong-answers", "gold"):
        task = tasks[system]
        marker = f"Task {task.plan.number}"
        start = next(n for n, row in enumerate(body) if marker in row)
        sub_start = next(n for n, row in enumerate(sub_body) if marker in row)
        kinds = [r.experiment_type for r in task.results]
        expected_types = [t for t in QA_TYPES if t in kinds]
        first = body[start]
        assert first[1:6] == [system, f"{EXAMPLE_DATASET} v1", "en", "strict", "QA"]
        assert body[start + 1 : start + 2] == [] or marker not in body[start + 1]
        for offset, kind in enumerate(expected_types):
            row = first if offset == 0 else sub_body[sub_start + offset - 1]
            opens = offset in (0, 1)  # the first row of each table carries the task's cells
            cells = row[6:13] if opens else row[1:8]
            assert (row[5] if opens else row[0]) == kind
            result = next(r for r in task.results if r.experiment_type == kind)
            for measure, text in zip(MAIN_MEASURES, cells, strict=True):
                value = next((m for m in result.measures if m.measure == measure), None)
                if value is None or not shown_in_tables(kind, measure):
                    # GERBIL's pages show no Macro F1 QALD on a sub-experiment row
                    assert text == DASH
                    hidden += measure == "macro_f1_qald" and kind in ("AType", "RE2KB")
                elif value.value is None:
                    assert text.startswith("undefined")
                elif kind == "QA" and measure == "macro_f1_qald":
                    # the headline, with its stored 95% interval
                    low, high = (result.value(b) for b in INTERVALS[measure])
                    assert low is not None and high is not None and low <= value.value <= high
                    interval = f"[{format_value(measure, low)}, {format_value(measure, high)}]"
                    assert text == f"{format_value(measure, value.value)} {interval}"
                    intervals += 1
                else:
                    assert text == format_value(measure, value.value)
                checked += 1
        assert first[-1].startswith("finished") and first[13] == str(task.errors)
    assert checked >= 3 * 5 * 7 and hidden >= 3 and intervals >= 2  # one headline is undefined


def test_aborted_task_shows_its_state_message_and_error_count(pages_world: PagesWorld) -> None:
    eid = pages_world.published.id
    task = tasks_by_system(pages_world, eid)["down-service"]
    assert task.status.value == "aborted" and task.message
    html = get_page(pages_world, f"/experiment/{eid}").get_data(as_text=True)
    table = html_tables(html, "results")[0]
    row = next(cell_texts(r) for r in table if f"Task {task.plan.number}" in cell_texts(r))
    assert row[1] == "down-service"
    assert task.message in row[6]  # one cell spans the measure columns
    assert row[7] == str(task.errors) == "3"
    assert row[-1].startswith("aborted (-108)")
    assert "NaN" not in html and "?</td>" not in html


def test_undefined_values_read_undefined_with_their_reason(pages_world: PagesWorld) -> None:
    eid = pages_world.published.id
    task = tasks_by_system(pages_world, eid)["wrong-answers"]
    qa = next(r for r in task.results if r.experiment_type == "QA")
    undefined = next(m for m in qa.measures if m.measure == "macro_f1_qald")
    assert undefined.value is None and undefined.undefined_reason
    html = get_page(pages_world, f"/experiment/{eid}").get_data(as_text=True)
    table = html_tables(html, "results")[0]
    row = next(r for r in table if f"Task {task.plan.number}" in cell_texts(r))
    text, attrs = row[12]
    assert text.startswith("undefined") and attrs["title"] == undefined.undefined_reason
    reason = re.escape(undefined.undefined_reason or "")
    assert re.search(rf'<li id="note-(\d+)" value="\1">{reason}</li>', html)


def test_experiment_sparql_link_reproduces_the_table(pages_world: PagesWorld) -> None:
    eid = pages_world.published.id
    html = get_page(pages_world, f"/experiment/{eid}").get_data(as_text=True)
    rows = run_query_link(pages_world, html)
    gold = tasks_by_system(pages_world, eid)["gold"]
    found = {
        (r["type"]["value"].rsplit("#", 1)[-1], r["measure"]["value"].rsplit("#", 1)[-1])
        for r in rows
        if r["task"]["value"] == gold.iri and "value" in r
    }
    assert ("QA", "macroF1") in found and ("C2KB", "microF1") in found
    assert len(found) == sum(1 for r in gold.results for m in r.measures if m.value is not None)


def test_the_pages_read_the_rows_of_the_linked_query(pages_world: PagesWorld) -> None:
    # aggregate_values (what the pages read) and experiment_table (what they link to) give
    # the same values and reasons, for every task of every experiment of the pages world
    store = pages_world.services.store
    compared = 0
    for eid in (pages_world.published.id, pages_world.private.id):
        graph = graphs.experiment_graph(PAGES_BASE, eid)
        rows = {}
        for name in ("experiment_table", "aggregate_values"):
            found = store.select(queries.load(name), graph=graph)
            keep = ("task", "type", "measure", "value", "reason")
            rows[name] = sorted(tuple(str(r.get(k)) for k in keep) for r in found)
        assert rows["experiment_table"] == rows["aggregate_values"]
        compared += len(rows["aggregate_values"])
    assert compared > 100, compared


def test_experiment_rdf_forms_are_unchanged(pages_world: PagesWorld) -> None:
    eid = pages_world.published.id
    response = get_page(pages_world, f"/experiment/{eid}", {"Accept": "text/turtle"})
    assert response.status_code == 200 and response.mimetype == "text/turtle"
    triples = list(parse(response.data, RdfFormat.TURTLE, base_iri=PAGES_BASE))
    subjects = {t.subject for t in triples}
    assert NamedNode(f"{PAGES_BASE}/experiment/{eid}") in subjects
    assert NamedNode(f"{PAGES_BASE}/task/{eid}/2/obs/QA/macro_f1") in subjects


def test_unknown_and_private_experiments_are_404_and_the_owner_sees_publish(
    pages_world: PagesWorld,
) -> None:
    missing = get_page(pages_world, "/experiment/199901010000", JSON)
    assert missing.status_code == 404 and missing.mimetype == "application/problem+json"
    private = pages_world.private
    assert get_page(pages_world, f"/experiment/{private.id}").status_code == 404
    owner = get_page(
        pages_world,
        f"/experiment/{private.id}",
        {**HTML, "Authorization": f"Bearer {private.token}"},
    )
    assert owner.status_code == 200
    html = owner.get_data(as_text=True)
    assert f'action="/experiments/{private.id}/publish"' in html
    assert 'name="csrf_token"' in html and "not yet: private" in html
    published = get_page(
        pages_world,
        f"/experiment/{pages_world.published.id}",
        {**HTML, "Authorization": f"Bearer {private.token}"},
    )
    assert "/publish" not in published.get_data(as_text=True)


def test_a_running_experiment_page_reloads_itself(forms_app: Any) -> None:
    from evaluators.experiments.runner import ExperimentRequest, SystemRequest
    from evaluators.systems.protocol import SystemKind
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
    task = tasks_by_system(pages_world, eid)["example-answers"]
    expected = example_scores(pages_world)
    html = get_page(pages_world, f"/task/{eid}/{task.plan.number}").get_data(as_text=True)
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
    number = tasks_by_system(pages_world, eid)["example-answers"].plan.number
    wrong = {q for q, f1 in example_scores(pages_world).items() if f1 < 1.0}
    html = get_page(pages_world, f"/task/{eid}/{number}?wrong=1").get_data(as_text=True)
    (questions,) = html_tables(html, "questions")
    shown = {cell_texts(r)[1].split()[0] for r in questions[1:]}
    assert shown == wrong and 0 < len(wrong) < 8
    c2kb = example_scores(pages_world, "C2KB")
    html = get_page(pages_world, f"/task/{eid}/{number}?type=C2KB").get_data(as_text=True)
    assert "Per-question diagnostics, C2KB" in html
    (questions,) = html_tables(html, "questions")
    assert len(questions) - 1 == len(c2kb)
    # (``application/json`` would ask for the task's JSON-LD, which has no filters)
    bad = get_page(pages_world, f"/task/{eid}/{number}?type=NOPE")
    assert bad.status_code == 400 and "it has: QA, " in bad.get_data(as_text=True)


def test_task_page_breakdowns_cover_the_datasets_answer_types(pages_world: PagesWorld) -> None:
    eid = pages_world.published.id
    number = tasks_by_system(pages_world, eid)["gold"].plan.number
    store = pages_world.services.store
    dataset = library.read_dataset(
        store, library.resolve_version(store, PAGES_BASE, EXAMPLE_DATASET)
    )
    types = {q.answer_type.value for q in dataset.questions if q.answer_type is not None}
    html = get_page(pages_world, f"/task/{eid}/{number}").get_data(as_text=True)
    tables = html_tables(html, "results")
    breakdown = [cell_texts(r) for r in tables[-1][1:]]
    assert {r[1] for r in breakdown if r[0] == "answer type"} == types
    assert all(r[3] == "1.0000" for r in breakdown)  # gold is right everywhere


def test_task_page_shows_markup_in_questions_as_text(pages_world: PagesWorld) -> None:
    html = get_page(pages_world, f"/task/{pages_world.tiny.id}/1").get_data(as_text=True)
    assert "<script>window.__xss" not in html
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;Tiny &lt;b&gt;two&lt;/b&gt;?" in html
    assert TINY_TEXTS[0] in html


def test_unknown_and_private_tasks_are_404(pages_world: PagesWorld) -> None:
    eid = pages_world.published.id
    assert get_page(pages_world, f"/task/{eid}/99", JSON).status_code == 404
    private = pages_world.private
    assert get_page(pages_world, f"/task/{private.id}/1").status_code == 404
    owner = get_page(
        pages_world, f"/task/{private.id}/1", {**HTML, "Authorization": f"Bearer {private.token}"}
    )
    assert owner.status_code == 200 and "gold-private" in owner.get_data(as_text=True)


@pytest.mark.slow
def test_task_page_paginates_a_real_dataset(tmp_path: Any, shared_data: Any) -> None:
    from evaluators.experiments.runner import ExperimentRequest, SystemRequest
    from evaluators.systems.protocol import SystemKind
    from server.config import ServerConfig
    from server.services import RUNNER_KEY
    from tests.plugins.experiment_pages import make_forms_app
    from tests.plugins.qa_stub_experiments import QALD_FILES

    page_size = ServerConfig().page_size

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
        questions = qa_result(runner.summary(run.id).tasks[0]).value("questions")
        assert questions is not None and questions > 2 * page_size and info.questions >= questions
        pages = -(-int(questions) // page_size)
        second = client.get(f"/task/{run.id}/1?page=2", headers=HTML).get_data(as_text=True)
        (table,) = html_tables(second, "questions")
        numbers = [int(cell_texts(r)[0]) for r in table[1:]]
        assert len(numbers) == page_size and numbers == sorted(numbers)
        assert f"page 2 of {pages}" in second
        assert 'rel="prev"' in second and 'rel="next"' in second
        last = client.get(f"/task/{run.id}/1?page={pages}", headers=HTML).get_data(as_text=True)
        (table,) = html_tables(last, "questions")
        assert len(table) - 1 == questions - (pages - 1) * page_size
        assert 'rel="next"' not in last
        # A page past the end is not found (never a "page 999 of 4").
        assert client.get(f"/task/{run.id}/1?page={pages + 1}", headers=HTML).status_code == 404
        assert client.get(f"/task/{run.id}/1?page=0", headers=HTML).status_code == 400
    finally:
        app.extensions["services"].close()


# ---------------------------------------------------------------- system page


def test_system_page_lists_the_visible_tasks_of_the_system(pages_world: PagesWorld) -> None:
    html = get_page(pages_world, "/system/gold").get_data(as_text=True)
    (table,) = html_tables(html, "results")
    starts = [cell_texts(r)[0] for r in table[1:] if cell_texts(r)[0].startswith("Task")]
    assert sorted(starts) == sorted(
        [f"Task 4 of {pages_world.published.id}", f"Task 1 of {pages_world.tiny.id}"]
    )
    # one row per task, read from the experiment index: its dataset, the QA values (gold
    # answers: all 1.0, the profile's headline in bold) and its state
    header = cell_texts(table[0])
    rows = {cell_texts(r)[0]: dict(zip(header, cell_texts(r), strict=True)) for r in table[1:]}
    tiny = rows[f"Task 1 of {pages_world.tiny.id}"]
    assert tiny["Dataset"] == "tiny-qa v1" and tiny["State"] == "finished"
    assert tiny["Micro F1"] == tiny["Macro F1 QALD"] == "1.0000" and tiny["Errors"] == "0"
    assert html.count('class="num headline"') == len(rows) == 2
    # its results across datasets come first: one row per dataset version, best value
    (across,) = html_tables(html, "across")
    rows = {cell_texts(r)[0]: cell_texts(r) for r in across[1:]}
    assert set(rows) == {f"{EXAMPLE_DATASET} v1", "tiny-qa v1"}
    assert rows[f"{EXAMPLE_DATASET} v1"][1] == "1.0000" and rows["tiny-qa v1"][3] == "1"
    assert get_page(pages_world, "/system/gold-private").status_code == 404
    token = {"Authorization": f"Bearer {pages_world.private.token}", **HTML}
    assert get_page(pages_world, "/system/gold-private", token).status_code == 200


def test_bioasq_tasks_get_a_table_of_their_own_measures(
    forms_app: Any, shared_data: Any, tmp_path: Any
) -> None:
    from evaluators.experiments.runner import ExperimentRequest, SystemRequest
    from evaluators.results import BIOASQ_TYPES
    from evaluators.systems.protocol import SystemKind
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


# ---------------------------------------------------------------- reports on the experiment page


def test_experiment_page_reports_classic_measures_languages_and_significance(
    forms_app: Any,
) -> None:
    import csv
    import io

    from evaluators.experiments.runner import ExperimentRequest, SystemRequest
    from evaluators.systems.protocol import SystemKind
    from server.services import RUNNER_KEY
    from tests import EXAMPLES

    runner = forms_app.extensions[RUNNER_KEY]
    answers = EXAMPLES / "example-answers.json"
    submission = runner.submit(
        ExperimentRequest(
            systems=(
                SystemRequest("mine", SystemKind.ANSWER_FILE, answers_path=answers),
                SystemRequest("again", SystemKind.ANSWER_FILE, answers_path=answers),
                SystemRequest("gold", SystemKind.BUILT_IN, builtin="gold"),
            ),
            datasets=(EXAMPLE_DATASET,),
            languages=("en", "de"),
            profiles=("qald-classic", "strict"),
            publish=True,
        )
    )
    summary = runner.run(submission.id)
    client = forms_app.test_client()
    html = client.get(f"/experiment/{submission.id}", headers=HTML).get_data(as_text=True)
    # the classic script's values, F-1 Global included
    (classic,) = [t for t in html_tables(html, "results") if "F-1 Global" in cell_texts(t[0])]
    assert "F-1 Global" in cell_texts(classic[0]) and "F1 (processed)" in cell_texts(classic[0])
    mine_classic = next(
        t for t in summary.tasks if t.plan.system == "mine" and t.plan.profile == "qald-classic"
    )
    expected = format_value("global_f1", qa_result(mine_classic).value("global_f1") or 0.0)
    assert any(expected in cell_texts(row) for row in classic[1:])
    # the headline is marked, per profile
    assert 'id="headlines"' in html and "F1 (processed) for the qald-classic profile" in html
    assert 'class="num headline"' in html
    # by language: only the languages asked (the dataset also has es and fr texts)
    language_tables = html_tables(html, "report")
    heads = [cell_texts(t[0]) for t in language_tables]
    assert ["System", "Dataset", "en", "de"] in heads
    assert not any("es" in h or "fr" in h for h in heads)
    assert "Significance" in html and "Friedman" in html and "Holm" in html
    assert "gold (sanity check)" in html

    # the results table as CSV, by Accept and by ?format=
    for response in (
        client.get(f"/experiment/{submission.id}", headers={"Accept": "text/csv"}),
        client.get(f"/experiment/{submission.id}?format=csv"),
    ):
        assert response.status_code == 200 and response.mimetype == "text/csv"
        assert "Accept" in response.headers["Vary"]
        rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
        by_task = {(r["Task"], r["Type"]): r for r in rows}
        for task in summary.tasks:
            qa = qa_result(task)
            row = by_task[(str(task.plan.number), "QA")]
            assert float(row["Macro F1 QALD"]) == qa.value("macro_f1_qald")
            if task.plan.profile == "qald-classic":
                assert float(row["F-1 Global"]) == qa.value("global_f1")
    # the task page's breakdown never shows a language that was not asked
    german = next(t for t in summary.tasks if t.plan.language == "de")
    page = client.get(f"/task/{submission.id}/{german.plan.number}", headers=HTML)
    text = page.get_data(as_text=True)
    assert "<td>language</td><td>de</td>" in text and "<td>language</td><td>en</td>" not in text


def test_a_task_read_alone_is_the_task_of_the_whole_experiment_read(
    pages_world: PagesWorld,
) -> None:
    svc = pages_world.services
    compared = 0
    for submission in (pages_world.published, pages_world.private, pages_world.tiny):
        whole = read_experiment(svc.store, svc.base, submission.id)
        assert whole.tasks
        for task in whole.tasks:
            alone = read_task(svc.store, svc.base, submission.id, task.plan.number)
            assert alone == task
            compared += 1
        assert read_task(svc.store, svc.base, submission.id, 99) is None
    assert compared == 6

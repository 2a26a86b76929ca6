"""The ask page, its background jobs, ``/api/qa`` and stored runs, through the Flask client."""

from __future__ import annotations

import json
import re
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import NamedNode, RdfFormat, parse

from evaluators.formats import parse_bytes, parse_system_response
from evaluators.model import SourceFormat
from server.app import create_app
from store import graphs
from tests.plugins.rag import BASE, rag_server_config
from vocab.project import QAB
from vocab.standard import RDF

ASPIRIN = "Does aspirin reduce recurrent myocardial infarction?"
JSON = {"Accept": "application/json"}


class Ids(HTMLParser):
    """Collects data-pmid attributes of citation links and of snippet list items."""

    def __init__(self) -> None:
        super().__init__()
        self.cited: list[str] = []
        self.snippets: list[str] = []
        self.anchors: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "a" and a.get("class") == "cite":
            self.cited.append(a["data-pmid"] or "")
            self.anchors[a["href"] or ""] = a["data-pmid"] or ""
        if tag == "li" and a.get("data-pmid") and (a.get("id") or "").startswith("snippet-"):
            self.snippets.append(a["data-pmid"] or "")
            self.anchors.setdefault("#" + (a.get("id") or ""), "")


def ids_of(html: str) -> Ids:
    parser = Ids()
    parser.feed(html)
    return parser


def stored_runs(app: Any) -> list[NamedNode]:
    store = app.extensions["services"].store
    g = graphs.rag_graph(BASE)
    return [q.subject for q in store.quads(None, RDF.type, QAB.RagRun, g)]


def test_ask_page_has_the_question_form(rag_client: Any) -> None:
    page = rag_client.get("/ask")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert 'name="question"' in html and 'action="/ask"' in html
    # an anonymous reader is offered what it may run; the others are named with the reason
    assert html.count("<option") == 1 and "extractive (configured)" in html
    assert 'data-generator="openai-http"' in html and "rag.openai_base_url" in html
    assert '<script src="/static/ask.js" defer></script>' in html
    script = rag_client.get("/static/ask.js")
    assert script.status_code == 200 and b"/ask/jobs" in script.get_data()
    script.close()


def test_form_post_answers_with_cited_pmids_from_the_snippet_list(
    rag_client: Any, rag_app: Any
) -> None:
    page = rag_client.post("/ask", data={"question": ASPIRIN})
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    found = ids_of(html)
    assert found.cited and set(found.cited) <= set(found.snippets)
    for anchor, pmid in found.anchors.items():
        if pmid:
            assert anchor.startswith("#snippet-")
    assert 'href="https://pubmed.ncbi.nlm.nih.gov/1000001/"' in html
    assert 'name="query"' in html and "Search again" in html
    (run,) = stored_runs(rag_app)
    assert f'href="{run.value[len(BASE) :]}"' in html


def test_a_factoid_answer_is_shown_as_ranked_candidates_not_as_several_answers(
    rag_client: Any,
) -> None:
    question = "Which drug caused delirium in older adults?"
    run = rag_client.post("/ask", data={"question": question}, headers=JSON).get_json()
    assert run["question_type"] == "factoid" and run["answered"] is True
    names = [entity[0] for entity in run["exact_answer"]]
    assert names and "famotidine" in " ".join(names).lower()
    html = rag_client.post("/ask", data={"question": question}).get_data(as_text=True)
    listed = re.search(r'<ol id="exact-answer">(.*?)</ol>', html, re.S)
    assert listed is not None, "a factoid's candidates are an ordered list"
    assert re.findall(r"<li>(.*?)</li>", listed.group(1)) == names
    reading = re.search(r'<p class="hint" id="exact-reading">([^<]*)</p>', html)
    assert reading is not None
    if len(names) > 1:
        assert reading.group(1) == (
            "Candidates ranked by the evidence, likeliest first; not all of them are answers."
        )
    else:
        assert reading.group(1) == "The one candidate the evidence gives."


def test_form_post_with_json_accept_returns_the_run(rag_client: Any) -> None:
    reply = rag_client.post("/ask", data={"question": ASPIRIN}, headers=JSON)
    assert reply.status_code == 200 and reply.mimetype == "application/json"
    run = reply.get_json()
    assert run["question"] == ASPIRIN and run["query_edited"] is False
    assert run["run"].startswith(BASE + "/rag/run/")
    assert {"expand", "retrieve", "extract", "rerank", "answer", "total"} <= set(run["timings"])


@pytest.mark.parametrize(
    "accept",
    [
        "application/json; charset=utf-8",
        "application/json;q=0.9, text/html;q=0.5",
        "*/*;q=0.1, application/json",
    ],
)
def test_json_with_media_type_parameters_is_json(rag_client: Any, accept: str) -> None:
    # One Accept parser: parameters other than q never hide the media type.
    reply = rag_client.post("/ask", data={"question": ASPIRIN}, headers={"Accept": accept})
    assert reply.status_code == 200 and reply.mimetype == "application/json"
    problem = rag_client.post("/ask", data={"question": " "}, headers={"Accept": accept})
    assert problem.status_code == 400 and problem.mimetype == "application/problem+json"


@pytest.mark.parametrize(
    ("query", "shown", "edited"),
    [("clopidogrel", "aspirin", True), ("aspirin", "aspirin", False), ("", "aspirin", False)],
)
def test_search_again_records_whether_the_query_was_edited(
    rag_client: Any, query: str, shown: str, edited: bool
) -> None:
    form = {"question": ASPIRIN, "query": query, "shown_query": shown}
    run = rag_client.post("/ask", data=form, headers=JSON).get_json()
    assert run["query_edited"] is edited
    expected = query or "aspirin reduce recurrent myocardial infarction"
    assert run["expanded_query"] == expected


@pytest.mark.parametrize(
    ("form", "status", "type_", "detail"),
    [
        ({"question": "  "}, 400, "InvalidQuestion", "the question is empty"),
        ({"question": "x" * 2001}, 400, "InvalidQuestion", "at most 2000"),
        ({"question": ASPIRIN, "query": "aspirin AND ("}, 400, "MalformedQuery", "unclosed"),
        ({"question": ASPIRIN, "generator": "gpt-9"}, 400, "BadRequest", "Unknown generator"),
    ],
)
def test_bad_input_is_a_problem_in_json_and_a_message_on_the_page(
    rag_client: Any, form: dict[str, str], status: int, type_: str, detail: str
) -> None:
    problem = rag_client.post("/ask", data=form, headers=JSON)
    assert problem.status_code == status
    assert problem.mimetype == "application/problem+json"
    body = problem.get_json()
    assert body["type"].endswith("#" + type_) and detail in body["detail"]
    page = rag_client.post("/ask", data=form, headers={"Accept": "text/html"})
    assert page.status_code == status
    html = page.get_data(as_text=True)
    assert 'class="problem"' in html or detail in html


def test_malformed_query_problem_names_the_column(rag_client: Any) -> None:
    body = rag_client.post(
        "/ask", data={"question": ASPIRIN, "query": "aspirin AND ("}, headers=JSON
    ).get_json()
    assert body["column"] == 13 and body["query"] == "aspirin AND ("


def test_missing_index_is_service_unavailable(tmp_path: Path) -> None:
    app = create_app(rag_server_config(tmp_path, tmp_path / "no-index"))
    try:
        reply = app.test_client().post("/ask", data={"question": ASPIRIN}, headers=JSON)
        assert reply.status_code == 503
        body = reply.get_json()
        assert body["type"].endswith("#RagUnavailable") and "qabench index build" in body["detail"]
        qa = app.test_client().post("/api/qa", data={"query": ASPIRIN, "lang": "en"})
        assert qa.status_code == 503
    finally:
        app.extensions["services"].close()


def wait_job(client: Any, url: str) -> dict[str, Any]:
    end = time.monotonic() + 30
    while time.monotonic() < end:
        body: dict[str, Any] = client.get(url).get_json()
        if body["state"] in ("done", "failed"):
            return body
        time.sleep(0.02)
    raise AssertionError("the job did not finish")


def test_background_job_reports_stages_and_the_rendered_result(rag_client: Any) -> None:
    started = rag_client.post("/ask/jobs", data={"question": ASPIRIN}, headers=JSON)
    assert started.status_code == 202
    url = started.get_json()["progress"]
    assert started.headers["Location"] == url
    body = wait_job(rag_client, url)
    assert body["state"] == "done"
    assert [s["stage"] for s in body["stages"]] == [
        "expand",
        "retrieve",
        "extract",
        "rerank",
        "answer",
    ]
    assert all(s["state"] == "done" and s["millis"] is not None for s in body["stages"])
    found = ids_of(body["html"])
    assert found.cited and set(found.cited) <= set(found.snippets)
    assert body["run_href"].startswith("/rag/run/") and body["run"].endswith(body["run_href"])


def test_background_job_refuses_bad_questions_at_once(rag_client: Any) -> None:
    reply = rag_client.post("/ask/jobs", data={"question": ""}, headers=JSON)
    assert reply.status_code == 400 and reply.get_json()["type"].endswith("#InvalidQuestion")


def test_background_job_with_a_malformed_query_fails_with_a_problem(rag_client: Any) -> None:
    started = rag_client.post(
        "/ask/jobs", data={"question": ASPIRIN, "query": "NOT lung"}, headers=JSON
    )
    body = wait_job(rag_client, started.get_json()["progress"])
    assert body["state"] == "failed"
    assert body["problem"]["status"] == 400 and "only excludes" in body["problem"]["detail"]


def test_unknown_job_is_not_found(rag_client: Any) -> None:
    reply = rag_client.get("/ask/jobs/nope", headers=JSON)
    assert reply.status_code == 404 and reply.mimetype == "application/problem+json"


def test_stored_run_is_a_linked_data_resource(rag_client: Any) -> None:
    run = rag_client.post("/ask", data={"question": ASPIRIN}, headers=JSON).get_json()
    path = run["run"][len(BASE) :]
    turtle = rag_client.get(path, headers={"Accept": "text/turtle"})
    assert turtle.status_code == 200 and turtle.mimetype == "text/turtle"
    assert "Accept" in turtle.headers["Vary"]
    quads = list(parse(turtle.get_data(), RdfFormat.TURTLE, base_iri=BASE))
    subjects = {q.subject for q in quads if q.predicate == RDF.type and q.object == QAB.RagRun}
    assert subjects == {NamedNode(run["run"])}
    html = rag_client.get(path, headers={"Accept": "text/html"}).get_data(as_text=True)
    found = ids_of(html)
    assert found.cited and set(found.cited) <= set(found.snippets)
    assert ASPIRIN in html
    jsonld = rag_client.get(path + ".jsonld")
    assert jsonld.status_code == 200 and json.loads(jsonld.get_data())


def test_api_qa_speaks_the_gerbil_protocol(rag_client: Any, rag_app: Any) -> None:
    reply = rag_client.post("/api/qa", data={"query": ASPIRIN, "lang": "en"})
    assert reply.status_code == 200 and reply.mimetype == "application/json"
    answered = parse_system_response(reply.get_data(), source="api/qa")
    assert answered.answers is not None and answered.answers[0].boolean is True
    assert answered.text("en") == ASPIRIN
    run = re.fullmatch(r"<([^>]+)>; rel=\"describedby\"", reply.headers["Link"])
    assert run is not None and NamedNode(run.group(1)) in stored_runs(rag_app)


@pytest.mark.parametrize(
    ("question", "kind", "check"),
    [
        ("Which drug caused delirium in older adults?", "factoid", "famotidine"),
        ("What is the role of dexrazoxane in anthracycline cardiotoxicity?", None, "Dexrazoxane"),
    ],
)
def test_api_qa_returns_literals_for_other_questions(
    rag_client: Any, question: str, kind: str | None, check: str
) -> None:
    form = {"query": question, "lang": "en", "id": "q7", **({"type": kind} if kind else {})}
    reply = rag_client.post("/api/qa", data=form)
    answered = parse_system_response(reply.get_data(), source="api/qa")
    assert answered.id == "q7"
    values = [v.value for v in answered.answers[0].values] if answered.answers else []
    assert values and any(check in v for v in values)


@pytest.mark.parametrize("how", ["query", "accept"])
def test_api_qa_answers_bioasq_json_on_request(rag_client: Any, how: str) -> None:
    form = {"query": "Which drug caused delirium in older adults?", "type": "factoid", "id": "b1"}
    if how == "query":
        reply = rag_client.post("/api/qa?format=bioasq", data=form)
    else:
        reply = rag_client.post(
            "/api/qa", data=form, headers={"Accept": "application/vnd.bioasq+json"}
        )
    assert reply.status_code == 200 and reply.mimetype == "application/vnd.bioasq+json"
    parsed = parse_bytes(reply.get_data(), source="bioasq")
    assert parsed.format is SourceFormat.BIOASQ
    (question,) = parsed.questions
    assert question.id == "b1" and question.bioasq is not None
    assert question.bioasq.question_type == "factoid"
    assert question.bioasq.documents[0] == "http://www.ncbi.nlm.nih.gov/pubmed/1000005"
    assert question.bioasq.snippets and question.bioasq.entities and question.bioasq.ideal_answers


def test_api_qa_problems(rag_client: Any) -> None:
    empty = rag_client.post("/api/qa", data={"query": "", "lang": "en"})
    assert empty.status_code == 400 and empty.get_json()["type"].endswith("#InvalidQuestion")
    get = rag_client.get("/api/qa")
    assert get.status_code == 405 and "POST" in get.headers["Allow"]


@pytest.mark.parametrize("lang", ["en us", "<script>", "x" * 20, "e"])
def test_api_qa_refuses_a_malformed_language_before_running(
    rag_client: Any, rag_app: Any, lang: str
) -> None:
    svc = rag_app.extensions["services"]
    before = svc.generation
    reply = rag_client.post("/api/qa", data={"query": ASPIRIN, "lang": lang})
    assert reply.status_code == 400 and "language tag" in reply.get_json()["detail"]
    assert svc.generation == before  # nothing ran, nothing was stored


def test_endpoint_down_still_answers_and_says_so(
    tmp_path: Path, rag_index_dir: Path, refused_url: str
) -> None:
    config = rag_server_config(
        tmp_path,
        rag_index_dir,
        generator="openai-http",
        openai_base_url=refused_url,
        openai_model="m",
        generator_timeout_seconds=2.0,
    )
    app = create_app(config)
    try:
        client = app.test_client()
        page = client.post("/ask", data={"question": ASPIRIN}).get_data(as_text=True)
        assert "query expansion failed: the model did not answer" in page
        assert "is the server running" in page
        found = ids_of(page)
        assert found.cited and set(found.cited) <= set(found.snippets)
        run = client.post("/ask", data={"question": ASPIRIN}, headers=JSON).get_json()
        assert run["generator"]["name"] == "openai-http"
        assert any("cited answer: the model did not answer" in w for w in run["warnings"])
    finally:
        app.extensions["rag"].close()
        app.extensions["services"].close()


def test_job_with_an_unconfigured_endpoint_fails_with_service_unavailable(
    rag_client: Any, rag_app: Any
) -> None:
    # openai-http is a heavy generator: the submit token opens it.
    token = rag_app.extensions["form_secrets"].submit_token
    started = rag_client.post(
        "/ask/jobs",
        data={"question": ASPIRIN, "generator": "openai-http"},
        headers={**JSON, "Authorization": f"Bearer {token}"},
    )
    assert started.status_code == 202
    body = wait_job(rag_client, started.get_json()["progress"])
    assert body["state"] == "failed" and body["problem"]["status"] == 503
    assert "rag.openai_base_url" in body["problem"]["detail"]


def test_question_in_the_address_fills_the_box_without_running_it(client) -> None:  # type: ignore[no-untyped-def]
    page = client.get("/ask?question=Does+aspirin+<b>help</b>%3F", headers={"Accept": "text/html"})
    assert page.status_code == 200
    assert b"Does aspirin &lt;b&gt;help&lt;/b&gt;?" in page.data
    assert b"Answer with citations" not in page.data

"""The TEXT2SPARQL ask protocol against a real loopback endpoint that fails on purpose.

The 2026 client tries each question once more after a timeout, a connection error or an error
status, ``retries`` times, ``retry_sleep`` seconds apart, logs every retry, and skips the
question when the retries are used up; a body that is not an answer is not retried. The
timings are configurable, so the tests wait milliseconds, not the challenge's 15 s.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from evaluators.errors import SystemCallError
from evaluators.experiments.task import AskSettings, ask_questions
from evaluators.model import Dataset, Question, QuestionText, SourceFormat, Text2SparqlQuestion
from evaluators.systems.protocol import RequestGate
from evaluators.systems.text2sparql import AskProtocol, Text2SparqlSystem
from evaluators.systems.webservice import RequestPolicy

QUERY = "SELECT ?x WHERE { ?x a <http://ex.org/C> }"


class FailingEndpoint:
    """A TEXT2SPARQL API answering per question text from a script of failures, then a query.

    ``script[text]`` lists what the next requests for that question get: ``"503"``/``"500"``
    (that status), ``"hang"`` (no answer for ``hang_seconds``), ``"junk"`` (a body that is not
    JSON); once the script is used up, a proper answer.
    """

    def __init__(self, script: dict[str, list[str]], hang_seconds: float = 1.0) -> None:
        self.script = {k: list(v) for k, v in script.items()}
        self.requests: list[str] = []
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                question = parse_qs(urlsplit(self.path).query).get("question", [""])[0]
                with lock:
                    outer.requests.append(question)
                    steps = outer.script.get(question, [])
                    step = steps.pop(0) if steps else "ok"
                if step == "hang":
                    time.sleep(hang_seconds)
                    return
                if step in ("500", "503"):
                    self.send_response(int(step))
                    self.end_headers()
                    return
                body = (
                    b"<html>oops</html>"
                    if step == "junk"
                    else json.dumps({"dataset": "d", "question": question, "query": QUERY}).encode()
                )
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint() -> Iterator[FailingEndpoint]:
    made = FailingEndpoint(
        {"Q1?": ["503", "500"], "Q2?": ["500"] * 9, "Q3?": ["hang"], "Q4?": ["junk"]},
        hang_seconds=1.0,
    )
    yield made
    made.close()


def _question(n: int) -> Question:
    parts = Text2SparqlQuestion("https://ex.org/c/", "ex")
    return Question(f"ex:{n}-en", (QuestionText("en", f"Q{n}?"),), text2sparql=parts)


PROTOCOL = AskProtocol(timeout_seconds=0.3, retries=3, retry_sleep_seconds=0.01)


def test_errors_are_retried_and_logged_in_the_clients_words(endpoint: FailingEndpoint) -> None:
    system = Text2SparqlSystem(endpoint.url, RequestPolicy(), PROTOCOL)
    answer = system.answer(_question(1), "en")
    assert answer.sparql == QUERY
    assert endpoint.requests.count("Q1?") == 3  # 503, 500, then the answer
    assert system.retries_of("ex:1-en") == (
        "ex:1-en | HTTP 503",
        "ex:1-en | Retrying (1/3) after 0.01 seconds...",
        "ex:1-en | HTTP 500",
        "ex:1-en | Retrying (2/3) after 0.01 seconds...",
    )
    system.close()


def test_used_up_retries_skip_the_question(endpoint: FailingEndpoint) -> None:
    system = Text2SparqlSystem(endpoint.url, RequestPolicy(), PROTOCOL)
    with pytest.raises(SystemCallError, match="HTTP 500"):
        system.answer(_question(2), "en")
    assert endpoint.requests.count("Q2?") == 4  # the first attempt and 3 retries
    log = system.retries_of("ex:2-en")
    assert len(log) == 8 and log[-1].endswith(
        "Maximum number of retries reached. Skipping question."
    )


def test_a_timeout_is_retried_and_a_non_answer_is_not(endpoint: FailingEndpoint) -> None:
    system = Text2SparqlSystem(endpoint.url, RequestPolicy(), PROTOCOL)
    assert system.answer(_question(3), "en").sparql == QUERY  # hung once past 0.3 s, then fine
    assert endpoint.requests.count("Q3?") == 2 and "within 0.3 s" in system.retries_of("ex:3-en")[0]
    with pytest.raises(SystemCallError, match="not JSON"):
        system.answer(_question(4), "en")
    assert endpoint.requests.count("Q4?") == 1 and system.retries_of("ex:4-en") == ()


def test_asking_keeps_each_questions_retry_log_with_its_reply(endpoint: FailingEndpoint) -> None:
    system = Text2SparqlSystem(endpoint.url, RequestPolicy(), PROTOCOL)
    dataset = Dataset(SourceFormat.TEXT2SPARQL, tuple(_question(n) for n in (1, 2, 4)))
    settings = AskSettings(language="en", error_tolerance=1.0, concurrency=2, timed=False)
    replies = ask_questions(dataset, system, RequestGate(2), settings).replies
    assert len(replies["ex:1-en"].retries) == 4 and replies["ex:1-en"].answered
    assert replies["ex:2-en"].error is not None and len(replies["ex:2-en"].retries) == 8
    assert replies["ex:4-en"].retries == () and replies["ex:4-en"].error is not None

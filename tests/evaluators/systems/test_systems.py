"""QA systems: the GERBIL QA web-service adapter against a real loopback service, answer files,
the built-in registry, URL sanitising and the request gate."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from pyoxigraph import Literal, NamedNode

from evaluators.errors import (
    AnswerFileError,
    AnswerFileMismatchError,
    SystemCallError,
    UnknownSystemError,
)
from evaluators.formats import parse_file
from evaluators.model import AnswerSet, Dataset, Question, QuestionText, SourceFormat
from evaluators.systems.answer_files import answer_file_system
from evaluators.systems.protocol import RequestGate, check_service_url, public_url
from evaluators.systems.registry import GoldSystem, SystemRegistry, builtin_registry
from evaluators.systems.webservice import RequestPolicy, WebServiceSystem, _retry_after
from tests.plugins.qa_stub import FAULTS, Reply, ok

TIMEOUT = 0.6


def _question(qid: str, text: str, *values: str) -> Question:
    answers = (AnswerSet(values=tuple(NamedNode(v) for v in values), variables=("uri",)),)
    return Question(id=qid, texts=(QuestionText("en", text),), answers=answers)


@pytest.fixture(autouse=True)
def _close_systems() -> Iterator[None]:
    yield
    for system in _OPEN:
        system.close()
    _OPEN.clear()


_OPEN: list[WebServiceSystem] = []


def _system(url: str, **policy: float) -> WebServiceSystem:
    settings = {"timeout_seconds": TIMEOUT, "retries": 1, "max_response_bytes": 1_000_000}
    settings.update(policy)
    system = WebServiceSystem(url, RequestPolicy(**settings))  # type: ignore[arg-type]
    _OPEN.append(system)
    return system


# ------------------------------------------------------------------------------ protocol


def test_request_is_a_url_encoded_form_post_with_json_accept(qa_stubs) -> None:
    stub = qa_stubs(lambda text, lang: ok(None))
    text = "Who wrote 'A & B = C' + 100% of \"it\"?"
    system = _system(stub.url)
    system.answer(_question("7", text), "en")
    [request] = stub.requests
    assert request.content_type.startswith("application/x-www-form-urlencoded")
    assert request.accept == "application/json"
    # the raw body decodes back to exactly two fields with the exact text (GERBIL sends it raw)
    assert parse_qs(request.raw_body.decode("ascii"), strict_parsing=True) == {
        "query": [text],
        "lang": ["en"],
    }
    assert b"&" not in request.raw_body.split(b"&", 1)[0]


def test_reply_answers_are_returned_under_the_asked_id(qa_stubs) -> None:
    gold = _question("42", "Capital of France?", "http://dbpedia.org/resource/Paris")
    other = Question(id="99", answers=gold.answers)
    stub = qa_stubs(lambda text, lang: ok(other))
    reply = _system(stub.url).answer(gold, "en")
    assert reply.id == "42"
    assert reply.answers is not None
    assert reply.answers[0].values == (NamedNode("http://dbpedia.org/resource/Paris"),)


def test_boolean_and_literal_answers_survive_the_round_trip(qa_stubs) -> None:
    asked = Question(
        id="3",
        texts=(QuestionText("de", "Ist das so?"),),
        answers=(
            AnswerSet(boolean=True),
            AnswerSet(
                values=(
                    Literal("1.5", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#decimal")),
                ),
                variables=("n",),
            ),
        ),
    )
    stub = qa_stubs(lambda text, lang: ok(asked))
    reply = _system(stub.url).answer(asked, "de")
    assert stub.requests[0].lang == "de"
    assert stub.requests[0].query == "Ist das so?"
    assert reply.answers is not None
    assert reply.answers[0].boolean is True
    assert reply.answers[1].values == asked.answers[1].values  # type: ignore[index]


# ------------------------------------------------------------------------------ faults

FAULT_KINDS = {
    "timeout": "timeout",
    "http-500": "http-status",
    "close": "connection",
    "invalid-json": "invalid-response",
    "wrong-shape": "invalid-response",
    "huge-body": "too-large",
    "slow": "too-slow",
}


def test_every_fault_of_the_stub_is_covered() -> None:
    assert set(FAULT_KINDS) == set(FAULTS)
    assert len(FAULT_KINDS) == 7


@pytest.mark.parametrize("fault", sorted(FAULT_KINDS))
def test_fault_raises_one_system_call_error_within_the_time_limit(qa_stubs, fault) -> None:
    stub = qa_stubs(lambda text, lang: FAULTS[fault](TIMEOUT))
    system = _system(stub.url, max_response_bytes=10_000_000)
    # Each fault lasts several time limits and then ends in an answer (a hang, a trickled
    # body): the kind of error shows the limit cut it, without timing the call.
    with pytest.raises(SystemCallError) as caught:
        system.answer(_question("1", "q?"), "en")
    assert caught.value.kind == FAULT_KINDS[fault], str(caught.value)
    # nothing is retried after a request reached the service
    assert len(stub.requests) == 1


def test_declared_oversized_body_is_refused_before_reading(qa_stubs) -> None:
    stub = qa_stubs(lambda text, lang: Reply(body=b"x" * 5000))
    with pytest.raises(SystemCallError, match="declares 5000 bytes") as caught:
        _system(stub.url, max_response_bytes=1000).answer(_question("1", "q"), "en")
    assert caught.value.kind == "too-large"


@pytest.mark.parametrize("status", [429, 503])
def test_rate_limited_request_is_retried_after_retry_after(qa_stubs, status) -> None:
    calls: list[int] = []

    def behaviour(text: str, lang: str) -> Reply:
        calls.append(1)
        if len(calls) == 1:
            return Reply(kind="status", status=status, headers=(("Retry-After", "0"),))
        return ok(_question("1", "q", "http://x/a"))

    stub = qa_stubs(behaviour)
    reply = _system(stub.url, retries=1).answer(_question("1", "q"), "en")
    assert len(stub.requests) == 2
    assert reply.answers is not None and reply.answers[0].values == (NamedNode("http://x/a"),)


def test_rate_limit_without_retries_left_is_an_error(qa_stubs) -> None:
    stub = qa_stubs(
        lambda text, lang: Reply(kind="status", status=429, headers=(("Retry-After", "0"),))
    )
    with pytest.raises(SystemCallError, match="HTTP 429"):
        _system(stub.url, retries=2).answer(_question("1", "q"), "en")
    assert len(stub.requests) == 3


def test_retry_after_longer_than_the_timeout_fails_at_once(qa_stubs) -> None:
    stub = qa_stubs(
        lambda text, lang: Reply(kind="status", status=503, headers=(("Retry-After", "120"),))
    )
    # at once: no wait, and no second request (waiting 120 s first would end in one)
    with pytest.raises(SystemCallError, match="Retry-After 120 s"):
        _system(stub.url, retries=3).answer(_question("1", "q"), "en")
    assert len(stub.requests) == 1


def test_refused_connection_is_retried_then_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sleeps: list[float] = []
    system = WebServiceSystem(
        f"http://127.0.0.1:{port}/gerbil",
        RequestPolicy(timeout_seconds=5, retries=2),
        sleep=sleeps.append,
    )
    _OPEN.append(system)
    with pytest.raises(SystemCallError) as caught:
        system.answer(_question("1", "q"), "en")
    assert caught.value.kind == "connection"
    assert len(sleeps) == 2  # two retries, each after a short back-off


def test_retry_after_http_date_is_understood() -> None:
    later = datetime.now(UTC) + timedelta(seconds=30)
    seconds = _retry_after(format_datetime(later, usegmt=True))
    assert seconds is not None and 25 < seconds <= 30
    assert _retry_after("soon") is None


# ------------------------------------------------------------------------------ URLs


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://qa.example.org/gerbil", "http://qa.example.org/gerbil"),
        (
            "https://bob:secret@qa.example.org:8443/a?lang=en",
            "https://qa.example.org:8443/a?lang=en",
        ),
        ("http://h/x?api_key=1&token=2&Password=3&x=4", "http://h/x?x=4"),
        ("http://h/x?access_token=a&sig=b#frag", "http://h/x"),
        ("http://[::1]:8080/gerbil?auth=z", "http://[::1]:8080/gerbil"),
    ],
)
def test_public_url_keeps_no_secrets(url: str, expected: str) -> None:
    assert public_url(url) == expected


@pytest.mark.parametrize(
    "url", ["ftp://h/x", "localhost:8080/gerbil", "", "http://", "http://h:99999/"]
)
def test_service_url_must_be_absolute_http(url: str) -> None:
    with pytest.raises(UnknownSystemError):
        check_service_url(url)


# ------------------------------------------------------------------------------ answer files


@pytest.fixture
def gold() -> Dataset:
    return Dataset(
        format=SourceFormat.QALD_JSON,
        questions=tuple(_question(str(i), f"question {i}?", f"http://x/{i}") for i in range(1, 5)),
    )


def _answers_json(entries: list[tuple[str, list[str]]]) -> bytes:
    questions = [
        {
            "id": qid,
            "question": [{"language": "en", "string": "?"}],
            "answers": [
                {
                    "head": {"vars": ["uri"]},
                    "results": {"bindings": [{"uri": {"type": "uri", "value": v}} for v in values]},
                }
            ],
        }
        for qid, values in entries
    ]
    return json.dumps({"questions": questions}).encode()


def test_answer_file_replays_answers_by_id(gold: Dataset) -> None:
    data = _answers_json([("1", ["http://x/1"]), ("3", ["http://x/wrong"])])
    system = answer_file_system(data, source="a.json", gold=gold)
    by_id = {q.id: q for q in gold.questions}
    assert system.answer(by_id["1"], "en").answers[0].values == (NamedNode("http://x/1"),)  # type: ignore[index]
    assert system.answer(by_id["3"], "en").answers[0].values == (NamedNode("http://x/wrong"),)  # type: ignore[index]
    # a question the file does not contain has no answer at all (not processed)
    assert system.answer(by_id["2"], "en") is None


def test_answer_file_with_duplicated_ids_is_refused_and_unknown_ids_are_ignored(
    gold: Dataset,
) -> None:
    data = _answers_json([("1", []), ("1", []), ("17", []), ("x9", [])])
    with pytest.raises(AnswerFileMismatchError) as caught:
        answer_file_system(data, source="bad.json", gold=gold)
    assert caught.value.unknown_ids == () and caught.value.duplicate_ids == ("1",)
    with pytest.raises(AnswerFileMismatchError) as caught:
        answer_file_system(data, source="bad.json", gold=gold, strict_ids=True)
    assert caught.value.unknown_ids == ("17", "x9")
    assert caught.value.duplicate_ids == ("1",)
    assert "'17'" in str(caught.value) and "bad.json" in str(caught.value)
    # GERBIL QA ignored the entries of an uploaded file that match no gold question
    data = _answers_json([("1", ["http://x/1"]), ("17", ["http://x/17"]), ("x9", [])])
    system = answer_file_system(data, source="extra.json", gold=gold)
    assert system.ignored == ("17", "x9")
    by_id = {q.id: q for q in gold.questions}
    assert system.answer(by_id["1"], "en") is not None and system.answer(by_id["2"], "en") is None
    with pytest.raises(AnswerFileMismatchError, match="2 id"):
        answer_file_system(data, source="extra.json", gold=gold, strict_ids=True)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'[{"_id": "1", "corrected_question": "q", "sparql_query": "ASK {}"}]', "lcquad"),
        (b'{"questions": [', "cannot be read"),
        (b"<dataset><question id='1'><string lang='en'>q</string></question>", "cannot be read"),
    ],
)
def test_answer_file_in_a_wrong_format_is_refused(
    gold: Dataset, content: bytes, message: str
) -> None:
    with pytest.raises(AnswerFileError, match=message):
        answer_file_system(content, source="f", gold=gold)


def test_real_qald_answer_file_matches_its_dataset(shared_data: Path) -> None:
    gold = parse_file(shared_data / "qald/ag-sc_QALD/8/data/qald-8-test-multilingual.json")
    data = (shared_data / "qald/ag-sc_QALD/8/data/qald-8-test-multilingual.json").read_bytes()
    system = answer_file_system(data, source="qald-8-test", gold=gold)
    answered = [system.answer(q, "en") for q in gold.questions]
    assert len(answered) == 41
    assert all(a.answers == q.answers for a, q in zip(answered, gold.questions, strict=True))


# ------------------------------------------------------------------------------ built-ins


def test_builtin_registry_has_gold_and_builds_lazily() -> None:
    registry = builtin_registry()
    assert registry.names() == ("gold",)
    built: list[str] = []

    def factory() -> GoldSystem:
        built.append("x")
        return GoldSystem()

    registry.register("echo", factory, description="test", concurrency=2)
    assert built == []
    assert registry.info("echo").concurrency == 2
    system = registry.create("echo")
    assert built == ["x"]
    question = _question("5", "q", "http://x/5")
    assert system.answer(question, "en") == question


def test_registry_refuses_duplicates_and_names_known_systems() -> None:
    registry = builtin_registry()
    with pytest.raises(ValueError, match="already registered"):
        registry.register("gold", GoldSystem)
    with pytest.raises(UnknownSystemError, match="registered: gold"):
        registry.create("rag")
    with pytest.raises(ValueError, match="concurrency"):
        SystemRegistry().register("x", GoldSystem, concurrency=0)


# ------------------------------------------------------------------------------ the gate


def test_gate_bounds_concurrent_calls() -> None:
    gate = RequestGate(3)
    active = 0
    peak = 0
    lock = threading.Lock()

    def work() -> None:
        nonlocal active, peak
        with gate.slot():
            with lock:
                active += 1
                peak = max(peak, active)
            time.sleep(0.02)
            with lock:
                active -= 1

    threads = [threading.Thread(target=work) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak == 3


def test_gate_keeps_the_minimum_interval_between_starts() -> None:
    now = [100.0]
    starts: list[float] = []

    def sleep(seconds: float) -> None:
        now[0] += seconds

    gate = RequestGate(4, min_interval_seconds=0.05, clock=lambda: now[0], sleep=sleep)
    for work in (0.0, 0.01, 0.2, 0.0):
        with gate.slot():
            starts.append(now[0])
            now[0] += work
    assert starts == pytest.approx([100.0, 100.05, 100.1, 100.3])


def test_gate_spaces_threaded_callers() -> None:
    gate = RequestGate(4, min_interval_seconds=0.03)
    starts: list[float] = []
    lock = threading.Lock()

    def work() -> None:
        with gate.slot(), lock:
            starts.append(time.monotonic())

    threads = [threading.Thread(target=work) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    starts.sort()
    # four gaps of at least the interval (minus scheduling noise) add up to at least 4 intervals
    assert len(starts) == 5
    assert starts[-1] - starts[0] >= 4 * 0.03 - 0.005


@pytest.mark.parametrize(
    ("body", "quoted"),
    [
        (b"ami-id\nhostname\nAKIA-SECRET", False),
        (b'{"token": "AKIA-SECRET"}', False),
        (b'[1, "AKIA-SECRET"]', False),
        (b"<html>AKIA-SECRET</html>", False),
        (b'{"questions": [{"id": "1", "answers": "AKIA-SECRET"}]}', True),
    ],
)
def test_only_a_qald_shaped_body_is_quoted_in_the_error(
    qa_stubs, body: bytes, quoted: bool
) -> None:  # type: ignore[no-untyped-def]
    # Error messages end up on public task pages: a body that is not an answer to the
    # question (e.g. what an internal URL serves) must not be echoed there.
    stub = qa_stubs(lambda text, lang: Reply(body=body))
    with pytest.raises(SystemCallError) as caught:
        _system(stub.url).answer(_question("1", "q"), "en")
    assert caught.value.kind == "invalid-response"
    assert ("AKIA-SECRET" in str(caught.value)) is quoted

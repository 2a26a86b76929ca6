"""Generators: the extractive one, and the openai-http client against a real, misbehaving stub."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest

from rag.errors import (
    GeneratorConnectionError,
    GeneratorError,
    GeneratorResponseError,
    GeneratorTimeoutError,
    ModelUnavailableError,
)
from rag.models.generators import GENERATOR_NAMES, ChatMessage, ExtractiveGenerator
from rag.models.openai_http import OpenAIGenerator, OpenAISettings
from tests.plugins.llm_stub import LlmReply, LlmRequest, LlmStub

MESSAGES = [ChatMessage("system", "Be brief."), ChatMessage("user", "Say hello.")]
Make = Callable[[Callable[[LlmRequest], LlmReply]], LlmStub]


Client = Callable[..., OpenAIGenerator]


@pytest.fixture
def client() -> Iterator[Client]:
    """Return a factory of OpenAI clients for a base URL; each is closed at teardown."""
    made: list[OpenAIGenerator] = []

    def make(url: str, *, timeout: float = 5.0, key: str | None = None) -> OpenAIGenerator:
        made.append(OpenAIGenerator(OpenAISettings(url, "stub-model", key, timeout)))
        return made[-1]

    yield make
    for generator in made:
        generator.close()


def test_extractive_generator_has_no_model_and_refuses_to_chat() -> None:
    generator = ExtractiveGenerator()
    assert not generator.uses_llm
    assert generator.info.name == "extractive" and generator.info.model == ""
    with pytest.raises(GeneratorError, match="no language model"):
        generator.chat(MESSAGES, max_tokens=5)


def test_generator_names_are_the_three_configurable_ones() -> None:
    assert GENERATOR_NAMES == ("extractive", "transformers-local", "openai-http")


def test_openai_chat_sends_the_documented_request_and_reads_the_reply(
    llm_stubs: Make, client: Client
) -> None:
    stub = llm_stubs(lambda r: LlmReply(content="  Hello there.  "))
    generator = client(stub.base_url, key="sk-test-123")
    assert generator.chat(MESSAGES, max_tokens=7) == "Hello there."
    (request,) = stub.received()
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "stub-model"
    assert request.body["temperature"] == 0
    assert request.body["max_tokens"] == 7
    assert request.body["stream"] is False
    assert request.body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Say hello."},
    ]
    assert request.headers["Authorization"] == "Bearer sk-test-123"


def test_openai_sends_no_authorization_without_a_key(llm_stubs: Make, client: Client) -> None:
    stub = llm_stubs(lambda r: LlmReply(content="ok"))
    client(stub.base_url).chat(MESSAGES, max_tokens=3)
    assert "Authorization" not in stub.received()[0].headers


def test_openai_streaming_reports_the_growing_text(llm_stubs: Make, client: Client) -> None:
    stub = llm_stubs(lambda r: LlmReply(content="one two three four", pieces=4))
    seen: list[str] = []
    text = client(stub.base_url).chat(MESSAGES, max_tokens=9, on_text=seen.append)
    assert text == "one two three four"
    assert stub.received()[0].body["stream"] is True
    assert len(seen) == 4
    assert seen[-1] == "one two three four"
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(seen))


def test_openai_info_names_the_endpoint_without_credentials(
    llm_stubs: Make, client: Client
) -> None:
    stub = llm_stubs(lambda r: LlmReply(content="x"))
    with_user = stub.base_url.replace("http://", "http://user:secret@")
    info = client(with_user).info
    assert info.name == "openai-http" and info.model == "stub-model"
    endpoint = dict(info.settings)["endpoint"]
    assert "secret" not in endpoint and endpoint.endswith("/v1")


FAULTS = {
    "http-500": (
        LlmReply(kind="status", status=500, body=b"boom"),
        GeneratorResponseError,
        "HTTP 500",
    ),
    "malformed-json": (
        LlmReply(kind="raw", body=b'{"choices": [{"message": '),
        GeneratorResponseError,
        "malformed JSON",
    ),
    "wrong-shape": (
        LlmReply(kind="raw", body=b'{"choices": []}'),
        GeneratorResponseError,
        "choices\\[0\\].message.content",
    ),
    "content-not-text": (
        LlmReply(kind="raw", body=b'{"choices": [{"message": {"content": 42}}]}'),
        GeneratorResponseError,
        "not text",
    ),
    "empty-content": (LlmReply(content="   "), GeneratorResponseError, "empty completion"),
    "connection-dropped": (LlmReply(kind="close"), GeneratorConnectionError, "broke"),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_openai_faults_raise_clear_generator_errors(
    llm_stubs: Make, client: Client, fault: str
) -> None:
    reply, error, message = FAULTS[fault]
    stub = llm_stubs(lambda r: reply)
    with pytest.raises(error, match=message):
        client(stub.base_url).chat(MESSAGES, max_tokens=5)


def test_openai_fault_table_covers_every_fault() -> None:
    assert len(FAULTS) == 6


def test_openai_timeout_is_reported_within_the_limit(llm_stubs: Make, client: Client) -> None:
    # the stub hangs until the test ends: the error shows the limit ended the call
    stub = llm_stubs(lambda r: LlmReply(kind="hang"))
    with pytest.raises(GeneratorTimeoutError, match=r"rag\.generator_timeout_seconds"):
        client(stub.base_url, timeout=0.5).chat(MESSAGES, max_tokens=5)


def test_openai_refused_connection_says_what_to_check(refused_url: str, client: Client) -> None:
    with pytest.raises(GeneratorConnectionError, match="is the server running"):
        client(refused_url).chat(MESSAGES, max_tokens=5)


def test_openai_stream_without_done_is_an_incomplete_reply(llm_stubs: Make, client: Client) -> None:
    stub = llm_stubs(lambda r: LlmReply(content="cut short", stream_done=False))
    with pytest.raises(GeneratorConnectionError, match=r"before \[DONE\]"):
        client(stub.base_url).chat(MESSAGES, max_tokens=5, on_text=lambda t: None)


def test_openai_stream_with_malformed_event_is_refused(llm_stubs: Make, client: Client) -> None:
    body = b"data: {not json\n\ndata: [DONE]\n\n"
    stub = llm_stubs(lambda r: LlmReply(kind="raw", body=body))
    with pytest.raises(GeneratorResponseError, match="streamed malformed JSON"):
        client(stub.base_url).chat(MESSAGES, max_tokens=5, on_text=lambda t: None)


@pytest.mark.parametrize(
    ("base_url", "model", "message"),
    [
        ("", "m", "needs an http\\(s\\) URL"),
        ("ftp://host/v1", "m", "needs an http\\(s\\) URL"),
        ("http://127.0.0.1:1/v1", " ", "rag.openai_model is empty"),
    ],
)
def test_openai_settings_must_name_an_endpoint_and_a_model(
    base_url: str, model: str, message: str
) -> None:
    with pytest.raises(ModelUnavailableError, match=message):
        OpenAIGenerator(OpenAISettings(base_url, model))

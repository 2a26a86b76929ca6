"""The ``openai-http`` generator: a small client for OpenAI-compatible chat-completion endpoints.

``POST {base_url}/chat/completions`` with ``{"model", "messages", "temperature": 0,
"max_tokens", "stream"}``; the reply is ``choices[0].message.content``, or, when streaming,
the ``choices[0].delta.content`` pieces of the server-sent events up to ``data: [DONE]``.
llama.cpp's server, vLLM, Ollama (``/v1``), LM Studio and hosted APIs all speak it. It is only
ever contacted when a user configured it; the API key is passed in by the caller (the server
reads it from the environment variable the configuration names). Every failure becomes a
``GeneratorError`` subclass with a message that says what to check.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from rag.errors import (
    GeneratorConnectionError,
    GeneratorResponseError,
    GeneratorTimeoutError,
    ModelUnavailableError,
)
from rag.models.generators import OPENAI_HTTP, ChatMessage, GeneratorInfo, TextCallback

# Replies larger than this are refused (a chat completion is a few kilobytes).
MAX_REPLY_BYTES = 4_000_000


@dataclass(frozen=True, slots=True)
class OpenAISettings:
    """Where the endpoint is and how long to wait for it."""

    base_url: str  # up to and including the API version, e.g. http://127.0.0.1:8081/v1
    model: str
    api_key: str | None = None
    timeout_seconds: float = 60.0


def check_settings(settings: OpenAISettings) -> OpenAISettings:
    """Return the settings if they name a usable endpoint.

    Raises:
        ModelUnavailableError: when the base URL or the model name is missing or malformed.
    """
    parts = urlsplit(settings.base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelUnavailableError(
            f"rag.openai_base_url is {settings.base_url!r:.200}; the openai-http generator "
            "needs an http(s) URL such as http://127.0.0.1:8081/v1"
        )
    if not settings.model.strip():
        raise ModelUnavailableError("rag.openai_model is empty; name the model the endpoint serves")
    return settings


class OpenAIGenerator:
    """A generator backed by an OpenAI-compatible ``/chat/completions`` endpoint."""

    def __init__(self, settings: OpenAISettings, *, client: httpx.Client | None = None) -> None:
        """Prepare calls (nothing is sent until ``chat``).

        Raises:
            ModelUnavailableError: when the settings do not name a usable endpoint.
        """
        self._settings = check_settings(settings)
        self._url = settings.base_url.strip().rstrip("/") + "/chat/completions"
        self._own_client = client is None
        self._client = client or httpx.Client(follow_redirects=False, trust_env=False)

    @property
    def info(self) -> GeneratorInfo:
        """Return ``openai-http`` with the model name and the endpoint (without credentials)."""
        parts = urlsplit(self._settings.base_url.strip())
        port = f":{parts.port}" if parts.port else ""
        public = f"{parts.scheme}://{parts.hostname}{port}{parts.path}"
        return GeneratorInfo(
            OPENAI_HTTP,
            self._settings.model,
            (
                ("endpoint", public),
                ("temperature", "0"),
                ("timeout_seconds", f"{self._settings.timeout_seconds:g}"),
            ),
        )

    @property
    def uses_llm(self) -> bool:
        """Return True."""
        return True

    def close(self) -> None:
        """Release the connection pool (if this generator created it)."""
        if self._own_client:
            self._client.close()

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        on_text: TextCallback | None = None,
    ) -> str:
        """Ask the endpoint; stream when ``on_text`` is given.

        Raises:
            GeneratorTimeoutError: no complete reply within the time limit.
            GeneratorConnectionError: the connection was refused or broke.
            GeneratorResponseError: an error status, malformed JSON or a wrongly shaped reply.
        """
        stream = on_text is not None
        body = {
            "model": self._settings.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": 0,
            "max_tokens": max_tokens,
            "stream": stream,
        }
        headers = {"Accept": "text/event-stream" if stream else "application/json"}
        if self._settings.api_key:
            headers["Authorization"] = f"Bearer {self._settings.api_key}"
        timeout = self._settings.timeout_seconds
        deadline = time.monotonic() + timeout
        try:
            with self._client.stream(
                "POST", self._url, json=body, headers=headers, timeout=httpx.Timeout(timeout)
            ) as response:
                if not 200 <= response.status_code < 300:
                    raise GeneratorResponseError(
                        f"{self._url} answered HTTP {response.status_code}: "
                        f"{_head(response, deadline)!r:.300}"
                    )
                if stream:
                    assert on_text is not None
                    return _read_stream(response, deadline, on_text, self._url)
                return _content(_read_json(response, deadline, self._url), self._url)
        except httpx.TimeoutException as exc:
            raise GeneratorTimeoutError(self._too_slow()) from exc
        except httpx.ConnectError as exc:
            raise GeneratorConnectionError(
                f"cannot connect to {self._url}: {exc}; is the server running and "
                "rag.openai_base_url right?"
            ) from exc
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            raise GeneratorConnectionError(
                f"the connection to {self._url} broke before the reply was complete: {exc}"
            ) from exc
        except httpx.HTTPError as exc:
            raise GeneratorConnectionError(f"HTTP failure calling {self._url}: {exc}") from exc
        except _Deadline as exc:
            raise GeneratorTimeoutError(self._too_slow()) from exc

    def _too_slow(self) -> str:
        return (
            f"{self._url} sent no complete reply within {self._settings.timeout_seconds:g} s "
            "(rag.generator_timeout_seconds)"
        )


class _Deadline(Exception):
    """The total time limit passed while a reply was still arriving."""


def _chunks(response: httpx.Response, deadline: float) -> Iterator[bytes]:
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise GeneratorResponseError(f"the reply exceeds {MAX_REPLY_BYTES} bytes")
        if time.monotonic() > deadline:
            raise _Deadline
        yield chunk


def _head(response: httpx.Response, deadline: float) -> str:
    data = b""
    for chunk in _chunks(response, deadline):
        data += chunk
        if len(data) > 300:
            break
    return data[:300].decode("utf-8", "replace")


def _read_json(response: httpx.Response, deadline: float, url: str) -> object:
    data = b"".join(_chunks(response, deadline))
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GeneratorResponseError(f"{url} sent malformed JSON ({exc}): {data[:200]!r}") from exc


def _content(document: object, url: str) -> str:
    """Return ``choices[0].message.content`` of a completion document."""
    try:
        content = document["choices"][0]["message"]["content"]  # type: ignore[index]
    except (KeyError, IndexError, TypeError) as exc:
        raise GeneratorResponseError(
            f"{url} sent JSON without choices[0].message.content: {str(document)[:200]}"
        ) from exc
    if not isinstance(content, str):
        raise GeneratorResponseError(
            f"{url} sent a message content that is {type(content).__name__}, not text"
        )
    if not content.strip():
        raise GeneratorResponseError(f"{url} sent an empty completion")
    return content.strip()


def _read_stream(response: httpx.Response, deadline: float, on_text: TextCallback, url: str) -> str:
    """Collect the ``delta.content`` pieces of a server-sent event stream."""
    text = ""
    done = False
    buffer = b""
    for chunk in _chunks(response, deadline):
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for raw in lines:
            line = raw.strip()
            if not line.startswith(b"data:"):
                continue  # blank lines, comments and other SSE fields
            payload = line[5:].strip()
            if payload == b"[DONE]":
                done = True
                break
            piece, finished = _delta(payload, url)
            done = done or finished
            if piece:
                text += piece
                on_text(text)
        if done:
            break
    if not done:
        raise GeneratorConnectionError(f"the stream from {url} ended before [DONE]")
    if not text.strip():
        raise GeneratorResponseError(f"{url} streamed an empty completion")
    return text.strip()


def _delta(payload: bytes, url: str) -> tuple[str, bool]:
    try:
        event = json.loads(payload)
        choice = event["choices"][0]
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GeneratorResponseError(f"{url} streamed malformed JSON: {payload[:200]!r}") from exc
    except (KeyError, IndexError, TypeError) as exc:
        raise GeneratorResponseError(
            f"{url} streamed an event without choices[0]: {payload[:200]!r}"
        ) from exc
    if not isinstance(choice, dict):
        raise GeneratorResponseError(f"{url} streamed a choice that is not an object")
    delta = choice.get("delta") or {}
    piece = delta.get("content") if isinstance(delta, dict) else None
    if piece is not None and not isinstance(piece, str):
        raise GeneratorResponseError(f"{url} streamed a delta content that is not text")
    return piece or "", choice.get("finish_reason") is not None

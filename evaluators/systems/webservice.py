"""The GERBIL QA web-service protocol: one HTTP POST per question, the answer as (e)QALD JSON.

Request: ``POST <url>`` with the form body ``query=<question>&lang=<code>`` (URL-encoded,
which GERBIL itself does not do) and ``Accept: application/json``. Response: any 2xx status
whose body is extended QALD JSON or QALD JSON; the first question in it is the answer.
BioASQ mode (the gold question has BioASQ parts): the form also carries ``id`` and ``type`` and
``Accept`` prefers ``application/vnd.bioasq+json``, so a service that can (qabench's ``/api/qa``)
answers BioASQ JSON with documents, snippets, exact and ideal answers; abstract snippets are
named as the gold file names them (``in_gold_sections``), exactly as for built-in systems.

Every failure raises ``SystemCallError`` (one error for that question): a timeout, a non-2xx
status, a connection closed without an answer, an unparsable or wrongly shaped body, a body over
the size limit, or an answer that takes longer than the timeout in total. Retries happen only
where they cannot repeat work the system already did: a refused connection, and HTTP 429/503
(waiting as ``Retry-After`` asks, if that fits into the timeout). A timeout is never retried.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from email.utils import parsedate_to_datetime

import httpx

from evaluators import defaults
from evaluators.errors import DatasetFormatError, SystemCallError
from evaluators.formats import parse_system_response
from evaluators.model import Question
from evaluators.systems.protocol import check_service_url, in_gold_sections, public_url

_RETRY_STATUS = (429, 503)
BIOASQ_JSON = "application/vnd.bioasq+json"
# Wait this long before retrying a refused connection (multiplied by the attempt number).
_CONNECT_BACKOFF_SECONDS = 0.2
# Wait this long before retrying a 429/503 that did not say how long to wait.
_DEFAULT_RETRY_AFTER_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class RequestPolicy:
    """Limits for calls to one web service (from ``[evaluation]`` in the configuration)."""

    timeout_seconds: float = defaults.REQUEST_TIMEOUT_SECONDS
    retries: int = defaults.REQUEST_RETRIES
    max_response_bytes: int = defaults.MAX_RESPONSE_BYTES
    user_agent: str = "qabench"


class WebServiceSystem:
    """A QA system reached over HTTP with the GERBIL QA protocol (satisfies ``QASystem``).

    Subclasses speak other protocols over the same bounded exchange (timeout, retries, size
    limit): they set ``method`` and override ``_request_form`` and ``_parse``.
    """

    method = "POST"

    def __init__(
        self,
        url: str,
        policy: RequestPolicy,
        *,
        client: httpx.Client | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Prepare calls to ``url``.

        Raises:
            UnknownSystemError: if ``url`` is not an absolute http(s) URL.
        """
        self.url = check_service_url(url)
        self.public_url = public_url(self.url)
        self.policy = policy
        self._own_client = client is None
        self._client = client or httpx.Client(follow_redirects=False, trust_env=False)
        self._clock = clock
        self._sleep = sleep

    def close(self) -> None:
        """Release the connection pool (if this adapter created it)."""
        if self._own_client:
            self._client.close()

    def answer(self, question: Question, language: str) -> Question:
        """Ask the service ``question`` in ``language``.

        Raises:
            SystemCallError: on any failure (see the module docstring).
        """
        form = self._request_form(question, language)
        deadline = self._clock() + self.policy.timeout_seconds
        attempt = 0
        while True:
            attempt += 1
            remaining = deadline - self._clock()
            if remaining <= 0:
                raise SystemCallError("timeout", self._timeout_message())
            try:
                status, body, retry_after = self._post(form, remaining, deadline)
            except httpx.ConnectError as exc:
                # Nothing was sent yet, so asking again cannot repeat work on the system's side.
                if attempt > self.policy.retries:
                    raise SystemCallError("connection", f"cannot connect: {exc}") from exc
                self._wait(_CONNECT_BACKOFF_SECONDS * attempt, deadline)
                continue
            if status in _RETRY_STATUS and attempt <= self.policy.retries:
                wait = retry_after if retry_after is not None else _DEFAULT_RETRY_AFTER_SECONDS
                if self._clock() + wait >= deadline:
                    raise SystemCallError(
                        "http-status",
                        f"HTTP {status}; Retry-After {wait:g} s does not fit into the timeout",
                    )
                self._sleep(wait)
                continue
            if not 200 <= status < 300:
                raise SystemCallError("http-status", f"HTTP {status}")
            reply = self._parse(body, question)
            return in_gold_sections(reply, question) if question.bioasq is not None else reply

    def _request_form(self, question: Question, language: str) -> dict[str, str]:
        """Return the fields sent for ``question`` (the form body, or the query string)."""
        asked = question.asked_language(language)
        form = {"query": question.text(language) or "", "lang": asked}
        if question.bioasq is not None:
            # BioASQ mode: the service learns the question's type and id and is asked for BioASQ
            # JSON (documents, snippets, exact and ideal answers); QALD JSON stays acceptable.
            form |= {"id": question.id, "type": question.bioasq.question_type}
        return form

    def _post(
        self, form: dict[str, str], remaining: float, deadline: float
    ) -> tuple[int, bytes, float | None]:
        bioasq = "type" in form
        headers = {
            "Accept": f"{BIOASQ_JSON}, application/json;q=0.9" if bioasq else "application/json",
            "Accept-Charset": "UTF-8",
            "User-Agent": self.policy.user_agent,
        }
        try:
            sent = {"params": form} if self.method == "GET" else {"data": form}
            with self._client.stream(
                self.method,
                self.url,
                **sent,  # type: ignore[arg-type]
                headers=headers,
                timeout=httpx.Timeout(remaining),
            ) as response:
                status = response.status_code
                retry_after = _retry_after(response.headers.get("Retry-After"))
                if status in _RETRY_STATUS or not 200 <= status < 300:
                    return status, b"", retry_after
                return status, self._read(response, deadline), retry_after
        except httpx.TimeoutException as exc:
            raise SystemCallError("timeout", self._timeout_message()) from exc
        except httpx.ConnectError:
            raise
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            raise SystemCallError(
                "connection", f"the connection broke before a complete answer arrived: {exc}"
            ) from exc
        except httpx.HTTPError as exc:
            raise SystemCallError("connection", f"HTTP failure: {exc}") from exc

    def _read(self, response: httpx.Response, deadline: float) -> bytes:
        cap = self.policy.max_response_bytes
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > cap:
            raise SystemCallError(
                "too-large", f"the answer declares {declared} bytes; the limit is {cap} bytes"
            )
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > cap:
                raise SystemCallError("too-large", f"the answer exceeds the limit of {cap} bytes")
            if self._clock() > deadline:
                raise SystemCallError("too-slow", self._timeout_message())
            chunks.append(chunk)
        return b"".join(chunks)

    def _parse(self, body: bytes, question: Question) -> Question:
        question_id = question.id
        try:
            reply = parse_system_response(body, source=self.public_url)
        except DatasetFormatError as exc:
            if not _is_protocol_answer(body):
                # Error messages are public once the experiment is: quote nothing of a body
                # that is not an answer to the question (it may come from any internal URL).
                raise SystemCallError(
                    "invalid-response",
                    f"unusable answer: {len(body)} bytes that are not a QALD JSON object "
                    "with a 'questions' list (the content is not shown)",
                ) from exc
            raise SystemCallError("invalid-response", f"unusable answer: {exc.detail}") from exc
        return _with_id(reply, question_id)

    def _wait(self, seconds: float, deadline: float) -> None:
        self._sleep(max(0.0, min(seconds, deadline - self._clock())))

    def _timeout_message(self) -> str:
        return f"no complete answer within {self.policy.timeout_seconds:g} s"


def _is_protocol_answer(body: bytes) -> bool:
    """Return whether ``body`` is a JSON object with a ``questions`` list (a QALD-shaped answer).

    >>> _is_protocol_answer(b'{"questions": []}'), _is_protocol_answer(b"ami-id")
    (True, False)
    """
    try:
        document = json.loads(body)
    except ValueError:
        return False
    return isinstance(document, dict) and isinstance(document.get("questions"), list)


def _with_id(reply: Question, question_id: str) -> Question:
    # GERBIL ignores the id a service puts into its answer; the question asked is what counts.
    return reply if reply.id == question_id else replace(reply, id=question_id)


def _retry_after(value: str | None) -> float | None:
    """Return the seconds a ``Retry-After`` header asks for (RFC 9110 §10.2.3), if readable.

    >>> _retry_after("3")
    3.0
    >>> _retry_after(None) is None
    True
    """
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())

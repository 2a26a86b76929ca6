"""The TEXT2SPARQL system API: one GET per question and language, the answer is one SPARQL query.

Request: ``GET <url>?dataset=<dataset IRI>&question=<question text>`` (the challenge's API; the
question in the language it is asked in). Response: any 2xx status whose body is a JSON object
with a string ``query`` (``dataset`` and ``question`` echo the request). The answer is that
query with no answer set, i.e. a SPARQL-only answer: the task runs it on its knowledge base
(bounded, SERVICE refused; ``evaluators.knowledge.execution``) and scores its results. The reply
body is kept with the answer (``Question.reply``) so that the task page can show it.

One exchange (size limit, errors) is the web-service client's
(``evaluators.systems.webservice``): a timeout, a non-2xx status (422 for a missing parameter,
404 for an unknown dataset), a body that is not such a JSON object, each fails the attempt. A
question without TEXT2SPARQL parts is sent with an empty dataset.

The challenge's protocol (``AskProtocol``, the 2026 client's ``ask`` step): each attempt may take
``timeout_seconds`` (180 s in the 2026 runs); an attempt that times out, cannot connect or gets a
non-2xx status is tried again after ``retry_sleep_seconds`` (15 s), up to ``retries`` (5) more
times; a body that is not an answer is not retried (the client logs it and moves on). When the
retries are used up the question has no answer: an error of that question, scored as an empty
result, as the client skips it. Every retry is logged in the client's words
(``<qname> | Retrying (2/5) after 15 seconds...``) and kept per question (``retries_of``), so an
experiment records it with the reply.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import httpx

from evaluators import defaults
from evaluators.errors import SystemCallError
from evaluators.model import Question
from evaluators.systems.webservice import RequestPolicy, WebServiceSystem

# The reply kept with an answer is cut to this many characters.
MAX_KEPT_REPLY = 20_000


# Failures the client retries: timeouts, connection errors, HTTP error statuses.
RETRIED = frozenset({"timeout", "too-slow", "connection", "http-status"})


@dataclass(frozen=True, slots=True)
class AskProtocol:
    """How long one attempt may take, how often and how far apart a failed one is repeated."""

    timeout_seconds: float = defaults.TEXT2SPARQL_TIMEOUT_SECONDS
    retries: int = defaults.TEXT2SPARQL_RETRIES
    retry_sleep_seconds: float = defaults.TEXT2SPARQL_RETRY_SLEEP_SECONDS


class Text2SparqlSystem(WebServiceSystem):
    """A system answering the TEXT2SPARQL API (satisfies ``QASystem``)."""

    method = "GET"

    def __init__(
        self,
        url: str,
        policy: RequestPolicy,
        protocol: AskProtocol = AskProtocol(),
        *,
        client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Prepare calls to ``url``: one attempt within ``protocol.timeout_seconds`` (the
        policy's own retries are not used: the protocol's are).

        Raises:
            UnknownSystemError: if ``url`` is not an absolute http(s) URL.
        """
        attempt = replace(policy, timeout_seconds=protocol.timeout_seconds, retries=0)
        super().__init__(url, attempt, client=client, sleep=sleep)
        self.protocol = protocol
        self._retry_sleep = sleep
        self._log: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()

    def answer(self, question: Question, language: str) -> Question:
        """Ask ``question``, retrying as the protocol says; the retries are kept.

        Raises:
            SystemCallError: the last attempt's failure, when no attempt gave an answer.
        """
        log: list[str] = []
        retries = self.protocol.retries
        try:
            for attempt in range(retries + 1):
                try:
                    return super().answer(question, language)
                except SystemCallError as exc:
                    if exc.kind not in RETRIED:
                        raise
                    log.append(f"{question.id} | {exc}")
                    if attempt == retries:
                        log.append(f"{question.id} | Maximum number of retries reached. "
                                   "Skipping question.")  # fmt: skip
                        raise
                    sleep = self.protocol.retry_sleep_seconds
                    log.append(f"{question.id} | Retrying ({attempt + 1}/{retries}) after "
                               f"{sleep:g} seconds...")  # fmt: skip
                    self._retry_sleep(sleep)
            raise AssertionError("unreachable: the last attempt returns or raises")
        finally:
            with self._lock:
                self._log[question.id] = tuple(log)

    def retries_of(self, question_id: str) -> tuple[str, ...]:
        """Return the retry log of the last time ``question_id`` was asked (empty: none)."""
        with self._lock:
            return self._log.get(question_id, ())

    def _request_form(self, question: Question, language: str) -> dict[str, str]:
        dataset = question.text2sparql.dataset if question.text2sparql is not None else ""
        return {"dataset": dataset, "question": question.text(language) or ""}

    def _parse(self, body: bytes, question: Question) -> Question:
        try:
            document = json.loads(body)
        except ValueError as exc:
            # quote nothing of a body that is not an answer (it may come from any internal URL)
            raise SystemCallError(
                "invalid-response",
                f"unusable answer: {len(body)} bytes that are not JSON (the content is not shown)",
            ) from exc
        query = document.get("query") if isinstance(document, dict) else None
        if not isinstance(query, str):
            raise SystemCallError(
                "invalid-response",
                "unusable answer: expected a JSON object with a string 'query' (the TEXT2SPARQL "
                "API), the content is not shown",
            )
        reply = json.dumps(document, ensure_ascii=False)[:MAX_KEPT_REPLY]
        return Question(question.id, sparql=query, reply=reply)

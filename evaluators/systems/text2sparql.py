"""The TEXT2SPARQL system API: one GET per question and language, the answer is one SPARQL query.

Request: ``GET <url>?dataset=<dataset IRI>&question=<question text>`` (the challenge's API; the
question in the language it is asked in). Response: any 2xx status whose body is a JSON object
with a string ``query`` (``dataset`` and ``question`` echo the request). The answer is that
query with no answer set, i.e. a SPARQL-only answer: the task runs it on its knowledge base
(bounded, SERVICE refused; ``evaluators.knowledge.execution``) and scores its results. The reply
body is kept with the answer (``Question.reply``) so that the task page can show it.

The exchange (timeout, retries only where safe, size limit, errors) is the web-service
client's (``evaluators.systems.webservice``): a timeout, a non-2xx status (422 for a missing
parameter, 404 for an unknown dataset), a body that is not such a JSON object, each is one
error of that question. A question without TEXT2SPARQL parts is sent with an empty dataset.
"""

from __future__ import annotations

import json

from evaluators.errors import SystemCallError
from evaluators.model import Question
from evaluators.systems.webservice import WebServiceSystem

# The reply kept with an answer is cut to this many characters.
MAX_KEPT_REPLY = 20_000


class Text2SparqlSystem(WebServiceSystem):
    """A system answering the TEXT2SPARQL API (satisfies ``QASystem``)."""

    method = "GET"

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

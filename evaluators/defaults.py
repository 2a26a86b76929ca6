"""The defaults of the ``[evaluation]`` limits, in a module that imports nothing.

``RunLimits`` holds the limits an experiment runs under; each default is written here once and
the modules that apply it take it from here (a web-service call's ``RequestPolicy``, the
TEXT2SPARQL client's ``AskProtocol``, the answer-file size cap of ``evaluators.formats``, the
error tolerance of a task, the bootstrap draws of ``evaluators.significance``). ``server.config``
reads its defaults from this class without loading the evaluators (a command line that only
opens the store, ``qabench kb load``, started 0.3 s sooner).
"""

from __future__ import annotations

from dataclasses import dataclass

# One web-service call: seconds, retries of a failed call, bytes of a reply.
REQUEST_TIMEOUT_SECONDS = 60.0
REQUEST_RETRIES = 1
MAX_RESPONSE_BYTES = 10_000_000
# Bytes of an answers or dataset file.
MAX_FILE_BYTES = 200_000_000
# Share of a task's questions that may fail before the task is marked failed.
ERROR_TOLERANCE = 0.25
# Bootstrap draws of a confidence interval.
BOOTSTRAP_SAMPLES = 1000
# The TEXT2SPARQL challenge's client (2026: 180 s, 5 retries 15 s apart).
TEXT2SPARQL_TIMEOUT_SECONDS = 180.0
TEXT2SPARQL_RETRIES = 5
TEXT2SPARQL_RETRY_SLEEP_SECONDS = 15.0


@dataclass(frozen=True, slots=True)
class RunLimits:
    """The ``[evaluation]`` limits an experiment runs under (``server.config`` takes its
    defaults from this class)."""

    request_timeout_seconds: float = REQUEST_TIMEOUT_SECONDS
    concurrency_per_system: int = 4
    parallel_tasks: int = 2
    min_request_interval_seconds: float = 0.0
    retries: int = REQUEST_RETRIES
    max_response_bytes: int = MAX_RESPONSE_BYTES
    error_tolerance: float = ERROR_TOLERANCE
    max_file_bytes: int = MAX_FILE_BYTES
    bootstrap_samples: int = BOOTSTRAP_SAMPLES
    # SPARQL-only answers are run on the knowledge base (evaluation.kb), within these bounds
    execute_queries: bool = True
    query_timeout_seconds: float = 30.0
    query_max_rows: int = 10_000
    # TEXT2SPARQL systems: the challenge's protocol
    text2sparql_timeout_seconds: float = TEXT2SPARQL_TIMEOUT_SECONDS
    text2sparql_retries: int = TEXT2SPARQL_RETRIES
    text2sparql_retry_sleep_seconds: float = TEXT2SPARQL_RETRY_SLEEP_SECONDS

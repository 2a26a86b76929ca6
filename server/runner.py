"""Wiring of the experiment runner, shared by the ``qabench experiment`` commands and the app.

``software_release()`` names the running code (package version from ``importlib.metadata``,
git revision when ``git rev-parse HEAD`` works) for the provenance of every task;
``build_runner()`` configures an ``ExperimentRunner`` from ``[evaluation]``; its default registry
holds ``gold`` and the RAG system (``server.ask.qa_system``). The app passes ``on_write`` (to
refresh its SPARQL replica).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from importlib import metadata

from evaluators.experiments.model import SoftwareRelease
from evaluators.experiments.runner import ExperimentRunner, RunLimits
from evaluators.systems.registry import SystemRegistry
from server.ask.qa_system import system_registry
from server.ask.service import RagService
from server.config import REPO_ROOT, Config
from store.protocol import RdfStore


def software_release() -> SoftwareRelease:
    """Return the running qabench version and, when ``git rev-parse HEAD`` works, the revision."""
    try:
        version = metadata.version("qabench")
    except metadata.PackageNotFoundError:
        version = "unknown"
    revision = None
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        if done.returncode == 0 and done.stdout.strip():
            revision = done.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        revision = None
    return SoftwareRelease(version, revision)


def run_limits(config: Config) -> RunLimits:
    """Return the experiment limits of a configuration."""
    ev = config.evaluation
    return RunLimits(
        request_timeout_seconds=ev.request_timeout_seconds,
        concurrency_per_system=ev.concurrency_per_system,
        parallel_tasks=ev.parallel_tasks,
        min_request_interval_seconds=ev.min_request_interval_seconds,
        retries=ev.retries,
        max_response_bytes=ev.max_response_bytes,
        error_tolerance=ev.error_tolerance,
        max_file_bytes=config.datasets.max_file_bytes,
        bootstrap_samples=ev.bootstrap_samples,
        execute_queries=ev.execute_queries,
        query_timeout_seconds=ev.query_timeout_seconds,
        query_max_rows=ev.query_max_rows,
        text2sparql_timeout_seconds=ev.text2sparql_timeout_seconds,
        text2sparql_retries=ev.text2sparql_retries,
        text2sparql_retry_sleep_seconds=ev.text2sparql_retry_sleep_seconds,
    )


def build_runner(
    config: Config,
    store: RdfStore,
    *,
    registry: SystemRegistry | None = None,
    on_write: Callable[[], None] | None = None,
) -> ExperimentRunner:
    """Return an experiment runner for ``store`` configured from ``config``.

    Args:
        config: the configuration (``[evaluation]`` limits and KB).
        store: the open store.
        registry: built-in systems (default: ``gold`` and the RAG system, see
            ``server.ask.qa_system``).
        on_write: called after every store write (the server refreshes its replica there).
    """
    return ExperimentRunner(
        store,
        config.base_iri,
        limits=run_limits(config),
        registry=registry or system_registry(RagService(config), store),
        release=software_release(),
        kb=config.evaluation.kb,
        strict_ids=config.evaluation.strict_ids,
        on_write=on_write,
    )

"""What a CLI command needs: the configuration and a lazily opened store."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any

from server.cli.store_owner import running_server
from server.config import Config, open_store
from store.errors import StoreLockedError
from store.protocol import RdfStore

if TYPE_CHECKING:
    from evaluators.knowledge.execution import QueryExecutor


@contextmanager
def progress_bar(total: int, label: str) -> Iterator[Callable[[int], None]]:
    """Yield a function that advances a byte progress bar on stderr (only on a terminal)."""
    if not sys.stderr.isatty():
        yield lambda _n: None
        return
    from tqdm import tqdm  # only on a terminal

    with tqdm(total=total, desc=label, unit="B", unit_scale=True, file=sys.stderr) as bar:
        yield bar.update


class CliError(Exception):
    """A command-line problem reported as one line on stderr."""


class Context:
    """Holds the configuration and opens the store only when a command needs it."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._store: RdfStore | None = None

    @property
    def store(self) -> RdfStore:
        """Return the store (embedded, or the remote one ``store.remote_*`` names), opened once."""
        if self._store is None:
            try:
                self._store = open_store(self.config)
            except StoreLockedError as exc:
                server = running_server(self.config.data_dir)
                if server is None:
                    raise
                raise CliError(
                    f"the store at {self.config.store_path} is held by `qabench serve` (pid "
                    f"{server.pid}, {server.url}); stop that server first, use its web pages and "
                    "API, or choose another data directory with --data-dir"
                ) from exc
        return self._store

    def close(self) -> None:
        """Release the store."""
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> Context:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def executor(self, kb_spec: str) -> QueryExecutor:
        """Return a bounded query executor on a loaded knowledge base or an endpoint URL.

        Raises:
            KnowledgeBaseError: if ``kb_spec`` names no loaded knowledge base.
        """
        # Imported here: commands that only load or list (``kb load``) run no queries.
        from evaluators.knowledge.endpoint import is_endpoint
        from evaluators.knowledge.execution import EndpointExecutor, ExecutionLimits, open_executor
        from evaluators.systems.protocol import public_url

        ev = self.config.evaluation
        limits = ExecutionLimits(
            timeout_seconds=ev.query_timeout_seconds,
            max_rows=ev.query_max_rows,
            max_bytes=ev.max_response_bytes,
        )
        store = None if is_endpoint(kb_spec) else self.store
        executor = open_executor(store, self.config.base_iri, kb_spec, limits)
        if isinstance(executor, EndpointExecutor):
            executor.description = public_url(kb_spec)
        return executor

    @staticmethod
    def emit_json(document: Any) -> None:
        """Print one JSON document on stdout."""
        json.dump(document, sys.stdout, indent=2, ensure_ascii=False, allow_nan=False)
        sys.stdout.write("\n")

"""The systems of one experiment run, built on first use and shared by its tasks.

Each system gets one ``RequestGate`` for the whole run, so two tasks asking the same web service
(two datasets, say) together stay within ``concurrency_per_system`` and the request interval.
Systems come from a fresh submission (answer files already read and checked) or, when resuming,
from what the experiment graph recorded (answer files re-read and compared by SHA-256).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from evaluators.defaults import RunLimits
from evaluators.errors import AnswerFileError, UnknownSystemError
from evaluators.experiments.model import SoftwareRelease, SystemDescription
from evaluators.experiments.plan import PlannedExperiment, SystemRequest, read_answers
from evaluators.experiments.read import answers_path, system_descriptions
from evaluators.systems.answer_files import AnswerFileSystem, parse_answer_file
from evaluators.systems.protocol import QASystem, RequestGate, SystemKind
from evaluators.systems.registry import SystemRegistry
from evaluators.systems.text2sparql import AskProtocol, Text2SparqlSystem
from evaluators.systems.webservice import RequestPolicy, WebServiceSystem
from store.protocol import RdfStore

# Replaying an answers file costs nothing; a handful of threads is plenty.
_ANSWER_FILE_CONCURRENCY = 4


@dataclass(frozen=True, slots=True)
class SystemHandle:
    """A ready system with the gate that paces calls to it."""

    system: QASystem
    gate: RequestGate
    concurrency: int
    close: Callable[[], None]
    kind: SystemKind = SystemKind.WEB_SERVICE


def _nothing() -> None:
    return None


class SystemHandles:
    """Lazily built systems of one run, by name (thread-safe)."""

    def __init__(
        self,
        descriptions: Mapping[str, SystemDescription],
        *,
        limits: RunLimits,
        registry: SystemRegistry,
        release: SoftwareRelease,
        urls: Mapping[str, str] | None = None,
        answer_files: Mapping[str, AnswerFileSystem] | None = None,
        answer_paths: Mapping[str, str] | None = None,
    ) -> None:
        self._descriptions = dict(descriptions)
        self._limits = limits
        self._registry = registry
        self._release = release
        self._urls = dict(urls or {})
        self._files = dict(answer_files or {})
        self._paths = dict(answer_paths or {})
        self._built: dict[str, SystemHandle] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_plan(
        cls,
        planned: PlannedExperiment,
        limits: RunLimits,
        registry: SystemRegistry,
        release: SoftwareRelease,
    ) -> SystemHandles:
        """Return the systems of a fresh submission (URLs with their credentials, files read)."""
        return cls(
            {d.name: d for d in planned.systems},
            limits=limits,
            registry=registry,
            release=release,
            urls=planned.urls,
            answer_files=planned.answer_files,
            answer_paths=planned.answer_paths,
        )

    @classmethod
    def from_store(
        cls,
        store: RdfStore,
        base: str,
        experiment_id: str,
        limits: RunLimits,
        registry: SystemRegistry,
        release: SoftwareRelease,
    ) -> SystemHandles:
        """Return the systems an experiment recorded (for ``resume``)."""
        descriptions = system_descriptions(store, base, experiment_id)
        paths = {
            name: path
            for name, d in descriptions.items()
            if d.kind is SystemKind.ANSWER_FILE
            and (path := answers_path(store, base, experiment_id, name))
        }
        return cls(
            descriptions, limits=limits, registry=registry, release=release, answer_paths=paths
        )

    def override(self, requests: Mapping[str, SystemRequest]) -> None:
        """Use other URLs or answer-file paths for recorded systems (e.g. URLs with secrets).

        Raises:
            UnknownSystemError: if a name is not a system of this experiment or the kinds differ.
        """
        for name, request in requests.items():
            known = self._descriptions.get(name)
            if known is None or known.kind is not request.kind:
                raise UnknownSystemError(
                    f"{name!r} is not a {request.kind.value} system of this experiment; its "
                    f"systems are: {', '.join(sorted(self._descriptions))}"
                )
            if request.url:
                self._urls[name] = request.url
            if request.answers_path:
                self._paths[name] = str(request.answers_path)
                self._files.pop(name, None)

    def get(self, name: str) -> SystemHandle:
        """Return the named system, building it on first use.

        Raises:
            UnknownSystemError: if the system cannot be built (unknown built-in, bad URL).
            AnswerFileError: if an answers file is missing or changed since submission.
        """
        with self._lock:
            if name not in self._built:
                self._built[name] = self._build(name)
            return self._built[name]

    def close(self) -> None:
        """Release connection pools."""
        with self._lock:
            for handle in self._built.values():
                handle.close()
            self._built.clear()

    def _build(self, name: str) -> SystemHandle:
        description = self._descriptions.get(name)
        if description is None:
            raise UnknownSystemError(f"The experiment records no system called {name!r}")
        if description.kind.is_http:
            return self._web(description)
        if description.kind is SystemKind.BUILT_IN:
            info = self._registry.info(description.builtin or name)
            system = self._registry.create(info.name)
            return SystemHandle(
                system, RequestGate(info.concurrency), info.concurrency, _nothing, description.kind
            )
        replay = self._files.get(name) or self._replay(description)
        gate = RequestGate(_ANSWER_FILE_CONCURRENCY)
        return SystemHandle(
            replay, gate, _ANSWER_FILE_CONCURRENCY, _nothing, SystemKind.ANSWER_FILE
        )

    def _web(self, description: SystemDescription) -> SystemHandle:
        url = self._urls.get(description.name) or description.url or ""
        concurrency = description.concurrency or self._limits.concurrency_per_system
        policy = RequestPolicy(
            timeout_seconds=description.timeout_seconds or self._limits.request_timeout_seconds,
            retries=self._limits.retries,
            max_response_bytes=self._limits.max_response_bytes,
            user_agent=f"qabench/{self._release.version}",
        )
        system: WebServiceSystem
        if description.kind is SystemKind.TEXT2SPARQL:
            limits = self._limits
            protocol = AskProtocol(
                description.timeout_seconds or limits.text2sparql_timeout_seconds,
                limits.text2sparql_retries,
                limits.text2sparql_retry_sleep_seconds,
            )
            system = Text2SparqlSystem(url, policy, protocol)
        else:
            system = WebServiceSystem(url, policy)
        gate = RequestGate(concurrency, self._limits.min_request_interval_seconds)
        return SystemHandle(system, gate, concurrency, system.close, description.kind)

    def _replay(self, description: SystemDescription) -> AnswerFileSystem:
        path = self._paths.get(description.name)
        if not path:
            raise AnswerFileError(
                f"The answers file of {description.name!r} was not recorded; pass it again "
                f"with --answers {description.name}=FILE"
            )
        data = read_answers(Path(path), self._limits.max_file_bytes)
        digest = hashlib.sha256(data).hexdigest()
        if description.answers_sha256 and digest != description.answers_sha256:
            raise AnswerFileError(
                f"Answers file {path} changed since it was submitted (SHA-256 {digest[:12]}…, "
                f"expected {description.answers_sha256[:12]}…)"
            )
        parsed = parse_answer_file(data, source=Path(path).name)
        return AnswerFileSystem(parsed.by_id())

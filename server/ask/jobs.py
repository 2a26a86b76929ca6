"""Background runs of the ask page: start a pipeline run, follow its stages, fetch the result.

``AskJobs`` hands each question to ``submit`` (the app's bounded ``RagPool``, which refuses when
it is full) or, without one, to a thread of its own (at most ``workers`` at a time), and
records the pipeline's progress events, so the page can poll ``/ask/jobs/<id>`` without
reloading. Finished jobs are kept for a while (the newest
``keep``) and then forgotten; the stored run stays in the rag graph. One instance per app.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from rag.errors import RagError
from rag.run import ProgressEvent, RagRun
from store.errors import StoreError

Work = Callable[[Callable[[ProgressEvent], None]], tuple[RagRun, str | None]]
Submit = Callable[[Callable[[], None]], object]


@dataclass
class StageState:
    """What the page shows for one stage."""

    stage: str
    state: str = "waiting"  # waiting | running | done
    millis: float | None = None
    detail: str = ""


@dataclass
class AskJob:
    """One question being answered in the background."""

    id: str
    stages: dict[str, StageState]
    state: str = "queued"  # queued | running | done | failed
    partial: dict[str, str] = field(default_factory=dict)
    run: RagRun | None = None
    run_iri: str | None = None
    error: Exception | None = None
    created: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, event: ProgressEvent) -> None:
        """Apply a pipeline progress event."""
        with self.lock:
            self.state = "running"
            if event.state == "writing":
                self.partial[event.part] = event.text
                return
            stage = self.stages.setdefault(event.stage, StageState(event.stage))
            stage.state = "running" if event.state == "started" else "done"
            stage.millis = event.millis
            stage.detail = event.detail

    def snapshot(self) -> tuple[str, list[StageState], dict[str, str]]:
        """Return the state, a copy of the stages and of the partial answers."""
        with self.lock:
            stages = [
                StageState(s.stage, s.state, s.millis, s.detail) for s in self.stages.values()
            ]
            return self.state, stages, dict(self.partial)


class AskJobs:
    """Runs ask-page questions in worker threads and keeps their progress."""

    def __init__(
        self,
        stages: tuple[str, ...],
        *,
        workers: int = 4,
        keep: int = 200,
        submit: Submit | None = None,
    ) -> None:
        self._stages = stages
        self._submit = submit
        self._slots = threading.BoundedSemaphore(max(1, workers))
        self._keep = keep
        self._jobs: OrderedDict[str, AskJob] = OrderedDict()
        self._lock = threading.Lock()

    def start(self, work: Work) -> AskJob:
        """Start ``work`` (which runs the pipeline with a progress callback) in the background.

        Raises:
            Exception: whatever ``submit`` raises when it refuses the work (nothing is kept).
        """
        job = AskJob(secrets.token_urlsafe(12), {s: StageState(s) for s in self._stages})
        with self._lock:
            self._jobs[job.id] = job
            while len(self._jobs) > self._keep:
                self._jobs.popitem(last=False)
        if self._submit is None:
            thread = threading.Thread(target=self._run, args=(job, work), daemon=True)
            thread.start()
            return job
        try:
            self._submit(lambda: self._run(job, work))
        except Exception:
            with self._lock:
                self._jobs.pop(job.id, None)
            raise
        return job

    def _run(self, job: AskJob, work: Work) -> None:
        with self._slots:
            try:
                run, iri = work(job.record)
            except (RagError, StoreError, ValueError) as exc:
                with job.lock:
                    job.error, job.state = exc, "failed"
            else:
                with job.lock:
                    job.run, job.run_iri, job.state = run, iri, "done"
            finally:
                # anything else propagates to threading's excepthook (logged with its
                # traceback); the page then reports an internal error for this job
                with job.lock:
                    if job.state not in ("done", "failed"):
                        job.state = "failed"

    def get(self, job_id: str) -> AskJob | None:
        """Return a job by id (``None`` when unknown or forgotten)."""
        with self._lock:
            return self._jobs.get(job_id)

    def wait(self, job: AskJob, timeout: float) -> bool:
        """Wait until ``job`` finished (tests and the no-JavaScript path); True when it did."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if job.snapshot()[0] in ("done", "failed"):
                return True
            time.sleep(0.02)
        return job.snapshot()[0] in ("done", "failed")

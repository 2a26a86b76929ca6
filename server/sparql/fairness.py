"""Who gets the next free query worker: a fair share of worker time per client.

The query workers are the scarce resource of the public endpoint (a query may hold one for the
whole time limit). ``FairQueue`` hands out idle workers and remembers, per client, the worker
time it used (seconds a worker was held for it), decaying with a half-life of
``HALF_LIFE_SECONDS``; a client's *usage* is that decayed sum plus the time its running queries
have run so far. Then:

- **a budget**: a client whose usage reached ``budget`` worker-seconds is refused at once
  (``OverBudget``, answered 429 with ``Retry-After`` = the seconds until its usage decays
  below the budget);
- **light clients first**: a free worker goes to the waiting request whose client has the least
  usage (oldest first among equals), and a *heavy* client (usage at least ``heavy`` seconds:
  the pool says half its time limit) does not take the last idle worker of a pool of two or
  more (a worker being replaced still counts) while other clients are about (running, waiting,
  or done within ``QUIET_SECONDS``), so one worker is left for everybody else while heavy
  clients queue, and a heavy client alone may use every worker;
- **a bounded queue**: at most ``waiting`` requests that hold a request thread wait for a
  worker, and at most ``waiting_on_loop`` that hold none (the SPARQL front's: each is a parked
  request object). A request that finds its queue full takes the place of the waiting request of the
  heaviest client if that client is heavy and its own is lighter (that one is refused);
  otherwise it is refused (``QueueFull``, 503 with ``Retry-After``). A request that waits
  longer than its timeout is refused (``Busy``, 503);
- **newcomers are weighed by what newcomers cost**: a client with no usage on record is not
  weighed as one that used nothing (else a crowd of fresh addresses, each sending one heavy
  query, would be lighter than every client that ever ran a query and take the workers in
  turn), but by the recent first queries of newcomers: their decayed worker time (running
  ones included) over their decayed number plus one. A crowd of heavy newcomers is thus
  heavy from its first queries on: it waits behind clients known to be light and leaves them
  the last idle worker; when newcomers have been light, or none came for a few half-lives, a
  newcomer weighs next to nothing. The budget is each client's own.

Steady state: a client that keeps a worker busy ``r`` of the time settles at a usage of about
``r * HALF_LIFE_SECONDS / ln 2`` (about 87 ``r``), so the default budget of 30 worker-seconds
lets one client use about a third of one worker on its own over minutes, bursts more.
State is bounded: ``MAX_CLIENTS`` clients are remembered (the least recently seen is forgotten).
No Flask and no processes here: ``server.sparql.workers`` owns the workers.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

W = TypeVar("W")

HALF_LIFE_SECONDS = 60.0
MAX_CLIENTS = 10_000
# A heavy client may take the last idle worker when nobody else used one for this long.
QUIET_SECONDS = 10.0


@dataclass(slots=True)
class _Newcomers:
    """The first queries of clients new to the queue: worker time and number, both decayed."""

    seconds: float = 0.0
    count: float = 0.0
    at: float = 0.0

    def decay(self, now: float) -> None:
        factor = 0.5 ** ((now - self.at) / HALF_LIFE_SECONDS) if self.at else 0.0
        self.seconds, self.count, self.at = self.seconds * factor, self.count * factor, now


class Refused(Exception):
    """A request that gets no worker; ``retry_after`` is a whole number of seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class OverBudget(Refused):
    """The client used its budget of worker time (429)."""


class QueueFull(Refused):
    """Too many requests wait for a worker already (503)."""


class Busy(Refused):
    """No worker became free for this request in time (503)."""


@dataclass(eq=False)
class Ticket(Generic[W]):
    """A request's place in the queue: granted (``worker`` set) or waiting.

    ``notify`` (optional) is called once the ticket is granted or displaced, under the queue's
    lock and on whichever thread freed the worker: it must be quick and must not call back
    into the queue (the SPARQL front only schedules work on its event loop).
    """

    client: str
    arrived: float
    notify: Callable[[Ticket[W]], None] | None = None
    done: threading.Event = field(default_factory=threading.Event)
    worker: W | None = None
    started: float = 0.0
    displaced: bool = False

    def wake(self) -> None:
        """Wake whoever waits for this ticket (a thread, or the ``notify`` callback)."""
        self.done.set()
        if self.notify is not None:
            self.notify(self)


class FairQueue(Generic[W]):
    """Idle workers, handed to waiting requests by least recent worker time of their clients.

    Args:
        budget: worker-seconds a client may have used (decayed) before it is refused (0: none).
        heavy: usage from which a client is heavy (never takes the last idle worker).
        waiting: requests that may wait for a worker at once, holding a thread each.
        waiting_on_loop: requests that may wait at once without a thread (``notify``); 0: as
            many as ``waiting``.
        slots: workers the pool is meant to have (the last-worker rule counts these, so a
            worker being replaced is still counted).
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(
        self,
        budget: float,
        heavy: float,
        waiting: int,
        slots: int = 0,
        clock: Callable[[], float] = time.monotonic,
        waiting_on_loop: int = 0,
    ) -> None:
        self.budget = budget
        self.heavy = heavy
        self.waiting = waiting
        self.waiting_on_loop = waiting_on_loop or waiting
        self.slots = slots
        self._clock = clock
        self._lock = threading.Lock()
        self._idle: list[W] = []
        self._workers = 0
        self._queue: list[Ticket[W]] = []
        self._used: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._running: dict[str, list[float]] = {}
        self._newcomers = _Newcomers()

    # ------------------------------------------------------------------ usage
    def _decayed(self, client: str, now: float) -> float:
        value, at = self._used.get(client, (0.0, now))
        return float(value * 0.5 ** ((now - at) / HALF_LIFE_SECONDS))

    def _own_usage(self, client: str, now: float) -> float:
        running = sum(now - start for start in self._running.get(client, ()))
        return self._decayed(client, now) + running

    def _usage(self, client: str, now: float) -> float:
        """Return the usage ``client`` is weighed by: its own, and for a client with none on
        record at least what newcomers' first queries cost of late (running ones included)."""
        own = self._own_usage(client, now)
        if client in self._used:
            return own
        new = self._newcomers
        new.decay(now)
        seconds, count = new.seconds, new.count
        for other, starts in self._running.items():
            if other not in self._used:
                seconds += sum(now - start for start in starts)
                count += len(starts)
        return max(own, seconds / (count + 1))

    def usage(self, client: str) -> float:
        """Return the worker-seconds ``client`` is weighed by (decayed, running included; for
        a client with none on record, what newcomers cost of late)."""
        with self._lock:
            return self._usage(client, self._clock())

    def _charge(self, client: str, seconds: float, now: float) -> None:
        if client not in self._used:
            new = self._newcomers
            new.decay(now)
            new.seconds += seconds
            new.count += 1
        self._used[client] = (self._decayed(client, now) + seconds, now)
        self._used.move_to_end(client)
        while len(self._used) > MAX_CLIENTS:
            self._used.popitem(last=False)

    def charge(self, client: str, seconds: float) -> None:
        """Count ``seconds`` of worker time that ``client`` used elsewhere (a connection
        worker, ``server.handoff``)."""
        with self._lock:
            now = self._clock()
            self._charge(client, seconds, now)

    # ------------------------------------------------------------------ workers
    def add(self, worker: W) -> None:
        """Register a new worker (idle)."""
        with self._lock:
            self._workers += 1
            self._idle.append(worker)
            self._grant(self._clock())

    def remove(self) -> None:
        """Forget one worker that was taken and will not come back (killed, failed)."""
        with self._lock:
            self._workers -= 1

    def put(self, worker: W) -> None:
        """Return a taken worker: it is idle again (or goes to the next waiting request)."""
        with self._lock:
            self._idle.append(worker)
            self._grant(self._clock())

    def _may_take(self, client: str, now: float) -> bool:
        if not self._idle:
            return False
        if len(self._idle) > 1 or max(self._workers, self.slots) < 2:
            return True
        return self._usage(client, now) < self.heavy or not self._others_active(client, now)

    def _others_active(self, client: str, now: float) -> bool:
        """Return whether a client other than ``client`` runs, waits or ran a query lately."""
        if any(other != client for other in self._running):
            return True
        if any(waiter.client != client for waiter in self._queue):
            return True
        for other in reversed(self._used):  # most recently charged first
            if other != client:
                return now - self._used[other][1] < QUIET_SECONDS
        return False

    def _start(self, client: str, now: float) -> W:
        self._running.setdefault(client, []).append(now)
        return self._idle.pop()

    def _grant(self, now: float) -> None:
        """Hand idle workers to waiting requests, lightest client first (under the lock)."""
        while self._idle and self._queue:
            order = sorted(self._queue, key=lambda w: (self._usage(w.client, now), w.arrived))
            chosen = next((w for w in order if self._may_take(w.client, now)), None)
            if chosen is None:
                return
            self._queue.remove(chosen)
            chosen.worker, chosen.started = self._start(chosen.client, now), now
            chosen.wake()

    # ------------------------------------------------------------------ requests
    def take(self, client: str, timeout: float, *, budgeted: bool = True) -> tuple[W, float]:
        """Return an idle worker for ``client`` and the time it was taken, waiting if needed
        (``budgeted`` False: the client is never refused for its usage, only ordered by it).

        Raises:
            OverBudget: the client used its budget of worker time.
            QueueFull: too many requests wait already, none of a heavier client.
            Busy: no worker came within ``timeout`` seconds.
        """
        ticket = self.request(client, budgeted=budgeted)
        if ticket.worker is None:
            ticket.done.wait(timeout)
        return self.claim(ticket)

    def request(
        self,
        client: str,
        *,
        budgeted: bool = True,
        notify: Callable[[Ticket[W]], None] | None = None,
    ) -> Ticket[W]:
        """Ask for a worker without waiting: the ticket is granted at once or queued (then
        ``notify`` is called when it is granted or displaced; ``claim`` settles it).

        Raises:
            OverBudget: the client used its budget of worker time.
            QueueFull: too many requests wait already, none of a heavier client.
        """
        with self._lock:
            now = self._clock()
            used = self._usage(client, now)
            own = self._own_usage(client, now)
            if budgeted and self.budget and own >= self.budget:
                wait = HALF_LIFE_SECONDS * math.log2(own / self.budget) + 1
                raise OverBudget(
                    f"This client used {own:.0f} s of query worker time recently, its share is "
                    f"{self.budget:g} s",
                    max(1, math.ceil(wait)),
                )
            ticket: Ticket[W] = Ticket(client, now, notify)
            if not self._queue and self._may_take(client, now):
                ticket.worker, ticket.started = self._start(client, now), now
                return ticket
            self._enqueue(ticket, used, now)
            # Heavy clients may be waiting for the last idle worker, which this one may take.
            self._grant(now)
            return ticket

    def claim(self, ticket: Ticket[W]) -> tuple[W, float]:
        """Return the worker of a granted ticket; a waiting one leaves the queue.

        Raises:
            QueueFull: a lighter client's request took this one's place.
            Busy: the ticket was not granted (its request waited too long).
        """
        with self._lock:
            if ticket.worker is not None:
                return ticket.worker, ticket.started
            if ticket in self._queue:
                self._queue.remove(ticket)
        if ticket.displaced:
            raise QueueFull("Lighter clients took this request's place in the queue", 2)
        raise Busy("All query workers are busy", 2)

    def _enqueue(self, waiter: Ticket[W], used: float, now: float) -> None:
        on_loop = waiter.notify is not None
        limit = self.waiting_on_loop if on_loop else self.waiting
        peers = [w for w in self._queue if (w.notify is not None) == on_loop]
        if len(peers) >= limit:
            heaviest = max(peers, key=lambda w: (self._usage(w.client, now), w.arrived))
            worst = self._usage(heaviest.client, now)
            if not limit or worst < self.heavy or worst <= used:
                raise QueueFull("Too many queries are waiting for a worker", 2)
            self._queue.remove(heaviest)
            heaviest.displaced = True
            heaviest.wake()
        self._queue.append(waiter)

    def done(self, client: str, started: float) -> None:
        """Record that ``client``'s query that took a worker at ``started`` is over."""
        with self._lock:
            now = self._clock()
            starts = self._running.get(client, [])
            if started in starts:
                starts.remove(started)
            if not starts:
                self._running.pop(client, None)
            self._charge(client, now - started, now)
            self._grant(now)

    @property
    def idle(self) -> int:
        """Return how many workers are idle now."""
        with self._lock:
            return len(self._idle)

    @property
    def queued(self) -> int:
        """Return how many requests wait for a worker now."""
        with self._lock:
            return len(self._queue)

"""Per-client limits: request rates (token buckets) and concurrent work (slots per client).

A *client* is the request's address (after ``server.trusted_proxy`` resolved forwarded headers);
IPv6 clients count per /64 network, the smallest block one subscriber usually holds. Rates are
token buckets that refill at ``per_minute / 60`` per second and hold a quarter minute's worth
(at least one), so short bursts pass and sustained floods are refused. Holders of the submit or
admin token are exempt from rates (not from slots). Refusals are RFC 9457 problems, **429** with
``Retry-After``. State is bounded: at most ``MAX_CLIENTS`` clients are remembered per limiter
(the least recently seen is forgotten). One ``Limits`` per app, on ``app.extensions``; nothing
here reads the store.
"""

from __future__ import annotations

import functools
import ipaddress
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from flask import Flask, current_app, request

from server.web.auth import holds_form_token
from server.web.problems import Problem
from vocab.project import QAB

# Clients remembered per limiter; forgetting one only resets its bucket.
MAX_CLIENTS = 10_000
_EXTENSION = "limits"


@functools.lru_cache(maxsize=4096)
def client_key(address: str | None) -> str:
    """Return the client a request address counts as (IPv6: its /64 network).

    A forwarded address may carry a port (``[2001:db8::1]:443``, ``10.0.0.1:80``, as
    waitress leaves ``X-Forwarded-For`` entries): the port is no part of the client.

    >>> client_key("2001:db8::1") == client_key("2001:db8::ffff"), client_key("10.0.0.1")
    (True, '10.0.0.1')
    >>> client_key("[2001:db8::1]:443") == client_key("2001:db8::2"), client_key("10.0.0.1:80")
    (True, '10.0.0.1')
    """
    if not address:
        return "unknown"
    host = address
    if host.startswith("["):
        host = host[1:].partition("]")[0]
    elif host.count(":") == 1:
        host = host.partition(":")[0]
    try:
        parsed = ipaddress.ip_address(host)
    except ValueError:
        return address[:64]
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


class RateLimiter:
    """Token buckets per client: ``per_minute`` requests a minute, bursts of a quarter of it."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self._rate = per_minute / 60.0
        self._capacity = float(max(1, math.ceil(per_minute / 4)))
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, client: str) -> float:
        """Spend one request of ``client``; return 0, or the seconds to wait when refused."""
        if self.per_minute <= 0:
            return 0.0
        now = self._clock()
        with self._lock:
            tokens, seen = self._buckets.pop(client, (self._capacity, now))
            tokens = min(self._capacity, tokens + (now - seen) * self._rate)
            wait = 0.0
            if tokens >= 1.0:
                tokens -= 1.0
            else:
                wait = (1.0 - tokens) / self._rate
            self._buckets[client] = (tokens, now)
            while len(self._buckets) > MAX_CLIENTS:
                self._buckets.popitem(last=False)
        return wait


class SlotLimiter:
    """At most ``per_client`` pieces of work of one client at a time."""

    def __init__(self, per_client: int) -> None:
        self.per_client = per_client
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()

    def acquire(self, client: str) -> bool:
        """Take a slot for ``client``; return False when it already holds all of its slots."""
        with self._lock:
            held = self._held.get(client, 0)
            if held >= self.per_client:
                return False
            self._held[client] = held + 1
            return True

    def release(self, client: str) -> None:
        """Give back one slot of ``client``."""
        with self._lock:
            held = self._held.get(client, 0) - 1
            if held > 0:
                self._held[client] = held
            else:
                self._held.pop(client, None)

    def held(self, client: str) -> int:
        """Return how many slots ``client`` holds now."""
        with self._lock:
            return self._held.get(client, 0)


@dataclass(frozen=True, slots=True)
class Limits:
    """The per-client limits of one app (``server.*`` settings)."""

    sparql: RateLimiter
    rag: RateLimiter
    queries: SlotLimiter


def install_limits(
    app: Flask, *, sparql_per_minute: int, rag_per_minute: int, queries_per_client: int
) -> Limits:
    """Create the app's limits and keep them on ``app``."""
    found = Limits(
        RateLimiter(sparql_per_minute), RateLimiter(rag_per_minute), SlotLimiter(queries_per_client)
    )
    app.extensions[_EXTENSION] = found
    return found


def limits() -> Limits:
    """Return the limits of the current app."""
    return limits_of(current_app)


def limits_of(app: Flask) -> Limits:
    """Return the limits of ``app`` (outside a request: the SPARQL front)."""
    found = app.extensions[_EXTENSION]
    assert isinstance(found, Limits)
    return found


def current_client() -> str:
    """Return the client of the current request."""
    return client_key(request.remote_addr)


def too_many(detail: str, wait: float) -> Problem:
    """Return the 429 problem for a refused request, with ``Retry-After`` in whole seconds."""
    seconds = max(1, math.ceil(wait))
    return Problem(
        429,
        detail,
        QAB.TooManyRequests,
        "Too many requests",
        {"retry_after_seconds": seconds},
        {"Retry-After": str(seconds)},
    )


def check_rate(limiter: RateLimiter, what: str) -> None:
    """Count one request of the current client against ``limiter``.

    Args:
        limiter: the rate of the route group.
        what: the route group as the problem names it (``SPARQL queries``, ``questions``).

    Raises:
        Problem: 429 with ``Retry-After`` when the client is over its rate.
    """
    if limiter.per_minute <= 0 or holds_form_token():
        return
    refusal = rate_refusal(limiter, current_client(), what)
    if refusal is not None:
        raise refusal


def rate_refusal(limiter: RateLimiter, client: str, what: str) -> Problem | None:
    """Count one request of ``client`` against ``limiter``; return the 429 if it is over."""
    wait = limiter.take(client)
    if wait <= 0:
        return None
    return too_many(
        f"This client sent more {what} than the {limiter.per_minute} a minute it may; "
        f"try again in {max(1, math.ceil(wait))} s.",
        wait,
    )


def slot_refusal(slots: SlotLimiter, what: str) -> Problem:
    """Return the 429 for a client that already holds all of its ``slots``."""
    return too_many(
        f"This client already has {slots.per_client} {what} running, as many as one client "
        "may; wait for them to finish.",
        1,
    )


@contextmanager
def client_slot(slots: SlotLimiter, what: str) -> Iterator[None]:
    """Hold one of the current client's slots while the block runs.

    Raises:
        Problem: 429 with ``Retry-After: 1`` when the client already holds all of its slots.
    """
    client = current_client()
    if not slots.acquire(client):
        raise slot_refusal(slots, what)
    try:
        yield
    finally:
        slots.release(client)

"""Receipts of started experiments: one experiment per submitted form, and a page to return to.

A submission form carries a fresh random ``submission_key``; an API client may send the same as
the ``Idempotency-Key`` header. The key is scoped to whoever submits (a fingerprint of the
session's CSRF token, or of the bearer token and the client's address: the submit token is
shared by every script of a server, so the token alone would let another submitter claim a
receipt), and bound to the request's content (``body``: a digest of its fields and files). The
first request with a key starts the experiment; a request repeating it with the same content (a
double click, the back button and "resubmit", a client retrying after a timeout) gets the same
experiment instead of a second run against the same systems; a request reusing the key with
other content is refused (``KeyReusedError``, 422), never answered with the first one's
experiment. A form post is answered ``303 See Other`` with the
receipt's page (post/redirect/get): reloading that page never submits again, and it shows the
access token only the first time it is opened. Receipts are kept in memory, at most
``MAX_RECEIPTS`` for ``RECEIPT_SECONDS``.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from evaluators.experiments.runner import Submission

MAX_RECEIPTS = 1000
RECEIPT_SECONDS = 3600.0
# How long a repeated request waits for the first one to have started the experiment.
PENDING_WAIT_SECONDS = 30.0


def new_key() -> str:
    """Return a fresh submission key for a form."""
    return secrets.token_urlsafe(18)


def scope_of(credential: str) -> str:
    """Return the scope a submitter's credential (CSRF or bearer token) stands for."""
    return hashlib.sha256(("qabench-receipt:" + credential).encode("utf-8")).hexdigest()[:32]


class KeyReusedError(Exception):
    """A submission key sent again with other content than its first request."""


@dataclass(slots=True)
class Receipt:
    """One submission: who made it, of what content, the experiment it started, whether its
    token was shown."""

    scope: str
    ticket: str
    made: float
    body: str = ""
    submission: Submission | None = None
    token_shown: bool = False
    done: threading.Event = field(default_factory=threading.Event)


class Receipts:
    """The receipts of recent submissions, by submitter and key, and by ticket."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_key: OrderedDict[tuple[str, str], Receipt] = OrderedDict()
        self._by_ticket: dict[str, Receipt] = {}

    def _expire(self, now: float) -> None:
        while self._by_key:
            key, oldest = next(iter(self._by_key.items()))
            if len(self._by_key) <= MAX_RECEIPTS and now - oldest.made < RECEIPT_SECONDS:
                return
            del self._by_key[key]
            self._by_ticket.pop(oldest.ticket, None)

    def begin(self, scope: str, key: str, body: str = "") -> tuple[Receipt, bool]:
        """Return the receipt for ``key`` and whether this request must start the experiment.

        A repeated key returns the first request's receipt once it has its experiment (waiting
        for it briefly); its ``submission`` is None if the first request failed.

        Raises:
            KeyReusedError: the key's first request had other content (``body``, a digest).
        """
        with self._lock:
            now = time.monotonic()
            self._expire(now)
            found = self._by_key.get((scope, key))
            if found is None:
                made = Receipt(scope, secrets.token_urlsafe(12), now, body)
                self._by_key[(scope, key)] = made
                self._by_ticket[made.ticket] = made
                return made, True
            if found.body != body:
                raise KeyReusedError(
                    "This submission key (Idempotency-Key) was used with another request; "
                    "send a new key with a new request."
                )
        found.done.wait(PENDING_WAIT_SECONDS)
        return found, False

    def finish(self, receipt: Receipt, submission: Submission | None) -> None:
        """Record the experiment ``receipt`` started (None: nothing started; the key is free)."""
        with self._lock:
            receipt.submission = submission
            if submission is None:
                self._by_key = OrderedDict(
                    (k, r) for k, r in self._by_key.items() if r is not receipt
                )
                self._by_ticket.pop(receipt.ticket, None)
        receipt.done.set()

    def opened(self, ticket: str, scope: str) -> tuple[Receipt, bool] | None:
        """Return the receipt of ``ticket`` for its own submitter, and whether to show its token.

        The token is shown the first time only.
        """
        with self._lock:
            found = self._by_ticket.get(ticket)
            if found is None or found.scope != scope or found.submission is None:
                return None
            show, found.token_shown = not found.token_shown, True
            return found, show

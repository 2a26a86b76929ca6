"""Fair shares of query workers (server.sparql.fairness): the rules on a clock of our own, then
runaway clients against a live server, whose other clients keep being answered."""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

import httpx
import pytest

from server.sparql.fairness import HALF_LIFE_SECONDS, Busy, FairQueue, OverBudget, QueueFull


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def queue_of(
    workers: int, *, budget: float = 30.0, heavy: float = 5.0, waiting: int = 4
) -> tuple[FairQueue[str], Clock]:
    clock = Clock()
    fair: FairQueue[str] = FairQueue(budget, heavy, waiting, workers, clock)
    for n in range(workers):
        fair.add(f"w{n}")
    return fair, clock


def test_usage_is_charged_and_decays_with_the_half_life() -> None:
    fair, clock = queue_of(2)
    worker, started = fair.take("a", 1)
    clock.now += 4
    assert fair.usage("a") == pytest.approx(4)  # running time counts while it runs
    fair.done("a", started)
    fair.put(worker)
    clock.now += HALF_LIFE_SECONDS
    assert fair.usage("a") == pytest.approx(2)
    assert fair.usage("b") == 0


def test_a_client_over_its_budget_is_refused_until_its_usage_decays() -> None:
    fair, clock = queue_of(2, budget=10)
    for _ in range(3):
        worker, started = fair.take("a", 1)
        clock.now += 4
        fair.done("a", started)
        fair.put(worker)
    used = fair.usage("a")
    assert 10 < used < 12  # 12 s charged, decayed while the queries ran
    with pytest.raises(OverBudget) as refused:
        fair.take("a", 1)
    wait = refused.value.retry_after
    other, started = fair.take("b", 1)  # others are not affected
    fair.done("b", started)
    fair.put(other)
    clock.now += wait - 2
    with pytest.raises(OverBudget):
        fair.take("a", 1)  # Retry-After is not early...
    clock.now += 2
    assert fair.usage("a") < 10 and fair.take("a", 1)  # ...and then it is allowed


def test_an_unbudgeted_client_is_ordered_by_its_usage_but_never_refused() -> None:
    # the server's own page jobs: many readers behind one account
    fair, clock = queue_of(2, budget=10, heavy=5)
    for _ in range(4):
        worker, started = fair.take("pages", 1, budgeted=False)
        clock.now += 4
        fair.done("pages", started)
        fair.put(worker)
    assert fair.usage("pages") > 10
    with pytest.raises(OverBudget):
        fair.take("pages", 1)  # held to the budget it would be refused
    worker, started = fair.take("pages", 1, budgeted=False)  # it is not
    # still heavy: it may not take the last idle worker while another client is about
    other, other_started = fair.take("b", 1)
    fair.done("b", other_started)
    fair.put(other)
    with pytest.raises(Busy):
        fair.take("pages", 0.01, budgeted=False)
    fair.done("pages", started)
    fair.put(worker)


def test_a_heavy_client_leaves_the_last_idle_worker_to_others() -> None:
    fair, clock = queue_of(2, heavy=5)
    worker, started = fair.take("heavy", 1)
    clock.now += 6
    fair.done("heavy", started)
    fair.put(worker)
    # Alone on the server, a heavy client may use every worker.
    first, one = fair.take("heavy", 1)
    second, two = fair.take("heavy", 1)
    for worker, started in ((first, one), (second, two)):
        fair.done("heavy", started)
        fair.put(worker)
    # Once somebody else is about, it leaves them the last one.
    light, started = fair.take("light", 1)
    fair.done("light", started)
    fair.put(light)
    held, started = fair.take("heavy", 1)  # two idle: it may take one
    with pytest.raises(Busy):
        fair.take("heavy", 0.05)  # not the last one
    assert fair.take("light", 0.05)[0] not in (None, held)
    fair.done("heavy", started)
    fair.put(held)
    clock.now += 11  # nobody else for a while (the light query ended): the idle one is its
    fair.done("light", clock.now - 11)
    clock.now += 11
    assert fair.take("heavy", 0.05)


def test_the_lightest_waiting_client_gets_the_next_worker() -> None:
    fair, clock = queue_of(1, heavy=100)
    fair._charge("used-more", 3.0, clock.now)
    fair._charge("used-less", 1.0, clock.now)
    worker, started = fair.take("first", 1)
    got: list[str] = []

    def wait(client: str) -> None:
        fair.take(client, 5)
        got.append(client)

    threads = [threading.Thread(target=wait, args=(c,)) for c in ("used-more", "used-less")]
    for thread in threads:
        thread.start()
        time.sleep(0.05)
    assert fair.queued == 2
    fair.done("first", started)
    fair.put(worker)
    time.sleep(0.1)
    assert got == ["used-less"]
    fair.put("w0")
    for thread in threads:
        thread.join(5)
    assert got == ["used-less", "used-more"]


def test_the_queue_is_bounded_and_lighter_clients_displace_heavier_ones() -> None:
    fair, clock = queue_of(1, budget=0, waiting=1, heavy=10)
    fair._charge("heavy", 20.0, clock.now)
    fair._charge("heavier", 50.0, clock.now)
    worker, started = fair.take("someone", 1)
    outcome: dict[str, object] = {}

    def wait(client: str) -> None:
        try:
            outcome[client] = fair.take(client, 5)[0]
        except QueueFull as exc:
            outcome[client] = exc

    heavy = threading.Thread(target=wait, args=("heavy",))
    heavy.start()
    time.sleep(0.05)
    with pytest.raises(QueueFull):
        fair.take("heavier", 1)  # the queue is full of a lighter client: refused at once
    light = threading.Thread(target=wait, args=("light",))
    light.start()
    heavy.join(5)
    assert isinstance(outcome["heavy"], QueueFull)  # its place went to the lighter client
    fair.done("someone", started)
    fair.put(worker)
    light.join(5)
    assert outcome["light"] == "w0"


# --- live: runaway clients against everybody else ---------------------------------------------

RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"


def test_runaway_clients_leave_others_answered(make_live_server: Any) -> None:
    live = make_live_server(query_timeout_seconds=1.0, trusted_proxy="127.0.0.1", threads=8)
    pool = live.services.pool
    pool.start()
    assert pool.wait_ready(60)
    stop = time.monotonic() + 6.0
    runaway: Counter[int] = Counter()
    others: Counter[int] = Counter()

    def hammer(address: str, query: str, tally: Counter[int], pause: float) -> None:
        with httpx.Client(base_url=live.url, timeout=30) as client:
            while time.monotonic() < stop:
                answer = client.get(
                    "/sparql", params={"query": query}, headers={"X-Forwarded-For": address}
                )
                tally[answer.status_code] += 1
                time.sleep(pause)

    threads = [
        threading.Thread(target=hammer, args=(f"10.0.0.{n % 3 + 2}", RUNAWAY, runaway, 0.01))
        for n in range(6)
    ]
    threads.append(
        threading.Thread(target=hammer, args=("10.0.0.9", "ASK { ?s ?p ?o }", others, 0.1))
    )
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    # The other client (within the default rate of 240 a minute) was answered, and quickly:
    # a worker was left for it.
    answered = others[200] / sum(others.values())
    assert sum(others.values()) >= 30, others
    assert answered >= 0.9, (others, runaway)
    # The runaway clients were stopped by the time limit, then refused.
    assert runaway[503] >= 3 and runaway[429] >= 3, runaway

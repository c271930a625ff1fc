"""The dispatcher's lease on both stores: one holder at a time, renewed by it, taken over once it has
expired unrenewed (a head killed mid-lease), given up at once on a clean stop; a holder that finds it
taken gives up dispatching. SQLite in a data dir, and a real PostgreSQL (the postgres tier)."""
from __future__ import annotations

import threading

import pytest

from orchestrator.clock import ManualClock
from orchestrator.runs.head.lease import FENCE_S, Fenced, Holding, Lease
from tests.waiting import until



def test_one_holder_until_it_expires_or_is_released(store):
    clock = ManualClock(1_000_000)
    a, b = Lease(store, clock, "head-a", ttl_s=6), Lease(store, clock, "head-b", ttl_s=6)
    assert a.take() and not b.take() and a.held_by() == "head-a"
    clock.advance(5_000)
    assert a.take()  # renewed: another 6 s from now
    clock.advance(5_000)
    assert not b.take()
    clock.advance(1_001)  # a stopped renewing (killed): its lease ran out
    assert a.held_by() is None and b.take() and b.held_by() == "head-b"
    assert not a.take()  # the old holder finds it taken
    b.release()
    assert a.take()


def test_a_holding_thread_takes_renews_and_gives_up_when_another_holds_it(store):
    clock = ManualClock(1_000_000)
    events: list[str] = []
    taken, lost = threading.Event(), threading.Event()
    holding = Holding(Lease(store, clock, "head-a", ttl_s=6), on_taken=lambda: (events.append("taken"), taken.set()),
                      on_lost=lambda: (events.append("lost"), lost.set()), renew_s=0.05, poll_s=0.05).start()
    try:
        assert taken.wait(10) and holding.holding
        other = Lease(store, clock, "head-b", ttl_s=6)
        assert not other.take()
        # the holder is stalled past its lease and another head takes it: the holder must stop
        with store.write() as c:
            c.execute("UPDATE leases SET holder = 'head-b' WHERE name = 'dispatcher'")
        assert lost.wait(10)
        until(lambda: not holding.holding, 10, every=0.02, what="the holder giving up")
        assert events[:2] == ["taken", "lost"]
    finally:
        holding.stop()


def test_a_clean_stop_releases_it_for_the_next_head_at_once(store):
    clock = ManualClock(1_000_000)
    taken = threading.Event()
    first = Holding(Lease(store, clock, "head-a"), on_taken=taken.set, on_lost=lambda: None, renew_s=0.05, poll_s=0.05)
    first.start()
    assert taken.wait(10)
    first.stop()
    assert Lease(store, clock, "head-b").take()  # no wait for the lease to run out


def test_a_write_is_fenced_once_another_head_may_hold_the_lease(store):
    clock = ManualClock(1_000_000)
    a, b = Lease(store, clock, "head-a", ttl_s=6), Lease(store, clock, "head-b", ttl_s=6)
    assert a.take()
    with store.write() as c:
        a.fence(c)  # held for FENCE_S more: the write goes on
        with pytest.raises(Fenced):
            b.fence(c)
    clock.advance(int((6 - FENCE_S) * 1000) + 1)  # not expired, but within FENCE_S of it: no more writes
    with pytest.raises(Fenced), store.write() as c:
        a.fence(c)
    clock.advance(FENCE_S * 1000)
    assert b.take()
    with pytest.raises(Fenced), store.write() as c:
        a.fence(c)


class _Failing(Lease):
    """A lease whose renewals fail after the first take (the store went away for this head)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.takes = 0

    def take(self, fresh: bool = False) -> bool:
        self.takes += 1
        if self.takes > 1:
            raise OSError("the store cannot be reached")
        return super().take(fresh)


def test_a_holder_that_cannot_renew_gives_up_before_another_head_may_take_it(store):
    from orchestrator.clock import Clock

    lost = threading.Event()
    holding = Holding(_Failing(store, Clock(), "head-a", ttl_s=3), on_taken=lambda: None, on_lost=lost.set,
                      renew_s=0.05, poll_s=0.05).start()
    try:
        assert lost.wait(10) and not holding.valid()
        # it gave up a fence's time before its lease ran out: nobody else may have it yet
        assert not Lease(store, Clock(), "head-b", ttl_s=3).take()
        until(lambda: Lease(store, Clock(), "head-b", ttl_s=3).take(), 10, every=0.05, what="the lease expiring")
    finally:
        holding.stop()


def test_every_head_on_one_store_reads_one_service_id(store):
    from orchestrator.store import leases

    with store.write() as c:
        assert leases.service_id(c, "first-head") == "first-head"
    with store.write() as c:
        assert leases.service_id(c, "second-head") == "first-head"  # kept for good: one Ray namespace
    assert Lease(store, ManualClock(1_000_000), "head-a").take()  # beside the dispatcher's own lease


def test_each_holding_is_a_tenure_of_its_own_and_a_dispatcher_writes_only_in_its_own(store):
    clock = ManualClock(1_000_000)
    a, b = Lease(store, clock, "head-a", ttl_s=6), Lease(store, clock, "head-b", ttl_s=6)
    assert a.take(fresh=True)
    first = a.tenure
    assert a.take() and a.tenure == first  # a renewal keeps the tenure
    assert a.take(fresh=True) and a.tenure != first  # dispatching again: a new one
    second = a.tenure
    with store.write() as c:
        a.fence(c, second)
        with pytest.raises(Fenced):
            a.fence(c, first)  # a dispatcher of the earlier holding, though its head holds the lease
    clock.advance(6_001)
    assert b.take(fresh=True) and b.tenure not in (first, second)
    assert a.take(fresh=True) is False and a.tenure == second

"""One dispatcher among several heads on one store: the head holding the `dispatcher` lease plays runs,
the others serve requests and wait for it. A head that dies (kill -9 included) stops renewing; once the
lease has expired another head takes it and resumes what was in flight under the fault rules.
"""
# Fencing: a holder gives up FENCE_S before its lease could run out unrenewed, timed from before the
# write that last renewed it, so it has stopped before any other head may take it; and every write of
# its dispatcher checks, in the same transaction, that it still holds the lease for FENCE_S more
# (`Lease.fence`), so a head stalled past its lease (a paused VM, a store that hung) writes nothing.
# Each holding is a tenure of its own (`leases.tenure`, `holder@taken_at_ms`), handed to the dispatcher it
# starts and stamped on every job: the Recorder actor, which every head's workers share, lands a
# playing run's turns and totals only while their stamp is the lease's current tenure, in the same
# transaction, so a superseded head's workers (paused, partitioned, not yet killed) add nothing to a run
# the new holder replays.
# Expiry is read on each head's own clock: heads on several machines need their clocks in step (NTP)
# to well within FENCE_S.
from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from orchestrator.clock import Clock
from orchestrator.store import StoreError, leases

log = logging.getLogger("studio.lease")

NAME = "dispatcher"
TTL_S = 6.0  # how long a holder that stopped renewing keeps the lease
RENEW_S = 2.0  # three renewals per lease: one late renewal does not lose it
POLL_S = 1.0  # how often a waiting head asks
FENCE_S = 2.0  # a holder stops this long before its lease could run out: one renewal's time


class Fenced(StoreError):
    """A dispatcher's write refused because its head no longer surely holds the lease."""


class Lease:
    """sole: no other head can reach this store (SQLite in a data dir this head holds exclusively, a
    private Ray): a renewal the store refuses for now (a write lock held past the busy wait) is not a
    lost lease, and the store's fault rules, not fencing, decide what becomes of the runs in flight."""

    def __init__(self, store, clock: Clock, holder: str, name: str = NAME, ttl_s: float = TTL_S,
                 sole: bool = False):
        self.store, self.clock, self.holder, self.name, self.ttl_ms = store, clock, holder, name, int(ttl_s * 1000)
        self.sole = sole
        self.tenure: str | None = None  # this head's tenure, as the last take returned it

    def take(self, fresh: bool = False) -> bool:
        """Take it, or renew it when held: True while this head holds it. fresh: a new tenure, even
        when this head holds it already (it starts dispatching again)."""
        with self.store.write() as c:
            tenure = leases.take(c, self.name, self.holder, self.clock.now_ms(), self.ttl_ms, fresh=fresh)
        if tenure is not None:
            self.tenure = tenure
        return tenure is not None

    def held_by(self) -> str | None:
        return leases.holder(self.store.conn(), self.name, self.clock.now_ms())

    def fence(self, c, tenure: str | None = None) -> None:
        """Inside a write transaction: raise Fenced unless this head holds the lease for FENCE_S more
        (and, when given, in that tenure: a dispatcher started in an earlier one writes nothing)."""
        if tenure is not None and not leases.stamped(c, self.name, tenure):
            raise Fenced(f"this head's ({self.holder}) tenure of the {self.name} lease has ended")
        if not self.sole and not leases.holds(c, self.name, self.holder, self.clock.now_ms() + int(FENCE_S * 1000)):
            raise Fenced(f"this head ({self.holder}) no longer holds the {self.name} lease")

    def release(self) -> None:
        with self.store.write() as c:
            leases.release(c, self.name, self.holder)


class Holding:
    """A thread that waits for the lease, calls `on_taken` once held, renews it, and calls `on_lost`
    when it is no longer sure to hold it; after `on_lost` it waits for the lease again."""

    def __init__(self, lease: Lease, on_taken: Callable[[], None], on_lost: Callable[[], None],
                 renew_s: float = RENEW_S, poll_s: float = POLL_S):
        self.lease, self.on_taken, self.on_lost = lease, on_taken, on_lost
        self.renew_s, self.poll_s = renew_s, poll_s
        self.holding = False
        self._until = 0.0  # monotonic time until which the lease surely holds (FENCE_S before it can expire)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"studio-lease-{lease.name}", daemon=True)

    def start(self, taken_at: float | None = None) -> Holding:
        """taken_at: the caller took the lease itself (monotonic time before that take); the thread then
        renews it without calling on_taken."""
        if taken_at is not None:
            self.holding = True
            self._until = taken_at + self.lease.ttl_ms / 1000 - self._fence_s()
        self._thread.start()
        return self

    def _fence_s(self) -> float:
        return min(FENCE_S, self.lease.ttl_ms / 3000)

    def stop(self) -> None:
        """Stop waiting or renewing; a held lease is released, so another head takes it at once."""
        self._stop.set()
        self._thread.join(timeout=30)
        if self.holding:
            self.holding = False
            try:
                self.lease.release()
            except Exception:  # noqa: BLE001
                log.warning("could not release the %s lease; it expires by itself", self.lease.name)

    def valid(self) -> bool:
        """Whether this head surely holds the lease now (its holder may act on it)."""
        return self.holding and (self.lease.sole or time.monotonic() < self._until)

    def _run(self) -> None:
        fence = self._fence_s()
        while not self._stop.is_set():
            asked = time.monotonic()  # the store's expiry is at least this + TTL: read before the write
            try:
                held = self.lease.take(fresh=not self.holding)  # a tenure of its own for each holding
            except Exception as e:  # noqa: BLE001 - any store failure (either dialect) is a renewal not made
                held = None
                log.warning("the %s lease could not be renewed: %s", self.lease.name, e)
            if held:
                self._until = asked + self.lease.ttl_ms / 1000 - fence
            late = time.monotonic() >= self._until and not self.lease.sole
            if self.holding and (held is False or late):
                self.holding = False
                log.error("lost the %s lease (%s): stopping", self.lease.name,
                          "another head holds it" if held is False else "it could not be renewed in time")
                self.on_lost()
            elif held and not self.holding and time.monotonic() < self._until:
                self.holding = True
                log.info("took the %s lease as %s", self.lease.name, self.lease.holder)
                self.on_taken()
            self._stop.wait(self.renew_s if self.holding else self.poll_s)

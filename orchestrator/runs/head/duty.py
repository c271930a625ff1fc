"""A head's dispatching duty: play the service's runs while this head holds the dispatcher lease, and
serve requests only while another head does.

On start a head takes the lease if it is free and starts its Dispatcher at once (a single head plays
as soon as it serves); otherwise it waits for the lease (`Holding`). A head
that takes the lease over from one that died starts a Dispatcher whose reconcile resumes what the dead
one had in flight under the fault rules. A head that loses the lease fences its Dispatcher at once
(it writes nothing more) and then stops it, killing its workers. Starting and stopping run on a thread
of their own, in order, so the lease keeps being renewed meanwhile.
"""
from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from orchestrator.actors import Shared, joined
from orchestrator.agents.exchange import Exchanges
from orchestrator.clock import Clock
from orchestrator.core import Core
from orchestrator.ids import head_id
from orchestrator.runs.head.dispatcher import Dispatcher
from orchestrator.runs.head.lease import Holding, Lease

log = logging.getLogger("studio.dispatcher")


class Busy(RuntimeError):
    """Another head holds the lease and this one was asked not to wait for it."""

    def __init__(self, holder: str):
        super().__init__(f"head {holder} plays this service's runs")
        self.holder = holder


class Duty:
    def __init__(self, core: Core, *, head: str | None = None, ray_address: str | None = None,
                 num_cpus: int | None = None, workers: int | None = None):
        self.core = core
        self.head = head or head_id()
        self.shared = Shared(core.store, detached=joined(ray_address))
        # every head reaches the service's exchange, dispatching or not: agents may ask through any head
        self.agents = Exchanges(core.config, core.clock, self.shared)
        # the lease is about real time, never the service's clock (tests set that one)
        self.lease = Lease(core.store, Clock(), self.head,
                           sole=not joined(ray_address) and core.store.dialect == "sqlite")
        self.dispatcher: Dispatcher | None = None
        self._args = {"ray_address": ray_address, "num_cpus": num_cpus, "workers": workers}
        self._holding = Holding(self.lease, on_taken=self._taken, on_lost=self._lost)
        self._steps = ThreadPoolExecutor(1, thread_name_prefix="studio-duty")
        self._lock = threading.Lock()

    def start(self, wait: bool = True) -> Duty:
        """Take the lease now if it is free, and dispatch before returning; else wait for it in the
        background, or raise Busy when `wait` is False."""
        asked = time.monotonic()
        taken = self.lease.take(fresh=True)
        if not taken and not wait:
            raise Busy(self.lease.held_by() or "another head")
        self.core.agents = self.agents
        if taken:
            self._holding.start(taken_at=asked)  # renewed from now on, while the dispatcher starts
            try:
                self._start(self.lease.tenure)  # on the caller's thread: Ray may start here, and wants the main thread
            except BaseException:
                self._holding.stop()
                raise
        else:
            self._holding.start()
        return self

    def stop(self) -> None:
        """A clean stop: the dispatcher stops while the lease is still held (and renewed), then the
        lease is released so another head takes it at once."""
        self._steps.submit(self._stop).result()
        self._holding.stop()
        self._steps.shutdown()
        self.agents.stop()
        self.core.agents = None

    @property
    def dispatching(self) -> bool:
        return self.dispatcher is not None and self._holding.valid()

    def _taken(self) -> None:
        self._steps.submit(self._start, self.lease.tenure)  # read now: a later take may start another tenure

    def _lost(self) -> None:
        with self._lock:
            if self.dispatcher is not None:
                self.dispatcher.fence()  # at once, on the lease's thread: nothing more is written
        self._steps.submit(self._stop, fenced=True)

    def _start(self, tenure: str | None) -> None:
        with self._lock:
            if self.dispatcher is not None:
                return
            d = Dispatcher(self.core, lease=self.lease, tenure=tenure, shared=self.shared, agents=self.agents,
                           **self._args)
            self.dispatcher = d
        try:
            d.start()
        except Exception:
            log.exception("the dispatcher could not start")
            with self._lock:
                self.dispatcher = None
            raise
        log.info("head %s dispatches", self.head)

    def _stop(self, fenced: bool = False) -> None:
        with self._lock:
            d, self.dispatcher = self.dispatcher, None
        if d is not None:
            d.stop(fenced=fenced)

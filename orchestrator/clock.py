"""The service's clock: every reading of service time (created, updated, finished and expiry times,
rate-limit windows, last use, this month's allowance) goes through the Core's one Clock.

Tests give a Core a ManualClock and move it instead of sleeping past an expiry or a minute boundary.
Workers stamp when they begin playing with their own wall clock: they hold no Core.
"""
from __future__ import annotations

import threading
import time


class Clock:
    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


class ManualClock(Clock):
    """A clock that moves only when told to (tests, simulations)."""

    def __init__(self, now_ms: int) -> None:
        self._now = now_ms
        self._lock = threading.Lock()

    def now_ms(self) -> int:
        with self._lock:
            return self._now

    def set(self, now_ms: int) -> None:
        with self._lock:
            self._now = now_ms

    def advance(self, ms: int) -> None:
        with self._lock:
            self._now += ms

    # Sent to another process (a Ray actor's argument), it goes as a copy that reads the time it was sent.
    def __getstate__(self) -> dict:
        return {"now_ms": self.now_ms()}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["now_ms"])

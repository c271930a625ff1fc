"""The core's clock: wall time for rate-limit windows, token expiry and last-used times.

One object on the Core, so tests set the time instead of sleeping past a minute boundary.
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

"""Waiting on a real process (a server, a Ray worker, a writer in another process): a condition
checked until it holds, returned at once when it does.

Tests sleep nowhere else: time the service reads comes from its Core's clock, which a test sets
(orchestrator.clock.ManualClock) instead of sleeping past it.
"""
from __future__ import annotations

import time

import anyio


def until(holds, timeout: float = 60, every: float = 0.05, what: str = "the condition"):
    """holds()'s first true value; AssertionError after timeout seconds (a bound for loaded machines,
    not a target)."""
    deadline = time.monotonic() + timeout
    while True:
        got = holds()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not hold within {timeout:g} s")
        time.sleep(every)


async def until_async(holds, timeout: float = 60, every: float = 0.05, what: str = "the condition"):
    """until() for a coroutine function holds(), without blocking the event loop."""
    deadline = time.monotonic() + timeout
    while True:
        got = await holds()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not hold within {timeout:g} s")
        await anyio.sleep(every)

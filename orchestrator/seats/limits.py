"""How many requests one provider key has in flight at once, shared by every match of a process.

A big series plays hundreds of matches on one event loop, most of them on the same key. Each key
(provider, base URL, a fingerprint of the key) gets one `KeyLimit` per event loop, whose allowance
finds the key's own level as TCP finds a path's (AIMD). A request waits for its slot within its turn:
the caller's deadline cancels the wait, which the seat counts as any turn not answered in time, and
a hold that ends after the deadline raises Unreachable at once, as a retry with no time left does.
Nothing here changes what counts as a provider fault (docs/SEATS.md): it paces requests.
"""
# The allowance:
# - it starts at START requests in flight, granted in the order they asked;
# - while requests wait for a slot and the provider answers them, it grows: by one per answer until
#   the key's first 429 or 529 (it doubles every round of answers, so a key that takes 200 at once has
#   them within a few rounds), by 1/allowance per answer after (about one more slot per round);
# - a 429 or 529 halves it, once per wave of requests (a request sent before the last cut does not
#   cut again), so a small key still backs off within a round or two;
# - it never passes `ceiling` (`[providers] max_concurrent_per_key` in config.toml, CEILING by
#   default), nor grows while the key has slots to spare;
# - a `retry-after` on a 429 or 529 holds every request to that key until it has passed, not only the
#   one that got it.
from __future__ import annotations

import asyncio
import hashlib
import weakref
from collections import deque

from orchestrator.plans import ConfigError
from orchestrator.seats.faults import Unreachable

START = 32        # requests in flight a key is allowed before it has answered any
CEILING = 1024    # the most it may grow to, unless config.toml says otherwise
THROTTLED = (429, 529)


class KeyLimit:
    def __init__(self, ceiling: int = CEILING):
        self.ceiling = max(1, int(ceiling))
        self.allowance = float(min(START, self.ceiling))  # slots granted now: int(allowance), 1..ceiling
        self.doubling_below = float(self.ceiling)  # grows by one per answer below this; halved at each cut
        self.active = 0
        self.waiters: deque[asyncio.Future] = deque()
        self.hold_until = 0.0   # loop time before which nothing is sent (a retry-after)
        self.cut_at = float("-inf")  # loop time of the last cut
        self.throttled = 0      # 429s and 529s seen, for tests and logs

    async def acquire(self, deadline: float) -> float:
        """Wait for a slot (and for any hold to pass); returns the loop time it was granted, which
        `answered` and `refused` take back. The caller releases the slot with `release`."""
        loop = asyncio.get_running_loop()
        if self.active < int(self.allowance) and not self.waiters:
            self.active += 1
        else:
            granted = loop.create_future()
            self.waiters.append(granted)
            try:
                await granted
            except asyncio.CancelledError:
                if granted.done() and not granted.cancelled():  # granted just as the turn ran out
                    self.release()
                raise
        wait = self.hold_until - loop.time()
        if wait > 0:
            if self.hold_until >= deadline:
                self.release()
                raise Unreachable(f"HTTP 429: the provider asked this key to wait {wait:.1f} s more, "
                                  "past the turn's end", status=429)
            try:
                await asyncio.sleep(wait)
            except asyncio.CancelledError:
                self.release()
                raise
        return loop.time()

    def release(self) -> None:
        self.active -= 1
        self._grant()

    def answered(self, sent_at: float) -> None:
        """A request sent at sent_at was answered (not throttled). The allowance grows only while it is
        what holds requests back (some wait, or every slot is taken): a key used below its allowance
        learns nothing about what it could take."""
        busy = self.waiters or self.active + 1 >= int(self.allowance)
        if busy and self.allowance < self.ceiling:
            step = 1.0 if self.allowance < self.doubling_below else 1.0 / self.allowance
            self.allowance = min(float(self.ceiling), self.allowance + step)
            self._grant()

    def refused(self, sent_at: float, retry_after: float | None) -> None:
        """A 429 or 529 to a request sent at sent_at (loop time)."""
        now = asyncio.get_running_loop().time()
        self.throttled += 1
        if sent_at >= self.cut_at:  # sent under the current allowance: it is too high
            self.allowance = max(1.0, self.allowance / 2)
            self.doubling_below = self.allowance  # from here on it grows a slot per round
            self.cut_at = now
        if retry_after:
            self.hold_until = max(self.hold_until, now + retry_after)

    def _grant(self) -> None:
        while self.waiters and self.active < int(self.allowance):
            granted = self.waiters.popleft()
            if not granted.done():  # a waiter whose turn ran out is skipped
                self.active += 1
                granted.set_result(None)


_limits: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> {key id: KeyLimit}


def key_limit(provider: str, base_url: str, key: str, ceiling: int | None) -> KeyLimit:
    """The running loop's limit for this key; one per loop, since its waiters are that loop's futures."""
    per_loop = _limits.setdefault(asyncio.get_running_loop(), {})
    ident = (provider, base_url, hashlib.sha256(key.encode()).hexdigest()[:16])
    limit = per_loop.get(ident)
    ceiling = CEILING if ceiling is None else max(1, int(ceiling))
    if limit is None:
        limit = per_loop[ident] = KeyLimit(ceiling)
    elif limit.ceiling != ceiling:  # the operator changed the ceiling: later matches take the new one
        limit.ceiling, limit.allowance = ceiling, min(limit.allowance, float(ceiling))
    return limit


def configured_cap(config: dict) -> int:
    """`[providers] max_concurrent_per_key` in config.toml, the ceiling a key's allowance grows to: a
    whole number of at least 1."""
    cap = (config.get("providers") or {}).get("max_concurrent_per_key", CEILING)
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise ConfigError("config.toml: providers.max_concurrent_per_key must be a whole number of at least 1, "
                          f"like {CEILING}")
    return cap

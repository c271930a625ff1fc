"""Per-minute ceilings (docs/api.md): per token, and per client address for refused requests.

Windows are aligned to the wall-clock minute ("the per-minute ceiling rolls each minute"), so
Retry-After is the number of seconds until the next minute starts. The counts live in the store
(its `limits` repository), so every head on one store counts a token's requests together; a limiter
without a store, or one whose store refuses a write for now, counts in process memory.
"""
from __future__ import annotations

import math
import threading

from orchestrator.clock import Clock
from orchestrator.errors import DomainError
from orchestrator.store.limits import Counts

WINDOW_MS = 60_000


def _retry_after_s(now_ms: int) -> int:
    return max(1, math.ceil((WINDOW_MS - now_ms % WINDOW_MS) / 1000))


class MinuteCounter:
    """Hits per key in the current wall-clock minute, for one scope of keys (tokens, addresses,
    sign-ins); in the store once use() has named it, else in process memory. A hit the store refuses
    for now is kept in memory and added to the store's count until the minute rolls."""

    def __init__(self, scope: str) -> None:
        self.scope = scope
        self.counts: Counts | None = None  # set by use(); None: memory only
        self._lock = threading.Lock()
        self._window = -1
        self._stored: dict[str, int] = {}  # key -> the store's count when last read, this minute
        self._kept: dict[str, int] = {}    # key -> hits counted here only, this minute
        self._pruned = -1

    def use(self, counts: Counts) -> None:
        """Count in the store from now on (every head on it sees the same counts)."""
        self.counts = counts

    def add(self, key: str, now_ms: int) -> int:
        """Count one hit for key in the current minute; return the count including this hit."""
        window = now_ms // WINDOW_MS
        n = None if self.counts is None else self.counts.add(self.scope, key, window)
        if n is not None and window > self._pruned:  # once a minute per process: rows of subjects gone quiet
            self._pruned = window
            self.counts.prune(window - 1)
        with self._lock:
            if window != self._window:  # a new minute: every key starts again from zero
                self._window, self._stored, self._kept = window, {}, {}
            if n is None:
                self._kept[key] = n = self._kept.get(key, 0) + 1
                return self._stored.get(key, 0) + n
            self._stored[key] = n
            return n + self._kept.get(key, 0)


class TokenLimiter:
    """Each authenticated request counts against its token's plan figure (requests_per_minute)."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock or Clock()
        self._counter = MinuteCounter("token")

    def use(self, counts: Counts) -> None:
        self._counter.use(counts)

    def hit(self, token_id: str, per_minute: int, now_ms: int | None = None) -> None:
        now_ms = self.clock.now_ms() if now_ms is None else now_ms
        if self._counter.add(token_id, now_ms) > per_minute:
            wait = _retry_after_s(now_ms)
            raise DomainError("rate_limited", f"this token is over its plan's ceiling of {per_minute} requests "
                              f"per minute; retry after {wait} s when the minute rolls", retry_after_s=wait)


class AddressLimiter:
    """Refused (401, 403) requests per client address per minute.

    Past the ceiling, a request from that address that would be refused is answered 429 instead,
    which slows token guessing without touching requests that carry a valid token and scope.
    """

    DEFAULT_CEILING = 120

    def __init__(self, ceiling: int = DEFAULT_CEILING, clock: Clock | None = None) -> None:
        self.ceiling = ceiling
        self.clock = clock or Clock()
        self._counter = MinuteCounter("address")

    def use(self, counts: Counts) -> None:
        self._counter.use(counts)

    def refuse(self, address: str | None, error: DomainError, now_ms: int | None = None) -> DomainError:
        """Record a refusal from address; return the error to answer with (rate_limited when over)."""
        if address is None or error.status not in (401, 403):
            return error
        now_ms = self.clock.now_ms() if now_ms is None else now_ms
        if self._counter.add(address, now_ms) > self.ceiling:
            wait = _retry_after_s(now_ms)
            return DomainError("rate_limited", f"too many refused or unauthenticated requests from this address "
                               f"(ceiling {self.ceiling} per minute); retry after {wait} s with a valid token",
                               retry_after_s=wait)
        return error

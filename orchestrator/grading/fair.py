"""Grading work shared fairly between accounts: each account's work waits in its own line, the lines
take turns (round-robin), and no account has more than `per_account` parts out at once. One account's
series of thousands of decisions then delays another account's short grading by at most a part, not
by the whole series (issue 38, F3).

Within an account the work keeps its order: a run's count before its parts, an earlier run first.
"""
from __future__ import annotations

from collections import Counter, deque
from typing import Any


class FairQueue:
    def __init__(self, per_account: int):
        self.per_account = max(1, int(per_account))
        self.lines: dict[str, deque] = {}   # account -> its waiting work; dict order is the turn order
        self.out: Counter = Counter()       # account -> its work handed out and not yet back

    def put(self, account: str, item: Any) -> None:
        self.lines.setdefault(account, deque()).append(item)

    def take(self) -> tuple[str, Any] | None:
        """The next account in turn that has work waiting and room under its cap, and its oldest work;
        that account goes to the back of the turn order. None when nothing may go out now."""
        for account in self.lines:
            if self.out[account] < self.per_account:
                line = self.lines.pop(account)
                item = line.popleft()
                if line:
                    self.lines[account] = line  # back of the line of accounts
                self.out[account] += 1
                return account, item
        return None

    def done(self, account: str) -> None:
        """A piece of the account's work came back (or failed)."""
        self.out[account] -= 1
        if self.out[account] <= 0:
            del self.out[account]

    def __len__(self) -> int:
        return sum(len(line) for line in self.lines.values())

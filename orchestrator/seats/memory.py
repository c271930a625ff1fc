"""A seat's memory: the turns (observation and the seat's own reply) a request carries before the
current observation.

Turns are dropped in blocks: the memory grows to MEMORY_TURNS, and the turn that would pass it leaves
the last MEMORY_KEPT. Between drops every request extends the one before it (same system prompt, same
earlier turns, then one more), which is the prefix a provider's prompt cache matches: a self-hosted
server evaluates only the new turn, a hosted one bills the rest as cached input. Dropping the oldest
turn every time would change the request's start on every turn from the fifth on, and the whole
memory would be evaluated again each turn (docs/SEATS.md, "A real model in the loop")."""
from __future__ import annotations

from orchestrator.seats.prompt import MEMORY_TURNS

MEMORY_KEPT = MEMORY_TURNS // 2


class Memory:
    def __init__(self, size: int = MEMORY_TURNS, kept: int | None = None):
        self.size = size
        self.kept = min(size, MEMORY_KEPT if kept is None else kept)
        self.turns: list = []

    def append(self, entry) -> None:
        self.turns.append(entry)
        if len(self.turns) > self.size:
            del self.turns[: len(self.turns) - self.kept]

    def __iter__(self):
        return iter(self.turns)

    def __len__(self) -> int:
        return len(self.turns)


def held(answered: int, size: int = MEMORY_TURNS, kept: int = MEMORY_KEPT) -> int:
    """How many of a seat's last answered turns its memory holds after `answered` of them: what
    Memory.append leaves, for a memory restored from a transcript (a fork of a played run)."""
    kept = min(size, kept)
    if answered <= size:
        return answered
    return kept + (answered - size - 1) % (size - kept + 1)

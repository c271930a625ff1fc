"""A run's ledger of spend: one usage entry per seat, charged in place as each turn ends.

The entries are the run's usage list (Job.usage(): agent_turns, input_tokens, output_tokens, usd per
seat); a seat player holds its own seat's entry and charges it, so the figures a run reports (the
seats' totals sent to the recorder after every turn and tick, the roster's usage, the outcome's
spend, the spend cap's check) are all read from these entries, never added up a second time.
"""
from __future__ import annotations

USAGE_FIELDS = ("agent_turns", "input_tokens", "output_tokens", "usd")


def new_usage() -> dict:
    return {"agent_turns": 0, "input_tokens": 0, "output_tokens": 0, "usd": 0.0}


def asked(entry: dict) -> None:
    """A turn the seat was asked to play (agent_turns), whatever then ends it."""
    entry["agent_turns"] += 1


def charge(entry: dict, turn) -> None:
    """What a turn's reply cost (turn: a TurnRecord): its tokens and USD."""
    entry["input_tokens"] += turn.input_tokens or 0
    entry["output_tokens"] += turn.output_tokens or 0
    entry["usd"] += turn.usd


class Ledger:
    """A run's usage list with the operations on it; `seats[i]` is seat i's entry."""

    def __init__(self, seats: list[dict]):
        self.seats = seats

    def entry(self, seat: int) -> dict:
        return self.seats[seat]

    def resume(self, seat: int, usage: dict) -> None:
        """A resumed run: what was metered before the fault, carried on (never billed again)."""
        self.seats[seat].update(usage)

    @property
    def usd(self) -> float:
        """The run's spend so far, all seats."""
        return sum(u["usd"] for u in self.seats)

    def settle_turns(self, ticks: int) -> None:
        """Agent turns settle as seats x ticks played (docs/RUNS.md), whoever plays the seat."""
        for u in self.seats:
            u["agent_turns"] = ticks

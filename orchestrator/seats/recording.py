"""The recorder: where a playing run's seats get their keys and leave their turns and totals.

One protocol, two implementations, chosen once per job: a worker's sends every turn and report to the
head node's Recorder actor, which writes it to the store as it comes, so a run resumed after a fault
replays what it recorded; in-process play reads keys from the job's data dir and records nothing (the
caller records the outcome). A seat played on its own (tests, benchmarks) records with OFF_RECORD.

Words: a turn is *recorded* once the store holds it; a resumed run *replays* its recorded turns; a
report *meters* every seat's totals.
"""
from __future__ import annotations

from typing import Protocol

from orchestrator.errors import envelope
from orchestrator.seats.turn import TurnRecord


class Unrecorded(Exception):
    """The store refused a playing run's writes for its whole patience: the run cannot go on safely."""

    def envelope(self) -> dict:
        return envelope("internal_error", str(self))


class Stale(Unrecorded):
    """A write from a job handed over in a tenure of the dispatcher lease that has ended: another head
    may be replaying the run, so nothing of this one is recorded and its match stops."""


def nothing_to_replay() -> dict:
    return {"turns": [], "seats": {}}


class Recorder(Protocol):
    async def credentials(self) -> dict:
        """seat index -> its Credential, for the seats that need a key."""

    async def replay(self) -> dict:
        """What the run recorded before a fault: {turns: [{tick, seat, turn, play, memory}],
        seats: {index: {usage, turns}}}."""

    async def turn(self, turn: TurnRecord, play: list, memory, totals: dict) -> None:
        """One turn as it ended (play: what the seat played, as `played` gives it; memory: the
        conversation entry it left) with the seat's totals {usage, turns}; returns once it is kept."""

    async def report(self, tick: int, seats: dict[int, dict]) -> None:
        """Every seat's totals {usage, turns} so far and the live tick."""


class OffRecord:
    """Records nothing and has nothing to replay: a seat played on its own, and the base of
    in-process play's recorder."""

    async def credentials(self) -> dict:
        return {}

    async def replay(self) -> dict:
        return nothing_to_replay()

    async def turn(self, turn: TurnRecord, play: list, memory, totals: dict) -> None:
        return None

    async def report(self, tick: int, seats: dict[int, dict]) -> None:
        return None


OFF_RECORD = OffRecord()

"""What a world seat does around its turns, the same for a model seat and an agent seat, so the two
cannot drift: replay of the turns a resumed run recorded before a fault, recording of every turn
asked, the conversation memory, the seat's counts and its entry in the run's ledger, its time for a
turn. An arena game's model and agent seats take their turns here too; a game is not resumed, so
their turns go to the transcript only."""
from __future__ import annotations

from engine.rules import WORLD
from orchestrator.seats import played
from orchestrator.seats.ledger import asked, charge, new_usage
from orchestrator.seats.memory import Memory
from orchestrator.seats.prompt import MEMORY_TURNS
from orchestrator.seats.recording import OFF_RECORD, Recorder
from orchestrator.seats.seat import seat_label
from orchestrator.seats.turn import TurnRecord, new_turns


class NotRecorded(LookupError):
    """A seat that plays only its record was asked a turn the record lacks."""

    def __init__(self, seat: int, tick: int):
        super().__init__(f"seat {seat} was asked a turn at tick {tick} that was not recorded")
        self.seat, self.tick = seat, tick


class SeatBase:
    """A world seat's turns. usage: the seat's entry in the run's ledger (a fresh one for a seat
    played alone); recorder: where each turn goes as it ends; to_replay: tick -> {turn, play, memory}
    a resumed run recorded, played again as it was; turn_timeout_ms: the run's env.turn_timeout_ms."""

    def __init__(self, index: int, seat: dict, *, usage: dict | None = None, recorder: Recorder = OFF_RECORD,
                 to_replay: dict[int, dict] | None = None, memory_turns: int = MEMORY_TURNS,
                 turn_timeout_ms: int = WORLD["turn_timeout_ms"]):
        self.index, self.seat = index, seat
        self.turn_timeout_ms = int(turn_timeout_ms)
        self.turn_s = self.turn_timeout_ms / 1000  # what the event loop's clock counts in
        self.model = seat["model"]
        self.label = seat_label(index, seat)
        self.usage = new_usage() if usage is None else usage
        self.turns = new_turns()
        self.memory = Memory(memory_turns)
        self.transcript: list[dict] = []  # one row per turn asked
        self.tick = 0                     # the tick being asked, set by play_tick
        self.recorder = recorder
        self.to_replay = dict(to_replay or {})
        self.replayed = False             # the last turn came from the record, not the seat
        self.replay_only = False          # a turn not in the record is NotRecorded, never asked (a bundle's check)

    def resume(self, totals: dict) -> None:
        """A resumed run's counts so far (its usage is in the ledger it resumed with)."""
        self.turns = dict(totals["turns"])

    def replay(self) -> list | None:
        """This tick's turn, if the run recorded it before a fault: its transcript row and conversation
        entry restored, its actions as they were played (None: ask the seat). Its usage and counts are
        in the totals the seat resumed with."""
        again = self.to_replay.pop(self.tick, None)
        self.replayed = again is not None
        if again is None:
            if self.replay_only:
                raise NotRecorded(self.index, self.tick)
            return None
        self.transcript.append(again["turn"])
        if again["memory"] is not None:
            self.memory.append(again["memory"])
        self.replaying(again["turn"])
        return played.decode(again["play"])

    def replaying(self, row: dict) -> None:
        """What a seat kind restores beyond the transcript and memory (its fault or absence streak)."""

    def ask(self, asked_text: str | None = None, *, counted: bool = True) -> TurnRecord:
        """A turn asked: counted in the ledger, its record begun. counted=False: the same turn asked
        again (an arena seat's call repeated after a provider fault), a record of its own but no new
        turn in the ledger."""
        if counted:
            asked(self.usage)
        return TurnRecord(self.tick, self.index, asked=asked_text)

    def charge(self, turn: TurnRecord) -> None:
        charge(self.usage, turn)

    async def close_turn(self, turn: TurnRecord, actions: list, memory=None) -> None:
        """A turn asked, however it ended: in the transcript, and recorded with the seat's totals."""
        self.transcript.append(turn.row())
        await self.recorder.turn(turn, played.encode(actions), memory, self.report())

    def unrecorded(self, turn: TurnRecord) -> None:
        """A turn in the transcript as far as it got, never recorded: one given up (a cancel, an error
        no seat explains), or any turn of an arena game."""
        self.transcript.append(turn.row())

    def refused_last(self, reason: str) -> None:
        """An arena game refused the last answer (an illegal move): its transcript row says why."""
        if self.transcript and not self.transcript[-1]["refused"]:
            self.transcript[-1]["refused"] = [reason]

    def report(self) -> dict:
        return {"usage": dict(self.usage), "turns": dict(self.turns)}

"""Agent seats as a match plays them, beside the model seats and with their interface: in the world,
`AgentSeat.act(observation, deadline)`, what a tick awaits of every external seat; in an arena game,
`AgentArenaSeat.answer(position, feedback)`, waiting on the caller's event loop as the arena's model
seats do. Each turn opens on the head's exchange and waits there, never in a thread, for the agent's
actions, the deadline or the agent's absence. It is counted and transcribed like a model's turn:
`reply` is the submitted body as JSON; tokens and USD stay 0 (the agent pays its own inference). A
seat never in touch within absent_s of the match's start, or out of touch for MISSED_TICKS ticks in a
row, raises AgentAbsent and the run fails naming it; a seat in touch that misses its deadline only
waits that tick (docs/AGENTS.md).
"""
from __future__ import annotations

import asyncio
import json
import time

from orchestrator.agents import exchange as exchanges
from orchestrator.seats.actions import TIMEOUT_WAIT, Refused, from_list
from orchestrator.seats.base import SeatBase
from orchestrator.seats.faults import SeatFailed
from orchestrator.seats.loop import on_loop
from orchestrator.seats.observe_text import render_observation
from orchestrator.seats.prompt import compose_directions
from orchestrator.seats.recording import OFF_RECORD, Recorder
from orchestrator.seats.turn import TurnRecord, actions_json

MISSED_TICKS = 3
MISSED = "no actions within the turn"


class AgentAbsent(SeatFailed):
    """An agent seat whose program never came, or went away: the run fails with agent_absent."""
    code = "agent_absent"


class _Turns(SeatBase):
    """What both kinds of agent seat share: the exchange, counts, transcript and the absence rule."""

    def __init__(self, index: int, seat: dict, *, run_id: str, exchange, turn_timeout_ms: int,
                 usage: dict | None = None, recorder: Recorder = OFF_RECORD, to_replay: dict[int, dict] | None = None):
        super().__init__(index, seat, usage=usage, recorder=recorder, to_replay=to_replay,
                         turn_timeout_ms=turn_timeout_ms)
        self.run_id, self.exchange = run_id, exchange
        self.provider = "agent"
        self.directions = compose_directions(seat.get("skills") or [], seat.get("instructions")) or None
        self.began = time.monotonic()  # the absence window runs from here, however the exchange tells time
        self.away = 0  # consecutive missed turns while out of touch

    async def _open(self, view: dict, timeout_ms: int) -> dict:
        return await self.exchange.open_turn.remote(self.run_id, self.index, view, timeout_ms,
                                                     int(1000 * (time.monotonic() - self.began)))

    def _judge(self, got: dict, turn: TurnRecord, timeout_ms: int) -> bool:
        """Whether the agent acted; raises AgentAbsent when the absence rule says so."""
        if got.get("absent"):
            turn.error = "agent_absent"
            raise AgentAbsent(f"{self.label}: the agent never asked for its turn within {got['absent_s']:g} s of "
                              "the run starting; start the agent (GET /api/v1/runs/:id/seats/:seat/turn) before "
                              "or right after the launch")
        if got.get("missed"):
            self.turns["timed_out"] += 1
            turn.error, turn.latency_ms = MISSED, float(timeout_ms)
            self.away = 0 if got["in_touch"] else self.away + 1
            return False
        self.away = 0
        self.turns["answered"] += 1
        turn.reply, turn.submitted_by, turn.latency_ms = got["reply"], got["submitted_by"], float(got["latency_ms"])
        return True

    def _gone(self) -> None:
        if self.away >= MISSED_TICKS:
            raise AgentAbsent(f"{self.label}: the agent stopped asking for its turns and missed {self.away} in a "
                              "row")

    async def ended(self, tick: int | None) -> None:
        await self.exchange.end.remote(self.run_id, tick)


class AgentSeat(_Turns):
    """An agent seat in a world match, played around its turns as a model seat is (SeatBase)."""

    def __init__(self, index: int, seat: dict, *, run_id: str, exchange, turn_timeout_ms: int, actions_per_turn: int,
                 usage: dict | None = None, recorder: Recorder = OFF_RECORD, to_replay: dict[int, dict] | None = None):
        super().__init__(index, seat, run_id=run_id, exchange=exchange, turn_timeout_ms=turn_timeout_ms, usage=usage,
                         recorder=recorder, to_replay=to_replay)
        self.actions_per_turn = int(actions_per_turn)

    @classmethod
    def of(cls, index: int, job, match, *, usage: dict | None = None, recorder: Recorder = OFF_RECORD,
           to_replay: dict[int, dict] | None = None) -> "AgentSeat":
        return cls(index, job.seats[index], run_id=job.run_id, exchange=exchanges.for_job(job.agents),
                   turn_timeout_ms=job.env["turn_timeout_ms"], actions_per_turn=match.apt, usage=usage,
                   recorder=recorder, to_replay=to_replay)

    def replaying(self, row: dict) -> None:
        self.away = 0

    async def act(self, observation: dict, deadline: float | None = None) -> list:
        """This tick's actions (action dicts, Refused, or the timeout wait row); raises AgentAbsent."""
        again = self.replay()
        if again is not None:  # a resumed run: the turn as it was played
            return again
        loop = asyncio.get_running_loop()
        budget_s = self.turn_s if deadline is None else deadline - loop.time()
        timeout_ms = max(0, round(budget_s * 1000))
        text = render_observation(observation)
        view = {"tick": self.tick, "season_ticks": observation["season_ticks"],
                "actions_per_turn": self.actions_per_turn,
                "observation": {"text": text, "state": observation}, "directions": self.directions}
        turn = self.ask(text)
        try:
            got = await self._open(view, timeout_ms)
        except BaseException:  # a cancel while the agent thinks: the turn was asked all the same
            self.unrecorded(turn)
            raise
        try:
            acted = self._judge(got, turn, timeout_ms)
        except AgentAbsent:
            await self.close_turn(turn, [])
            raise
        if not acted:
            await self.close_turn(turn, [TIMEOUT_WAIT])
            self._gone()
            return [TIMEOUT_WAIT]
        actions = from_list(got["actions"])[: self.actions_per_turn]
        refused = [a for a in actions if isinstance(a, Refused)]
        if refused:
            self.turns["invalid"] += 1
        turn.actions, turn.refused = actions_json(actions), [r.transcript() for r in refused]
        await self.close_turn(turn, actions)
        return actions


def move_of(actions: list) -> str:
    """An arena answer from the submitted actions: `{move}` or `{column}`, `{action: "resign"}`; the
    game's own parser judges it (anything else is an illegal answer, asked again)."""
    if not actions:
        return ""
    a = actions[0]
    if str(a.get("action", "")).lower() == "resign":
        return "resign"
    value = a.get("move", a.get("column"))
    return "" if value is None or isinstance(value, bool) else str(value)


class AgentArenaSeat(_Turns):
    """An agent seat in an arena game: answer(position, feedback) for the arena's play loop, on
    the caller's loop as the arena's model seat (ArenaSeat). A ply is this game's tick."""

    def __init__(self, index: int, seat: dict, *, job, loop: asyncio.AbstractEventLoop, usage: dict | None = None):
        super().__init__(index, seat, run_id=job.run_id, exchange=exchanges.for_job(job.agents),
                         turn_timeout_ms=job.env["turn_timeout_ms"], usage=usage)
        self.loop, self.season_ticks = loop, job.season_ticks
        self.on_fault = None  # ArenaSeat's hook; an agent seat has no provider faults

    def answer(self, position, feedback: str | None) -> str | None:
        if feedback:
            self.refused_last(feedback)
        text = position.prompt() + (f"\nYour previous answer was refused: {feedback}. Answer again." if feedback else "")
        view = {"tick": position.plies, "season_ticks": self.season_ticks, "actions_per_turn": 1,
                "observation": {"text": text, "state": {**position.state(), "refused": feedback}},
                "directions": self.directions}
        self.tick = position.plies
        turn = self.ask(text)
        t0 = time.perf_counter()
        try:  # an arena game is not resumed: its turns go to the transcript, not the recorder
            got = on_loop(self.loop, self._open(view, self.turn_timeout_ms))
            if not self._judge(got, turn, self.turn_timeout_ms):
                turn.latency_ms = round((time.perf_counter() - t0) * 1000, 1)
                self._gone()
                return None  # the play loop counts a timed-out turn as one illegal answer
            move = move_of(got["actions"])
            turn.actions = json.dumps([move])
            return move
        finally:
            self.unrecorded(turn)

    def close(self) -> None:
        on_loop(self.loop, self.ended(self.transcript[-1]["tick"] if self.transcript else None))

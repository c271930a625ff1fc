"""Agent seats as a match plays them, beside the model seats and with their interface:

- world: `AgentSeat.act(observation, deadline)`, what orchestrator.seats.player.play_tick awaits of
  every external seat; ModelSeats builds one per agent seat (`AgentSeat.of`);
- arena: `AgentArenaSeat.answer(position, feedback)`, what engine.arena.play asks of a seat, running
  its wait on the caller's event loop as the arena's model seats do.

Each turn opens on the head's exchange (orchestrator.agents.exchange) and waits there for the
agent's actions, the deadline or the agent's absence; nothing waits in a thread. The turn is counted
and written to the transcript like a model's: `reply` is the submitted body as JSON, `submitted_by`
who sent it; tokens and USD stay 0 (the agent pays its own inference).

Absence (CONTRACT.md section 13): a seat never in touch within absent_s of the match's start, or
out of touch for MISSED_TICKS missed ticks in a row, raises AgentAbsent and the run fails naming the
seat; a seat in touch that misses its deadline only waits that tick (turns.timed_out).
"""
from __future__ import annotations

import asyncio
import json
import time

from orchestrator.agents import exchange as exchanges
from orchestrator.seats import played
from orchestrator.seats.actions import TIMEOUT_WAIT, Refused, from_list
from orchestrator.seats.faults import SeatFailed
from orchestrator.seats.loops import on_loop
from orchestrator.seats.observe_text import render_observation
from orchestrator.seats.player import new_turns, new_usage
from orchestrator.seats.prompt import compose_directions
from orchestrator.seats.seat import seat_label

MISSED_TICKS = 3
MISSED = "no actions within the turn"


class AgentAbsent(SeatFailed):
    """An agent seat whose program never came, or went away: the run fails with agent_absent."""
    code = "agent_absent"


class _Turns:
    """What both kinds of agent seat share: the exchange, counts, transcript and the absence rule."""

    def __init__(self, index: int, seat: dict, *, run_id: str, exchange, turn_timeout_ms: int):
        self.index, self.seat, self.run_id, self.exchange = index, seat, run_id, exchange
        self.provider, self.model = "agent", seat["model"]
        self.label = seat_label(index, seat)
        self.directions = compose_directions(seat.get("skills") or [], seat.get("instructions")) or None
        self.turn_timeout_ms = int(turn_timeout_ms)
        self.started_ms = exchanges.now_ms()
        self.usage = new_usage()
        self.turns = new_turns()
        self.transcript: list[dict] = []
        self.away = 0  # consecutive missed turns while out of touch

    def _row(self, tick: int) -> dict:
        row = {"tick": tick, "seat": self.index, "reply": None, "actions": None, "refused": [], "latency_ms": None,
               "input_tokens": 0, "output_tokens": 0, "error": None, "refusal": None, "truncated": False,
               "submitted_by": None}
        self.transcript.append(row)
        return row

    async def _open(self, view: dict, timeout_ms: int) -> dict:
        self.usage["agent_turns"] += 1
        return await self.exchange.open_turn.remote(self.run_id, self.index, view, timeout_ms, self.started_ms)

    def _judge(self, got: dict, row: dict, timeout_ms: int) -> bool:
        """Whether the agent acted; raises AgentAbsent when the absence rule says so."""
        if got.get("absent"):
            row["error"] = "agent_absent"
            raise AgentAbsent(f"{self.label}: the agent never asked for its turn within {got['absent_s']:g} s of "
                              "the run starting; start the agent (GET /api/v1/runs/:id/seats/:seat/turn) before "
                              "or right after the launch")
        if got.get("missed"):
            self.turns["timed_out"] += 1
            row.update(error=MISSED, latency_ms=float(timeout_ms))
            self.away = 0 if got["in_touch"] else self.away + 1
            return False
        self.away = 0
        self.turns["answered"] += 1
        row.update(reply=got["reply"], submitted_by=got["submitted_by"], latency_ms=float(got["latency_ms"]))
        return True

    def _gone(self) -> None:
        if self.away >= MISSED_TICKS:
            raise AgentAbsent(f"{self.label}: the agent stopped asking for its turns and missed {self.away} in a "
                              "row")

    def report(self) -> dict:
        return {"usage": dict(self.usage), "turns": dict(self.turns)}

    async def ended(self, tick: int | None) -> None:
        await self.exchange.end.remote(self.run_id, tick)


class AgentSeat(_Turns):
    """An agent seat in a world match, played as orchestrator.seats.player.SeatPlayer is."""

    def __init__(self, index: int, seat: dict, *, run_id: str, exchange, turn_timeout_ms: int, actions_per_turn: int,
                 record=None, recorded: dict[int, dict] | None = None):
        super().__init__(index, seat, run_id=run_id, exchange=exchange, turn_timeout_ms=turn_timeout_ms)
        self.actions_per_turn = int(actions_per_turn)
        self.record = record              # async (tick, seat, turn, play, memory, report), or None
        self.recorded = dict(recorded or {})  # tick -> {turn, play, memory} still to replay
        self.replayed = False
        self.tick = 0                     # the tick being asked, set by play_tick

    @classmethod
    def of(cls, index: int, job, match, *, record=None, recorded=None) -> "AgentSeat":
        return cls(index, job.seats[index], run_id=job.run_id, exchange=exchanges.for_job(job.agents),
                   turn_timeout_ms=job.env["turn_timeout_ms"], actions_per_turn=match.apt, record=record,
                   recorded=recorded)

    async def act(self, observation: dict, deadline: float | None = None) -> list:
        """This tick's actions (action dicts, Refused, or the timeout wait row); raises AgentAbsent."""
        again = self.recorded.pop(self.tick, None)
        self.replayed = again is not None
        if again is not None:  # a resumed run: the turn as it was played
            self.transcript.append(again["turn"])
            self.away = 0
            return played.decode(again["play"])
        loop = asyncio.get_running_loop()
        budget_s = self.turn_timeout_ms / 1000 if deadline is None else deadline - loop.time()
        timeout_ms = max(0, round(budget_s * 1000))
        view = {"tick": self.tick, "season_ticks": observation["season_ticks"],
                "actions_per_turn": self.actions_per_turn,
                "observation": {"text": render_observation(observation), "state": observation},
                "directions": self.directions}
        row = self._row(self.tick)
        got = await self._open(view, timeout_ms)
        try:
            acted = self._judge(got, row, timeout_ms)
        except AgentAbsent:
            await self._record(row, [])
            raise
        if not acted:
            await self._record(row, [TIMEOUT_WAIT])
            self._gone()
            return [TIMEOUT_WAIT]
        actions = from_list(got["actions"])[: self.actions_per_turn]
        refused = [a for a in actions if isinstance(a, Refused)]
        if refused:
            self.turns["invalid"] += 1
        row.update(actions=json.dumps([a for a in actions if isinstance(a, dict)]),
                   refused=[r.transcript() for r in refused])
        await self._record(row, actions)
        return actions

    async def _record(self, row: dict, actions: list) -> None:
        if self.record is not None:
            await self.record(self.tick, self.index, row, played.encode(actions), None, self.report())


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
    """An agent seat in an arena game: answer(position, feedback) for engine.arena.play, on the
    caller's loop as orchestrator.play.arena_seats.ArenaSeat. A ply is this game's tick."""

    def __init__(self, index: int, seat: dict, *, job, loop: asyncio.AbstractEventLoop):
        super().__init__(index, seat, run_id=job.run_id, exchange=exchanges.for_job(job.agents),
                         turn_timeout_ms=job.env["turn_timeout_ms"])
        self.loop, self.season_ticks = loop, job.season_ticks
        self.on_fault = None  # ArenaSeat's hook; an agent seat has no provider faults

    def answer(self, position, feedback: str | None) -> str | None:
        if feedback and self.transcript and not self.transcript[-1]["refused"]:
            self.transcript[-1]["refused"] = [feedback]
        text = position.prompt() + (f"\nYour previous answer was refused: {feedback}. Answer again." if feedback else "")
        view = {"tick": position.plies, "season_ticks": self.season_ticks, "actions_per_turn": 1,
                "observation": {"text": text, "state": {**position.state(), "refused": feedback}},
                "directions": self.directions}
        row = self._row(position.plies)
        t0 = time.perf_counter()
        got = on_loop(self.loop, self._open(view, self.turn_timeout_ms))
        if not self._judge(got, row, self.turn_timeout_ms):
            row["latency_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            self._gone()
            return None  # the play loop counts a timed-out turn as one illegal answer
        move = move_of(got["actions"])
        row["actions"] = json.dumps([move])
        return move

    def close(self) -> None:
        on_loop(self.loop, self.ended(self.transcript[-1]["tick"] if self.transcript else None))

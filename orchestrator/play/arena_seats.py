"""Model seats in arena games: the position as text, one move back (docs/ARENA.md).

Built on the seats package's public pieces (SeatBase's turns, make_chat, the fault rule, reply_cost,
the one reply encoding). A seat in the `tools` format gets one tool, `move`; a `json` seat answers
`{"move": "..."}`; either may answer the bare move in text. Every call of a turn is one asking of the
model, so the world's provider-fault rule (docs/SEATS.md, "Provider faults"; seats/faults.py) counts
calls as the world counts ticks, and a run of faulted calls fails the run, never as a loss.
"""
from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Callable

from engine.arena.games import GAMES
from orchestrator.seats.actions import REFUSAL, TRUNCATED
from orchestrator.seats.base import SeatBase
from orchestrator.seats.client import new_client
from orchestrator.seats.faults import FaultStreak, ProviderError, SeatFailed, TurnTimeout
from orchestrator.seats.loop import on_loop
from orchestrator.seats.player import Credential, raw_reply, shipped_prices
from orchestrator.seats.prices import PriceTable, reply_cost
from orchestrator.seats.prompt import compose_directions
from orchestrator.seats.providers import make_chat
from orchestrator.seats.turn import TurnRecord

SYSTEM = ("You are playing a two-player board game against another player. Each turn you are shown the "
          "position and must answer {answer}. An illegal answer is sent back with the reason; the third "
          "illegal answer in one turn loses the game.")
ANSWER = {"json": "with exactly one JSON object: {\"move\": \"<your move>\"}, or {\"move\": \"resign\"} "
                  "to resign",
          "tools": "by calling the `move` tool once with your move, or with \"resign\" to resign"}
MOVE_TOOL = ({"name": "move", "description": f"Play one move: {', '.join(GAMES[g].move_hint for g in sorted(GAMES))}; "
                                             "or resign.",
              "parameters": {"type": "object", "properties": {"move": {"type": "string", "description":
                                                                       "the move, or resign"}},
                             "required": ["move"], "additionalProperties": False}},)
# what the model is told when its own answer was refused here rather than by the game's rules
REASKED = {REFUSAL.reason: "you refused to answer; answer with a move, or resign",
           TRUNCATED.reason: "your reply was cut at its token ceiling (max_tokens) before it named a move; "
                             "answer with the move alone"}


def system_text(seat: dict) -> str:
    """A model seat's system prompt: the game's rules of answering, then its directions (if any)."""
    directions = compose_directions(seat.get("skills") or [], seat.get("instructions"))
    system = SYSTEM.replace("{answer}", ANSWER["json" if seat.get("format") == "json" else "tools"])
    return system + (f"\n\n{directions}" if directions else "")


def read_move(text: str, calls=()) -> str:
    """The move in a reply: the `move` tool's argument, else a JSON object's `move`, else the text."""
    for name, args, _ in calls:
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                continue
        if name == "move" and isinstance(args, dict) and isinstance(args.get("move"), (str, int)):
            return str(args["move"])
    text = text.strip()
    m = re.search(r"\{.*\}", text, re.S)
    if m:
        try:
            obj = json.loads(m.group(0))
            if isinstance(obj, dict) and isinstance(obj.get("move"), (str, int)):
                return str(obj["move"])
        except json.JSONDecodeError:
            pass
    return text


class ArenaSeat(SeatBase):
    """answer(position, feedback) for the arena's game loop; runs its provider calls on `loop`: a loop of
    the game's own, or a model worker's running loop, which the game's thread then waits on. Its turns
    are a world seat's (seats/base.py): a ply is this game's tick, each call one transcript
    row, one turn in the ledger per answer asked.

    on_fault, when set, is called with the ply after every faulted call, so the run view shows the
    fault before the ply is played (the play loop reports after each ply)."""

    def __init__(self, index: int, seat: dict, *, credential: Credential, turn_timeout_ms: int,
                 loop: asyncio.AbstractEventLoop, prices: PriceTable | None = None, usage: dict | None = None):
        super().__init__(index, seat, usage=usage, turn_timeout_ms=turn_timeout_ms)
        self.loop = loop
        self.provider = seat.get("provider") or "router"
        self.format = "json" if seat.get("format") == "json" else "tools"
        self.client = new_client(private_ok=credential.private_ok)
        self.chat = make_chat(self.provider, model=self.model, key=credential.key or "", client=self.client,
                              system=system_text(seat),
                              base_url=credential.base_url,
                              format=self.format, tools=MOVE_TOOL, reasoning=seat.get("reasoning"),
                              temperature=seat.get("temperature"), max_tokens=seat.get("max_tokens"),
                              seat=self.label, max_concurrent=credential.max_concurrent)
        self.prices = credential.table(self.model, prices or shipped_prices())
        self.usd_per_mtok = credential.usd_per_mtok
        self.faults = FaultStreak(self.label, self.provider)
        self.on_fault: Callable[[int], None] | None = None
        self._refused: str | None = None  # the reason this seat refused its own last answer

    def answer(self, position, feedback: str | None) -> str | None:
        """A faulted call is counted (timed_out or provider_errors) and gets its transcript row;
        FAULT_TICKS such calls in a row, whatever their causes, raise SeatFaulted and the run fails under
        the last cause's code. A timed-out call answers None (the play loop counts one illegal answer);
        any other fault is asked again at once. A refusal or a reply cut at its token ceiling is the
        model's answer: it ends a streak, is recorded as such and is refused with that reason (an empty
        answer to the play loop, which re-asks)."""
        if feedback:
            self.refused_last(feedback)
        if feedback and self._refused is not None:
            feedback = REASKED[self._refused]
        self._refused = None
        text = position.prompt() + (f"\nYour previous answer was refused: {feedback}. Answer again." if feedback else "")
        self.tick = position.plies
        counted = True
        while True:
            turn = self.ask(text, counted=counted)  # a call asked again after a fault is the same turn
            counted = False
            t0 = time.perf_counter()
            try:
                reply = self._run(self._send(text))
            except ProviderError as e:
                timed_out = isinstance(e, TurnTimeout)
                self._missed(turn, t0, "timed_out" if timed_out else "provider_errors", e)
                self.faults.fault(e)  # raises SeatFaulted at the FAULT_TICKS-th in a row
                if self.on_fault is not None:
                    self.on_fault(position.plies)
                if timed_out:
                    return None
                continue
            except SeatFailed as e:  # a key rejected, a model unknown: the seat never plays
                self._missed(turn, t0, "provider_errors", e)
                raise
            self.faults.clear()
            self.turns["answered"] += 1
            self.turns["retries"] = self.chat.retries
            turn.reply = raw_reply(reply)
            turn.input_tokens, turn.output_tokens = reply.input_tokens, reply.output_tokens
            turn.usd = reply_cost(self.prices, self.provider, self.model, reply, self.usd_per_mtok)
            self.charge(turn)
            if reply.refusal is not None or reply.truncated:
                refused = REFUSAL if reply.refusal is not None else TRUNCATED
                self._refused = refused.reason
                turn.actions, turn.refused = "[]", [refused.transcript()]
                turn.refusal, turn.truncated = reply.refusal, reply.truncated
                self._log(t0, turn)
                return ""  # no move: the play loop counts an illegal answer and asks again
            move = read_move(reply.text or "", reply.calls)
            turn.actions = json.dumps([move])
            self._log(t0, turn)
            return move

    def _missed(self, turn: TurnRecord, t0: float, count: str, e: Exception) -> None:
        self.turns[count] += 1
        self.turns["retries"] = self.chat.retries
        turn.reply, turn.actions, turn.error = "", "[]", str(e)[:500]
        turn.input_tokens = turn.output_tokens = None
        self._log(t0, turn)

    def _log(self, t0: float, turn: TurnRecord) -> None:
        """One transcript row per call, in the world's shape; a game is not resumed, so not recorded."""
        turn.latency_ms = round((time.perf_counter() - t0) * 1000, 1)
        self.unrecorded(turn)

    async def _send(self, text: str):
        deadline = self.loop.time() + self.turn_s
        try:
            # the deadline is enforced here, so a provider that never answers is counted like any other
            async with asyncio.timeout_at(deadline):
                return await self.chat.send([], text, deadline)
        except TimeoutError:
            raise self.chat.ran_out() from None

    def _run(self, coro):
        return on_loop(self.loop, coro)

    def close(self) -> None:
        self._run(self.client.aclose())

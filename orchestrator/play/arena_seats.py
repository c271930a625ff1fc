"""Model seats in arena games: the position as text, one move back (CONTRACT.md section 11).

Built on orchestrator.seats' public pieces (make_chat, prices, errors). A seat in the `tools` format
gets one tool, `move`; a `json` seat answers `{"move": "..."}`; either may answer the bare move in
text. A turn timeout returns None (the play loop counts it as one illegal answer); a provider that
keeps failing for 3 turns in a row, or rejects the key, fails the run: never a loss.
"""
from __future__ import annotations

import asyncio
import json
import re
import time

from engine.arena.games import GAMES
from orchestrator.seats.player import Credential, new_turns, new_usage
from orchestrator.seats.prices import PriceTable
from orchestrator.seats.prompt import compose_directions
from orchestrator.seats.providers import ProviderError, SeatFailed, TurnTimeout, make_chat, new_client

PROVIDER_FAILURES = 3
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


class ProviderDown(SeatFailed):
    code = "provider_error"


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


class ArenaSeat:
    """answer(position, feedback) for engine.arena.play; runs its provider calls on the caller's loop."""

    def __init__(self, index: int, seat: dict, *, credential: Credential, turn_timeout_ms: int,
                 loop: asyncio.AbstractEventLoop, prices: PriceTable | None = None):
        self.index, self.seat, self.loop = index, seat, loop
        self.provider = seat.get("provider") or "router"
        directions = compose_directions(seat.get("skills") or [], seat.get("instructions"))
        fmt = "json" if seat.get("format") == "json" else "tools"
        system = SYSTEM.replace("{answer}", ANSWER[fmt])
        self.client = new_client(private_ok=credential.private_ok)
        self.chat = make_chat(self.provider, model=seat["model"], key=credential.key or "", client=self.client,
                              system=system + (f"\n\n{directions}" if directions else ""),
                              base_url=credential.base_url,
                              format=fmt, tools=MOVE_TOOL, reasoning=seat.get("reasoning"),
                              temperature=seat.get("temperature"), max_tokens=seat.get("max_tokens"),
                              seat=f"roster[{index}] (model {seat['model']})")
        self.timeout_s = turn_timeout_ms / 1000
        self.prices = prices or PriceTable.shipped()
        self.usd_per_mtok = credential.usd_per_mtok
        self.usage = new_usage()
        self.turns = new_turns()  # the world's counts; `invalid` is settled from the play loop, which judges legality
        self.failures = 0
        self.transcript: list[dict] = []

    def _log(self, ply: int, t0: float, reply: str = "", move: str | None = None, error: str | None = None,
             tokens: tuple = (None, None)) -> None:
        """One transcript row per answer, in the world's shape: a ply is this game's tick."""
        self.transcript.append({"tick": ply, "seat": self.index, "reply": reply[:2000],
                                "actions": json.dumps([move] if move is not None else []), "refused": [],
                                "latency_ms": round((time.perf_counter() - t0) * 1000, 1),
                                "input_tokens": tokens[0], "output_tokens": tokens[1], "error": error})

    def answer(self, position, feedback: str | None) -> str | None:
        text = position.prompt() + (f"\nYour previous answer was refused: {feedback}. Answer again." if feedback else "")
        if feedback and self.transcript:
            self.transcript[-1]["refused"] = [feedback]
        self.usage["agent_turns"] += 1
        while True:
            t0 = time.perf_counter()
            try:
                reply = self.loop.run_until_complete(self._send(text))
            except TurnTimeout as e:
                self.failures = 0
                self.turns["timed_out"] += 1
                self._log(position.plies, t0, error=f"timed out: {e}")
                return None
            except ProviderError as e:
                self.failures += 1
                self.turns["provider_errors"] += 1
                self._log(position.plies, t0, error=str(e)[:500])
                if self.failures >= PROVIDER_FAILURES:
                    raise ProviderDown(f"roster[{self.index}] (model {self.seat['model']}): the {self.provider} "
                                       f"provider failed {self.failures} times in a row: {e}") from e
                continue
            self.failures = 0
            self.turns["answered"] += 1
            self.turns["retries"] = self.chat.retries
            self.usage["input_tokens"] += reply.input_tokens
            self.usage["output_tokens"] += reply.output_tokens
            self.usage["usd"] += self.cost(reply.input_tokens, reply.output_tokens)
            move = read_move(reply.text or "", reply.calls)
            said = reply.text or "".join(f"{n}({a if isinstance(a, str) else json.dumps(a)})" for n, a, _ in reply.calls)
            self._log(position.plies, t0, said, move, tokens=(reply.input_tokens, reply.output_tokens))
            return move

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        if self.usd_per_mtok is not None:  # the key's own price (self-hosted servers that charge), as in the world
            return (input_tokens * self.usd_per_mtok[0] + output_tokens * self.usd_per_mtok[1]) / 1e6
        return self.prices.cost(self.provider, self.seat["model"], input_tokens, output_tokens)

    async def _send(self, text: str):
        return await self.chat.send([], text, self.loop.time() + self.timeout_s)

    def close(self) -> None:
        self.loop.run_until_complete(self.client.aclose())

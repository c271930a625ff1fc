"""Model seats in arena games: the position as text, one move back (CONTRACT.md section 11).

Built on orchestrator.seats' public pieces (make_chat, prices, errors). The seat is asked in the
JSON format whatever its recorded format: the reply is `{"move": "..."}` (or the bare move). A turn
timeout returns None (the play loop counts it as one illegal answer); a provider that keeps failing
for 3 turns in a row, or rejects the key, fails the run: never a loss.
"""
from __future__ import annotations

import asyncio
import json
import re

from orchestrator.seats.prices import PriceTable
from orchestrator.seats.prompt import compose_directions
from orchestrator.seats.providers import ProviderError, SeatFailed, TurnTimeout, make_chat, new_client

PROVIDER_FAILURES = 3
SYSTEM = ("You are playing a two-player board game against another player. Each turn you are shown the "
          "position and must answer with exactly one JSON object: {\"move\": \"<your move>\"}, or "
          "{\"move\": \"resign\"} to resign. An illegal answer is sent back with the reason; the third "
          "illegal answer in one turn loses the game.")


class ProviderDown(SeatFailed):
    code = "provider_error"


def read_move(text: str) -> str:
    """The move in a reply: a JSON object's `move`, else the text itself."""
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
    """answer(game, feedback) for engine.arena.play; runs its provider calls on the caller's loop."""

    def __init__(self, index: int, seat: dict, *, key: str | None, base_url: str | None, turn_timeout_ms: int,
                 loop: asyncio.AbstractEventLoop, prices: PriceTable | None = None):
        self.index, self.seat, self.loop = index, seat, loop
        self.provider = seat.get("provider") or "router"
        directions = compose_directions(seat.get("skills") or [], seat.get("instructions"))
        self.client = new_client()
        self.chat = make_chat(self.provider, model=seat["model"], key=key or "", client=self.client,
                              system=SYSTEM + (f"\n\n{directions}" if directions else ""), base_url=base_url,
                              format="json", reasoning=seat.get("reasoning"), temperature=seat.get("temperature"),
                              max_tokens=seat.get("max_tokens"), seat=f"roster[{index}] (model {seat['model']})")
        self.timeout_s = turn_timeout_ms / 1000
        self.prices = prices or PriceTable.shipped()
        self.usage = {"agent_turns": 0, "input_tokens": 0, "output_tokens": 0, "usd": 0.0}
        self.failures = 0
        self.transcript: list[dict] = []

    def answer(self, game, feedback: str | None) -> str | None:
        text = game.prompt() + (f"\nYour previous answer was refused: {feedback}. Answer again." if feedback else "")
        self.usage["agent_turns"] += 1
        while True:
            try:
                reply = self.loop.run_until_complete(self._send(text))
            except TurnTimeout:
                self.failures = 0
                return None
            except ProviderError as e:
                self.failures += 1
                if self.failures >= PROVIDER_FAILURES:
                    raise ProviderDown(f"roster[{self.index}] (model {self.seat['model']}): the {self.provider} "
                                       f"provider failed {self.failures} times in a row: {e}") from e
                continue
            self.failures = 0
            self.usage["input_tokens"] += reply.input_tokens
            self.usage["output_tokens"] += reply.output_tokens
            self.usage["usd"] += self.prices.cost(self.provider, self.seat["model"], reply.input_tokens,
                                                  reply.output_tokens)
            move = read_move(reply.text or "".join(json.dumps(a) for _, a, _ in reply.calls))
            self.transcript.append({"ply": game.plies, "reply": reply.text[:2000], "move": move})
            return move

    async def _send(self, text: str):
        return await self.chat.send([], text, self.loop.time() + self.timeout_s)

    def close(self) -> None:
        self.loop.run_until_complete(self.client.aclose())

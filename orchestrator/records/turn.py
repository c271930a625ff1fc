"""A seat's turn as the store keeps it, and its reply in the one encoding every seat writes.

A reply is stored as text: the model's words alone; its tool calls as JSON `[{name, arguments}]`
when it said nothing else; both as `{"text", "tool_calls"}`. An agent's reply is the body it
submitted, as JSON text. `Said.decode` reads that back, and also what earlier versions wrote for an
arena seat's calls (`move({"move": "e4"})`), so forks, exports and pages decode replies one way.
"""
from __future__ import annotations

import json
import re
from typing import Any

from pydantic import Field

from orchestrator.records.base import Count, Record

_CALL_NAME = re.compile(r"[A-Za-z_][\w.-]{0,63}\(")


class Call(Record):
    """One tool call of a reply: its name and its arguments as the provider sent them (an object, or
    JSON text)."""
    name: str
    arguments: Any = None


class Said(Record):
    """What a seat answered in one turn: its text and its tool calls, in order."""
    text: str = ""
    calls: tuple[Call, ...] = ()

    @classmethod
    def of(cls, text: str | None, calls=()) -> Said:
        """From a provider's reply: calls as (name, arguments[, id]) tuples."""
        return cls(text=text or "", calls=tuple(Call(name=c[0], arguments=c[1]) for c in calls))

    def encode(self) -> str:
        calls = [{"name": c.name, "arguments": c.arguments} for c in self.calls]
        if not calls:
            return self.text
        return json.dumps({"text": self.text, "tool_calls": calls}) if self.text else json.dumps(calls)

    @classmethod
    def decode(cls, raw: str | None, *, calls: bool = True) -> Said:
        """A stored reply read back. calls: whether the seat could make tool calls (a `tools`-format
        model seat); any other seat's reply is its text, whatever it looks like."""
        if not raw or not calls:
            return cls(text=raw or "")
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, dict) and set(data) == {"text", "tool_calls"} and _calls(data["tool_calls"]):
            return cls(text=data["text"] if isinstance(data["text"], str) else "",
                       calls=tuple(Call(**c) for c in data["tool_calls"]))
        if isinstance(data, list) and data and _calls(data):
            return cls(calls=tuple(Call(**c) for c in data))
        legacy = _arena_calls(raw) if data is None else None
        return cls(calls=legacy) if legacy else cls(text=raw)


def _calls(value) -> bool:
    return isinstance(value, list) and all(
        isinstance(c, dict) and set(c) == {"name", "arguments"} and isinstance(c["name"], str) for c in value)


def _arena_calls(raw: str) -> tuple[Call, ...] | None:
    """An arena seat's calls as earlier versions wrote them: `name(<JSON arguments>)`, one after the
    other; None unless the whole text reads so."""
    decoder, out, k = json.JSONDecoder(), [], 0
    while k < len(raw):
        m = _CALL_NAME.match(raw, k)
        if m is None:
            return None
        try:
            args, end = decoder.raw_decode(raw, m.end())
        except (ValueError, RecursionError):
            return None
        if raw[end:end + 1] != ")":
            return None
        out.append(Call(name=m.group(0)[:-1], arguments=args))
        k = end + 1
    return tuple(out) or None


class RecordedTurn(Record):
    """One turn of a playing run as the store holds it: its transcript row, what the seat played
    (in the seats' played encoding) and the conversation entry it left, if any."""
    tick: Count
    seat: Count
    turn: dict[str, Any]
    play: list[Any]
    memory: Any = None

    def replayed(self) -> dict:
        """As a resumed run's seats replay it."""
        return {"tick": self.tick, "seat": self.seat, "turn": self.turn, "play": self.play, "memory": self.memory}


class SeatTotals(Record):
    """A seat's usage and counts as a playing run last metered them."""
    usage: dict[str, Any]
    turns: dict[str, Any]


class Replay(Record):
    """What a resumed run replays: its recorded turns in order, and the totals of every seat that
    played a turn."""
    turns: tuple[RecordedTurn, ...] = ()
    seats: dict[int, SeatTotals] = Field(default_factory=dict)

    def plain(self) -> dict:
        """As the seats' recorder takes it on replay."""
        return {"turns": [t.replayed() for t in self.turns],
                "seats": {i: {"usage": s.usage, "turns": s.turns} for i, s in self.seats.items()}}

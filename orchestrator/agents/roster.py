"""An agent seat at launch: `{provider: "agent", model: <label>, name?, skills?, instructions?}`.

The label names the agent (1 to 80 characters); the model settings a provider call takes (reasoning,
temperature, max_tokens, format) mean nothing to a program of the account's own and are refused with
bad_roster rather than silently dropped. No key is needed: the seat is free (the agent pays its own
inference) and its usage tokens and USD stay 0; its turns are metered like any seat's.
"""
from __future__ import annotations

import hashlib

from orchestrator.errors import DomainError
from orchestrator.provider_kinds import AGENT

MAX_LABEL = 80
MODEL_SETTINGS = ("reasoning", "temperature", "max_tokens", "format")
# Actions reach the engine as a json-format model seat writes them: the roster says so.
FORMAT = "json"
SCAFFOLD = "agent-seat-v1"


def is_agent(seat: dict) -> bool:
    return seat.get("provider") == AGENT


def check(label: str, seat: dict) -> None:
    """bad_roster naming the seat (label: its roster label) for what an agent seat cannot carry."""
    if len(seat["model"]) > MAX_LABEL:
        raise DomainError("bad_roster", f"{label}: an agent seat's model is its label, 1 to {MAX_LABEL} characters; "
                          f"this one has {len(seat['model'])}")
    given = [f for f in MODEL_SETTINGS if seat.get(f) is not None]
    if given:
        raise DomainError("bad_roster", f"{label}: {', '.join(given)} cannot be set on an agent seat (your program "
                          "plays it and calls its own models); drop them")


def scaffold(directions: str) -> str:
    """The seat's scaffold identity: the agent's own program, tagged by the directions it was handed."""
    if not directions:
        return SCAFFOLD
    return f"{SCAFFOLD}+custom.{hashlib.sha256(directions.encode('utf-8')).hexdigest()[:12]}"

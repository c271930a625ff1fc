"""Actions as seats send them (dicts) <-> the int rows the kernels read.

ACTION_SPECS is the one description of every action and its arguments: the rules document, the
tool schemas offered to models and the JSON reply format are all derived from it.
"""
from __future__ import annotations

import numpy as np

from engine.kernels.codes import (
    ACTIONS, DIRECTIONS, INVALID, N_RES, NO_ACTION, R_BAD_ARGUMENTS, R_UNKNOWN_ACTION, RESOURCES,
)
from engine.rules import WORLD, effect_text, share_text, uses_text
from engine.text import valid

_GY, _TOOL = WORLD["gather_yield"], WORLD["tool_gather_bonus"]
SAY_MAX = WORLD["say_max_chars"]

# name -> (description, [(argument, type, description)]) ; types: direction, agent, resource, int, text, offer
ACTION_SPECS: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "wait": ("Do nothing this action.", []),
    "move": ("Step one tile north, east, south or west. Water and the map edge block.",
             [("direction", "direction", "north, east, south or west")]),
    "gather": (f"Take goods from the tile you stand on ({_GY} unit{'s' if _GY != 1 else ''}, {_GY + _TOOL} with a "
               f"tool; relics always {_GY}).", []),
    "eat": (f"Eat 1 food from your stock to restore {WORLD['eat_satiety']} satiety.", []),
    "build": (f"Build your shelter from {uses_text('shelter')}: {effect_text('shelter')}.", []),
    "craft": (f"Craft your tool from {uses_text('tool')}: {effect_text('tool')}.", []),
    "offer": ("Offer a trade to an agent within range: you give give_qty of give, they give want_qty of want.",
              [("to", "agent", "the agent id to offer to"), ("give", "resource", "resource you give"),
               ("give_qty", "int", "units you give"), ("want", "resource", "resource you want"),
               ("want_qty", "int", "units you want")]),
    "accept": ("Accept an open offer made to you; it settles at once if both sides still hold the goods.",
               [("offer_id", "offer", "the offer's id")]),
    "decline": ("Decline an open offer made to you.", [("offer_id", "offer", "the offer's id")]),
    "raid": (f"Raid an adjacent agent to take {share_text(WORLD['raid_share_divisor'])} of each of its goods. "
             "Raids can fail and cost you satiety.",
             [("target", "agent", "the adjacent agent's id")]),
    "say": ("Say a short message to everyone, or to one agent.",
            [("text", "text", f"the message, at most {SAY_MAX} characters"),
             ("to", "agent?", "optional agent id; omit to speak to all")]),
}
assert tuple(ACTION_SPECS) == ACTIONS


def _int(v) -> int | None:
    """An int the event log's int32 columns hold as sent; anything else is bad_arguments (a refused
    row must replay as the same action)."""
    if isinstance(v, bool) or not isinstance(v, int) or not -2**31 < v < 2**31:
        return None
    return v


def encode(action: dict, messages: list[str], say_max: int = SAY_MAX) -> np.ndarray:
    """One action dict {"action": name, ...args} -> int64[6] row. Anything malformed becomes an
    INVALID row (refused with unknown_action or bad_arguments); texts go to `messages`."""
    row = np.zeros(6, dtype=np.int64)
    name = action.get("action") if isinstance(action, dict) else None
    if not isinstance(name, str) or name not in ACTION_SPECS:
        row[0] = INVALID
        row[1] = R_UNKNOWN_ACTION
        row[2] = _note(messages, f"unknown action {name!r}"[:say_max])
        return row
    kind = ACTIONS.index(name)
    row[0] = kind
    for k, (arg, typ, _) in enumerate(ACTION_SPECS[name][1]):
        v = action.get(arg)
        if typ == "direction":
            val = DIRECTIONS.index(v) if v in DIRECTIONS else None
        elif typ == "resource":
            val = RESOURCES.index(v) if v in RESOURCES else None
        elif typ == "text":
            # text the log cannot hold (a lone surrogate) is refused like a wrong type, whoever sent it
            val = _note(messages, v[:say_max]) if isinstance(v, str) and valid(v[:say_max]) else None
        elif typ == "agent?":
            val = -1 if v is None else _int(v)
        else:
            val = _int(v)
        if val is None:
            row[:] = 0
            row[0] = INVALID
            row[1] = R_BAD_ARGUMENTS
            row[2] = _note(messages, f"{name}: bad or missing {arg!r}")
            return row
        row[1 + k] = val
    if name == "say":  # stored as (to, message index) like the kernel expects
        row[1], row[2] = row[2], row[1]
    return row


def _note(messages: list[str], text: str) -> int:
    messages.append(text)
    return len(messages) - 1


def decode(kind: int, a: int, b: int, c: int, d: int, e: int, messages: list[str]) -> dict:
    """A logged action row back to the dict a seat would send (for replays and play-by-play)."""
    name = ACTIONS[kind]
    args = ACTION_SPECS[name][1]
    vals = [a, b, c, d, e]
    if name == "say":
        vals = [b, a]
    out: dict = {"action": name}
    for (arg, typ, _), v in zip(args, vals):
        if typ == "direction":
            out[arg] = DIRECTIONS[v] if 0 <= v < 4 else v
        elif typ == "resource":
            out[arg] = RESOURCES[v] if 0 <= v < N_RES else v
        elif typ == "text":
            out[arg] = messages[v] if 0 <= v < len(messages) else ""
        elif typ == "agent?":
            if v != -1:
                out[arg] = v
        else:
            out[arg] = v
    return out


EMPTY_ROW = np.array([NO_ACTION, 0, 0, 0, 0, 0], dtype=np.int64)

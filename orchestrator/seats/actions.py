"""Actions as a model sees them and as its reply becomes engine actions.

Both reply formats ("tools": one tool per action, `tool_specs`; "json": one JSON object in the text,
JSON_REPLY_TEXT) are derived from the engine's action specs, so a new action reaches models without
touching this file. Replies become action dicts left for the engine to judge, so a refusal is recorded
with the engine's own reason; what cannot even be read as an action becomes a `Refused`, an INVALID
row with the same reason codes. The event log is public, so nothing that reaches it quotes the model:
a Refused's `note` is a fixed phrase per cause and an unknown action name is refused without naming
it; the reply and `detail` go to the run owner's transcript only.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.actions import ACTION_SPECS
from engine.kernels.codes import (
    DIRECTIONS, INVALID, R_BAD_ARGUMENTS, R_UNKNOWN_ACTION, RESOURCES, WAIT,
)
from engine.rules import WORLD
from engine.text import invalid_at
from orchestrator.finite import action_unfit

# Argument types of ACTION_SPECS -> JSON schema. "agent?" is optional (omitted = everyone).
TYPE_SCHEMA = {
    "direction": {"type": "string", "enum": list(DIRECTIONS)},
    "resource": {"type": "string", "enum": list(RESOURCES)},
    "agent": {"type": "integer"},
    "agent?": {"type": "integer"},
    "int": {"type": "integer"},
    "offer": {"type": "integer"},
    "text": {"type": "string", "maxLength": WORLD["say_max_chars"]},
}

# Wait rows with their cause in `a` (engine WAIT_CAUSES: 0 chosen, 1 timeout, 2 no reply).
# encode() only writes a=0, so the seat layer hands the engine these rows directly.
TIMEOUT_WAIT = np.array([WAIT, 1, 0, 0, 0, 0], dtype=np.int64)
NO_REPLY_WAIT = np.array([WAIT, 2, 0, 0, 0, 0], dtype=np.int64)
CHOSEN_WAIT = {"action": "wait"}


@dataclass(frozen=True)
class Refused:
    """A reply that names no readable action; logged by the engine as INVALID.

    reason: unknown_action or bad_arguments (engine REASONS), or the seat layer's own refusal (the model
    refused to answer) and truncated (its token ceiling cut the reply), which the engine logs as
    unknown_action with the reason as the note. note: public, never reply text. detail: the owner's."""
    reason: str
    note: str
    detail: str | None = None

    def row(self, messages: list[str]) -> np.ndarray:
        """The INVALID row the step kernel logs: (INVALID, reason, note index), as encode() builds it."""
        messages.append(self.note[: WORLD["say_max_chars"]])
        code = R_BAD_ARGUMENTS if self.reason == "bad_arguments" else R_UNKNOWN_ACTION
        return np.array([INVALID, code, len(messages) - 1, 0, 0, 0], dtype=np.int64)

    def transcript(self) -> str:
        """The transcript's line: reason, note and the detail."""
        return f"{self.reason}: {self.note}" + (f": {self.detail}" if self.detail else "")


REFUSAL = Refused("refusal", "refusal")
TRUNCATED = Refused("truncated", "truncated")


@lru_cache(maxsize=1)
def tool_specs() -> tuple[dict, ...]:
    """One neutral tool per action: {name, description, parameters (JSON schema)}."""
    out = []
    for name, (description, args) in ACTION_SPECS.items():
        props = {arg: dict(TYPE_SCHEMA[typ], description=text) for arg, typ, text in args}
        required = [arg for arg, typ, _ in args if not typ.endswith("?")]
        out.append({"name": name, "description": description,
                    "parameters": {"type": "object", "properties": props, "required": required,
                                   "additionalProperties": False}})
    return tuple(out)


def _json_reply_text() -> str:
    lines = ["Reply with one JSON object and nothing else, in this form:",
             '{"actions": [{"action": "move", "direction": "north"}, {"action": "gather"}]}',
             "List up to your actions per turn, in the order to play them; extra ones are ignored.",
             "The actions and their arguments:"]
    for name, (description, args) in ACTION_SPECS.items():
        sig = ", ".join(f'"{a}": <{TYPE_SCHEMA[t]["type"]}{" (optional)" if t.endswith("?") else ""}>'
                        for a, t, _ in args)
        lines.append(f'- {{"action": "{name}"{", " + sig if sig else ""}}}: {description}')
    return "\n".join(lines)


JSON_REPLY_TEXT = _json_reply_text()


def known(name) -> bool:
    return isinstance(name, str) and name in ACTION_SPECS


def unknown(name) -> Refused:
    return Refused("unknown_action", "unknown action", f"{str(name)[:80]!r} is not an action")


def from_call(name, arguments) -> dict | Refused:
    """One tool call -> an action dict. arguments: JSON text (OpenAI style) or an object (Anthropic)."""
    if not known(name):
        return unknown(name)
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return Refused("bad_arguments", f"{name}: arguments are not valid JSON")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return Refused("bad_arguments", f"{name}: arguments must be a JSON object")
    return checked({**arguments, "action": name})  # the tool's name wins over any "action" argument


def checked(action: dict) -> dict | Refused:
    """An action of a known name, refused whole when any of its text is not valid Unicode (a lone
    surrogate, from a JSON escape) or it is past the bounds `action_unfit` sets for an action (a number
    JSON cannot carry, deep nesting, its size): no transcript, log or page could hold it."""
    why = action_unfit(action)
    if why is not None:
        return Refused("bad_arguments", f"{action['action']}: a field no transcript can hold", why)
    bad = invalid_at(action)
    if bad is None:
        return action
    field = ".".join(str(p) for p in bad) or "a field name"
    return Refused("bad_arguments", f"{action['action']}: text that is not valid Unicode",
                   f"{field} holds a lone UTF-16 surrogate")


def _first_object(text: str):
    """The JSON value in a text reply: the whole text, else a ```json fence, else the outermost {...}."""
    s = text.strip()
    candidates = [s]
    if "```" in s:
        inner = s.split("```")[1]
        candidates.append(inner[4:] if inner.startswith("json") else inner)
    if "{" in s and "}" in s:
        candidates.append(s[s.index("{"): s.rindex("}") + 1])
    for c in candidates:
        try:
            return json.loads(c)
        except ValueError:
            continue
    return None


def from_text(text: str) -> list[dict | Refused]:
    """A json-format reply -> actions. An empty action list is a chosen wait."""
    value = _first_object(text or "")
    if isinstance(value, dict) and "actions" not in value and "action" in value:
        value = [value]  # a lone action object: accept it rather than refuse a clear intent
    elif isinstance(value, dict):
        value = value.get("actions")
    if not isinstance(value, list):
        excerpt = (text or "").strip().replace("\n", " ")[:80]
        return [Refused("unknown_action", "malformed reply", f"expected {{\"actions\": [...]}}, got {excerpt!r}")]
    return from_list(value)


def from_reply(reply, fmt: str) -> list[dict | Refused | np.ndarray]:
    """A model's `Reply` -> its actions, in the seat's format ("tools" or "json")."""
    if reply.refusal is not None:
        return [REFUSAL]
    if reply.truncated:
        return [TRUNCATED]
    calls = [from_call(name, args) for name, args, _ in reply.calls]
    text = reply.text.strip()
    # each format reads the other's shape too: a clear intent is played rather than refused
    if fmt == "tools":
        return calls or (from_text(text) if text else [NO_REPLY_WAIT])
    return (from_text(text) if text else calls) or [NO_REPLY_WAIT]


def from_list(value: list) -> list[dict | Refused]:
    """The action objects of a json-format reply (or an agent seat's submission) -> actions. An empty
    list is a chosen wait."""
    if not value:
        return [dict(CHOSEN_WAIT)]
    return [(checked(a) if known(a.get("action")) else unknown(a.get("action"))) if isinstance(a, dict)
            else Refused("bad_arguments", f"actions[{k}] is not an object") for k, a in enumerate(value)]

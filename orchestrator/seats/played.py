"""What a seat played in one turn, as JSON the store keeps, and back.

A model run resumed after a fault (a worker killed, the service restarted or stopped) replays its
recorded turns through the same tick code that played them, so the engine receives the same rows in
the same order and the match comes out byte-identical. The encoding therefore keeps what the tick code
tells apart: action dicts as they came, refusals with their reason, note and detail, and the two wait
rows by cause (the tick code recognises those by identity).
"""
from __future__ import annotations

from orchestrator.seats.actions import NO_REPLY_WAIT, TIMEOUT_WAIT, Refused

_WAITS = {"timeout": TIMEOUT_WAIT, "no_reply": NO_REPLY_WAIT}


def encode(actions: list) -> list[dict]:
    out = []
    for a in actions:
        if a is TIMEOUT_WAIT:
            out.append({"wait": "timeout"})
        elif a is NO_REPLY_WAIT:
            out.append({"wait": "no_reply"})
        elif isinstance(a, Refused):
            out.append({"refused": [a.reason, a.note, a.detail]})
        else:
            out.append({"act": a})
    return out


def decode(played: list[dict]) -> list:
    out = []
    for p in played:
        if "wait" in p:
            out.append(_WAITS[p["wait"]])
        elif "refused" in p:
            out.append(Refused(*p["refused"]))
        else:
            out.append(p["act"])
    return out

"""One record of a turn.

`TurnRecord` is a turn as it happened, whoever played it (a model seat of the world, an agent seat,
a model seat in an arena game): what the seat was asked, its reply, the actions played, refusals,
tokens and USD, latency and the cause of a fault. `row()` is its transcript row
(the archive's TRANSCRIPT_SCHEMA fields), the form the store and the archive keep; what
was asked and the USD stay out of it (the archive's schema is unchanged: the observation is the
match log's, the spend the ledger's).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

_UNWRITTEN = ("asked", "usd")  # in the record, not in its transcript row


@dataclass
class TurnRecord:
    tick: int                          # the tick asked (an arena game's ply)
    seat: int
    asked: str | None = None           # the observation as the seat was shown it
    reply: str | None = None           # as it came: text, tool calls as JSON, an agent's body as JSON
    actions: str | None = None         # what was played, as JSON text
    refused: list = field(default_factory=list)  # why a part was refused, one line each
    latency_ms: float | None = None
    input_tokens: int | None = 0
    output_tokens: int | None = 0
    usd: float = 0.0
    error: str | None = None           # the cause of a fault: no answer in time, a provider error, absence
    refusal: str | None = None         # the model's own refusal text
    truncated: bool = False            # the reply was cut at its token ceiling
    submitted_by: str | None = None    # an agent seat's turn: "token:<prefix>" or "console:<handle>"

    def row(self) -> dict:
        row = asdict(self)
        for k in _UNWRITTEN:
            del row[k]
        return row


def actions_json(actions: list) -> str:
    """The playable actions of a turn as its row keeps them (refusals go to `refused`)."""
    return json.dumps([a for a in actions if isinstance(a, dict)])


def new_turns() -> dict:
    """answered: a reply came back (invalid ones included); invalid: a reply with nothing playable or
    a part refused; timed_out: no answer within the turn; provider_errors: every other provider fault
    (connection errors, 5xx/529/429 past the retries, other 4xx, bodies that are no answer, error
    objects); retries: extra attempts within turns."""
    return {"answered": 0, "invalid": 0, "timed_out": 0, "provider_errors": 0, "retries": 0}

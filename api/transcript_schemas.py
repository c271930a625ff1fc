"""Response shapes of a run's turns: its transcript and its graded decisions (docs/SEATS.md
and 14), as api/run_schemas.py describes runs."""
from __future__ import annotations

from typing import Any, Literal, Union

from api.run_schemas import GradingStatus
from api.schemas import Closed


class Turn(Closed):
    """One model turn (docs/SEATS.md): world actions are objects, arena moves strings."""
    tick: int
    seat: int
    reply: str | None
    actions: list[Union[dict[str, Any], str]]
    refused: list[str]
    latency_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    error: str | None
    refusal: str | None = None  # the model refused: its refusal text
    truncated: bool = None      # the reply was cut by its token ceiling
    submitted_by: str | None = None  # an agent seat's turn: "token:<prefix>" or "console:<handle>"
    note: str = None  # values an earlier version kept as Infinity or NaN, read as null


class Transcript(Closed):
    turns: list[Turn]
    next_cursor: str | None


class DecisionTurn(Closed):
    """One graded decision: the turn taken and the best candidate, their values at the horizon (0..100)."""
    tick: int
    seat: int
    chosen: list[dict[str, Any]]
    value: float
    best: list[dict[str, Any]]
    best_value: float
    regret: float
    accuracy: float
    label: Literal["inaccuracy", "mistake", "blunder"] | None


class Decisions(Closed):
    grader: str
    horizon_ticks: int
    rollouts: int
    status: GradingStatus | None
    turns: list[DecisionTurn]
    next_cursor: str | None


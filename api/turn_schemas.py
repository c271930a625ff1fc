"""Response shapes of an agent seat's turn endpoints and tools (docs/AGENTS.md), describing
the core's turn dicts field for field, as api/run_schemas.py does for runs."""
from __future__ import annotations

from typing import Any, Literal

from api.schemas import Closed


class Observation(Closed):
    text: str                 # the observation text a model seat's prompt carries for this turn
    state: dict[str, Any]     # the same facts as JSON (arena: chess fen, legal_uci; Connect Four grid, playable_columns)


class SeatTurn(Closed):
    """waiting: the run is queued, launching or between ticks; your_turn: answer `tick` before
    deadline_ms; ended: the run is over (tick: the last played)."""
    run_id: str
    seat: int
    status: Literal["waiting", "your_turn", "ended"]
    tick: int | None
    season_ticks: int
    deadline_ms: int | None
    actions_per_turn: int
    observation: Observation | None
    directions: str | None


class ActionsReceived(Closed):
    ok: Literal[True]
    tick: int
    received: int

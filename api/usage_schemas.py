"""Response shape of an account's usage and allowances (GET /api/v1/usage), as api/run_schemas.py
describes runs."""
from __future__ import annotations

from api.run_schemas import Funding, Provider, Status
from api.schemas import Closed


class Paid(Closed):
    account: float
    platform: float


class ModelUsage(Closed):
    model: str
    provider: Provider
    funding: Funding
    agent_turns: int
    input_tokens: int
    output_tokens: int
    usd: float


class RunUsage(Closed):
    run_id: str
    name: str
    status: Status
    usd: Paid
    agent_turns: int
    note: str = None  # the run's roster holds usage an earlier version stored as Infinity or NaN


class Month(Closed):
    month: str
    usd: Paid
    by_model: list[ModelUsage]
    runs: list[RunUsage]


class TurnAllowance(Closed):
    used: int
    held: int
    remaining: int | None
    limit: int | None


class Used(Closed):
    used: int
    limit: int


class CapRange(Closed):
    min: float
    max: float


class TokenAllowance(Closed):
    active: int
    limit: int


class Allowances(Closed):
    agent_turns: TurnAllowance
    queued_runs: Used
    spend_cap_usd: CapRange
    access_tokens: TokenAllowance
    requests_per_minute: int


class Usage(Closed):
    months: list[Month]
    allowances: Allowances


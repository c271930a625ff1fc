"""What an account spent, as GET /usage sums it: per run and per model, by month, split by who paid."""
from __future__ import annotations

from pydantic import Field

from orchestrator.records.base import Count, Record, Text, Usd


class RunSpend(Record):
    """One run's spend: its month (when it finished, else when it was launched; UTC), its seats' USD by
    who paid, and its agent turns (settled once ended, else reserved). intact: its roster's usage read
    as stored (an earlier version's infinite usage is counted as 0)."""
    month: str = Field(pattern=r"^[0-9]{4}-[0-9]{2}$")
    run_id: str
    name: Text
    status: str
    agent_turns: Count
    account_usd: Usd
    platform_usd: Usd
    intact: bool


class ModelSpend(Record):
    """One model's use in one month, by who paid."""
    month: str = Field(pattern=r"^[0-9]{4}-[0-9]{2}$")
    model: Text | None
    provider: str | None
    funding: str | None
    agent_turns: Count
    input_tokens: Count
    output_tokens: Count
    usd: Usd

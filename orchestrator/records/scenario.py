"""A saved scenario: its normalized definition, content hash and times."""
from __future__ import annotations

from typing import Any

from pydantic import Field

from orchestrator.records.base import MS, Ms, Record


class Scenario(Record):
    id: str = Field(max_length=64)
    account_id: str = Field(max_length=64)
    name: str = Field(max_length=60)
    description: str = Field(max_length=300)
    season_ticks: int = Field(ge=1)
    env: dict[str, Any]
    hash: str = Field(max_length=128)
    created_at_ms: Ms
    updated_at_ms: int | None = Field(**MS)

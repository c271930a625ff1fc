"""An account's own skill (the built-ins live with the engine)."""
from __future__ import annotations

from pydantic import Field

from orchestrator.records.base import MS, Ms, Record


class Skill(Record):
    id: str = Field(max_length=64)
    account_id: str = Field(max_length=64)
    name: str = Field(max_length=60)
    text: str = Field(max_length=2000)
    created_at_ms: Ms
    updated_at_ms: int | None = Field(**MS)

    def view(self) -> dict:
        return self.model_dump(exclude={"account_id"})

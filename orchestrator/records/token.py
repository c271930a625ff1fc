"""An API access token as stored: its SHA-256, never the plaintext."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from orchestrator.records.base import MS, Ms, Record, Text

Scope = Literal["scenarios:read", "scenarios:write", "runs:read", "runs:write"]


class Token(Record):
    id: str = Field(max_length=64)
    account_id: str = Field(max_length=64)
    name: Text
    prefix: str = Field(max_length=12)
    scopes: tuple[Scope, ...]
    created_at_ms: Ms
    expires_at_ms: int | None = Field(**MS)
    revoked_at_ms: Ms | None
    last_used_at_ms: Ms | None

    def status(self, now: int) -> str:
        if self.revoked_at_ms is not None:
            return "revoked"
        if self.expires_at_ms is not None and self.expires_at_ms <= now:
            return "expired"
        return "active"

    def view(self, now: int) -> dict:
        return {"name": self.name, "prefix": self.prefix, "scopes": list(self.scopes), "status": self.status(now),
                "created_at_ms": self.created_at_ms, "expires_at_ms": self.expires_at_ms,
                "revoked_at_ms": self.revoked_at_ms, "last_used_at_ms": self.last_used_at_ms}

"""Web console sign-in: a one-time link, and a session the server can end."""
from __future__ import annotations

from pydantic import Field

from orchestrator.records.base import Ms, Record


class LoginLink(Record):
    token_hash: str = Field(max_length=64)
    account_id: str = Field(max_length=64)
    expires_at_ms: Ms
    used_at_ms: Ms | None

    def usable(self, now: int) -> bool:
        return self.used_at_ms is None and self.expires_at_ms > now


class Session(Record):
    account_id: str = Field(max_length=64)
    email: str = Field(max_length=320)
    csrf: str = Field(max_length=200)
    id_hash: str = Field(max_length=64)

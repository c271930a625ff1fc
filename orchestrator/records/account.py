"""An account, and what happened on it that its owner is told about."""
from __future__ import annotations

from typing import Any

from pydantic import Field

from orchestrator.records.base import Count, Ms, Record, Text


class Account(Record):
    id: str = Field(max_length=64)
    email: str = Field(max_length=320)
    handle: str = Field(max_length=40)
    plan: str = Field(max_length=40)
    verified: bool
    frozen: bool
    created_at_ms: Ms

    def view(self) -> dict:
        return self.model_dump()


class SecurityEvent(Record):
    kind: str = Field(max_length=40)
    detail: dict[str, Any]
    at_ms: Ms


class Notice(Record):
    """An email notice in the outbox: queued with the change it reports, sent after the commit."""
    id: Count
    account_id: str | None
    to: str = Field(max_length=320)
    subject: Text
    body: Text
    created_at_ms: Ms
    sent_at_ms: Ms | None
    send_error: Text | None
    attempts: Count

    def view(self) -> dict:
        return self.model_dump(exclude={"account_id", "attempts"})

"""A provider key as stored (its ciphertext, never the key), with what checking it found."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from orchestrator.provider_kinds import SPECS
from orchestrator.records.base import Ms, Record, Text

Price = tuple[float, float]  # USD per million tokens, input and output


class ProviderKey(Record):
    owner: str = Field(max_length=64)  # an account id, or 'platform' for the operator's sponsor keys
    provider: str
    ciphertext: bytes
    base_url: str | None = Field(default=None, max_length=2000)
    balance_usd: float | None = None
    models: tuple[str, ...] | None = None
    usd_per_mtok: Price | None = None
    created_at_ms: Ms
    updated_at_ms: Ms | None = None
    stored_by: Literal["operator", "account"] | None = None  # None: stored before it was recorded
    check_status: Literal["ok", "rejected", "unreachable"] | None = None
    check_detail: Text | None = None
    checked_at_ms: Ms | None = None
    tools: Literal["yes", "no"] | None = None
    tools_detail: Text | None = None
    tools_model: str | None = Field(default=None, max_length=500)

    @field_validator("provider")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in SPECS or not SPECS[v].keyed:
            raise ValueError(f"unknown provider {v!r}; providers are {', '.join(n for n, s in SPECS.items() if s.keyed)}")
        return v

    @field_validator("usd_per_mtok")
    @classmethod
    def _price(cls, v: Price | None) -> Price | None:
        if v is not None and not all(0 <= p < 10_000 for p in v):
            raise ValueError("a key's price is USD per million tokens, 0 up to 10000")
        return v


class KeyCheck(Record):
    """What checking a key with its provider found (the seats' probe answers it)."""
    status: Literal["ok", "rejected", "unreachable"]
    detail: Text
    tools: Literal["yes", "no"] | None
    tools_detail: Text | None
    model: str | None = Field(max_length=500)
    at_ms: Ms

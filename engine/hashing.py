"""Content hash of a scenario (docs/api.md): anyone can recompute it from a view."""
from __future__ import annotations

import hashlib

import rfc8785

BASE_ID = "svc:custom-base-v1"
DEFAULT_SEASON_TICKS = 300


def content_hash(base: str, season_ticks: int | None, env: dict) -> str:
    """First 16 hex chars of SHA-256 over the RFC 8785 bytes of {base, season_ticks, env}."""
    doc = {
        "base": base,
        "season_ticks": DEFAULT_SEASON_TICKS if season_ticks is None else season_ticks,
        "env": env,
    }
    return hashlib.sha256(rfc8785.dumps(doc)).hexdigest()[:16]

"""Resource ids: the API's prefix and random hex, so ids reveal neither order nor count."""
from __future__ import annotations

import secrets


def new_id(prefix: str) -> str:
    return prefix + secrets.token_hex(12)

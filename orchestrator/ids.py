"""Resource ids: the API's prefix and random hex, so ids reveal neither order nor count."""
from __future__ import annotations

import os
import secrets
import socket


def new_id(prefix: str) -> str:
    return prefix + secrets.token_hex(12)


def head_id() -> str:
    """One process of the service among several on one store: readable (host and pid) and unique
    (a restart on the same pid is another head)."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"

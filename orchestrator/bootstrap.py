"""First start: an owner account (plan lab, verified) and one full-scope token, printed once."""
from __future__ import annotations

import os
from pathlib import Path

from orchestrator import accounts, auth
from orchestrator.core import Core
from orchestrator.store import DB_NAME

DEFAULT_OWNER_EMAIL = "owner@localhost"


def is_first_start(data_dir: str | Path) -> bool:
    """No store yet. A config.toml the operator put there beforehand does not count as a start."""
    return not (Path(data_dir) / DB_NAME).exists()


def bootstrap_owner(core: Core, email: str | None = None) -> tuple[dict, str]:
    """Create the owner and mint its token; returns (account, plaintext token)."""
    email = email or os.environ.get("STUDIO_OWNER_EMAIL", DEFAULT_OWNER_EMAIL)
    account = accounts.create_account(core, email, handle="owner", plan="lab", verified=True)
    token, _ = auth.mint(core, email, name="owner-bootstrap", scopes=auth.SCOPES)
    return account, token

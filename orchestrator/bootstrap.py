"""First start: an owner account (plan lab, verified) and one full-scope token, printed once."""
from __future__ import annotations

import os

from orchestrator import accounts, auth
from orchestrator.core import Core
from orchestrator.store import accounts as account_rows

DEFAULT_OWNER_EMAIL = "owner@localhost"


def reuse_notice(core: Core) -> str:
    """What a later start says: the data it serves, and how to get a token since the first is not shown again."""
    owner = account_rows.first(core.store.conn())
    count = account_rows.count(core.store.conn())
    where = core.data_dir.resolve()
    text = f"studio: reusing the data dir {where} ({count} account{'' if count == 1 else 's'})."
    if owner is not None:
        text += ("\nstudio: the owner token was printed on the first start only; mint another with\n"
                 f"  studio token mint --email {owner.email} --scopes "
                 f"{','.join(auth.SCOPES)} --data-dir {where}")
    return text


def bootstrap_owner(core: Core, email: str | None = None) -> tuple[dict, str]:
    """Create the owner and mint its token; returns (account, plaintext token)."""
    email = email or os.environ.get("STUDIO_OWNER_EMAIL", DEFAULT_OWNER_EMAIL)
    account = accounts.create_account(core, email, handle="owner", plan="lab", verified=True)
    token, _ = auth.mint(core, email, name="owner-bootstrap", scopes=auth.SCOPES)
    return account, token

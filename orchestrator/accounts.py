"""Accounts: created and changed by the operator (CLI), read by every request through its token."""
from __future__ import annotations

import re

from orchestrator.core import Core
from orchestrator.errors import AdminError
from orchestrator.ids import new_id
from orchestrator.plans import PLAN_IDS
from orchestrator.records.account import Account
from orchestrator.store import accounts as stored

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_HANDLE = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")


def account_json(account: Account) -> dict:
    return account.view()


def by_email(core: Core, email: str) -> Account:
    account = stored.by_email(core.store.conn(), email.strip().lower())
    if account is None:
        raise AdminError(f"no account with email {email}")
    return account


def _check_plan(plan: str) -> None:
    if plan not in PLAN_IDS:
        raise AdminError(f"unknown plan '{plan}'; plans are {', '.join(PLAN_IDS)}")


def create_account(core: Core, email: str, *, handle: str | None = None, plan: str = "free",
                   verified: bool = False) -> dict:
    email = email.strip().lower()
    if not _EMAIL.match(email) or len(email) > 320:
        raise AdminError(f"'{email}' is not an email address")
    handle = handle or re.sub(r"[^A-Za-z0-9_.-]", "-", email.split("@")[0])[:40]
    if not _HANDLE.match(handle):
        raise AdminError(f"handle '{handle}' must be 1 to 40 letters, digits, '_', '.' or '-'")
    _check_plan(plan)
    with core.store.write() as c:
        if stored.by_email(c, email):
            raise AdminError(f"an account with email {email} already exists")
        if stored.handle_taken(c, handle):
            raise AdminError(f"handle '{handle}' is taken; pass --handle")
        account = Account(id=new_id("acc_"), email=email, handle=handle, plan=plan, verified=verified, frozen=False,
                          created_at_ms=core.clock.now_ms())
        stored.insert(c, account)
    return account_json(account)


def set_account(core: Core, email: str, *, plan: str | None = None, verified: bool | None = None,
                frozen: bool | None = None) -> dict:
    """Change plan, verification or frozen state; takes effect on the account's next request."""
    if plan is not None:
        _check_plan(plan)
    account_id = by_email(core, email).id
    with core.store.write() as c:
        stored.update(c, account_id, plan=plan, verified=verified, frozen=frozen)
        account = stored.get(c, account_id)
    return account_json(account)

"""Accounts: created and changed by the operator (CLI), read by every request through its token."""
from __future__ import annotations

import re
import sqlite3

from orchestrator.core import Core
from orchestrator.errors import AdminError
from orchestrator.ids import new_id
from orchestrator.plans import PLAN_IDS

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_HANDLE = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")


def account_json(row: sqlite3.Row) -> dict:
    return {"id": row["id"], "email": row["email"], "handle": row["handle"], "plan": row["plan"],
            "verified": bool(row["verified"]), "frozen": bool(row["frozen"]),
            "created_at_ms": row["created_at_ms"]}


def by_email(core: Core, email: str) -> sqlite3.Row:
    row = core.store.one("SELECT * FROM accounts WHERE email = ?", (email.strip().lower(),))
    if row is None:
        raise AdminError(f"no account with email {email}")
    return row


def _check_plan(plan: str) -> None:
    if plan not in PLAN_IDS:
        raise AdminError(f"unknown plan '{plan}'; plans are {', '.join(PLAN_IDS)}")


def create_account(core: Core, email: str, *, handle: str | None = None, plan: str = "free",
                   verified: bool = False) -> dict:
    email = email.strip().lower()
    if not _EMAIL.match(email):
        raise AdminError(f"'{email}' is not an email address")
    handle = handle or re.sub(r"[^A-Za-z0-9_.-]", "-", email.split("@")[0])[:40]
    if not _HANDLE.match(handle):
        raise AdminError(f"handle '{handle}' must be 1 to 40 letters, digits, '_', '.' or '-'")
    _check_plan(plan)
    with core.store.write() as c:
        if c.execute("SELECT 1 FROM accounts WHERE email = ?", (email,)).fetchone():
            raise AdminError(f"an account with email {email} already exists")
        if c.execute("SELECT 1 FROM accounts WHERE handle = ?", (handle,)).fetchone():
            raise AdminError(f"handle '{handle}' is taken; pass --handle")
        account_id = new_id("acc_")
        c.execute("INSERT INTO accounts (id, email, handle, plan, verified, frozen, created_at_ms) "
                  "VALUES (?, ?, ?, ?, ?, 0, ?)", (account_id, email, handle, plan, int(verified), core.clock.now_ms()))
        row = c.execute("SELECT * FROM accounts WHERE id = ?", (account_id,)).fetchone()
    return account_json(row)


def set_account(core: Core, email: str, *, plan: str | None = None, verified: bool | None = None,
                frozen: bool | None = None) -> dict:
    """Change plan, verification or frozen state; takes effect on the account's next request."""
    if plan is not None:
        _check_plan(plan)
    account_id = by_email(core, email)["id"]
    with core.store.write() as c:
        for column, value in (("plan", plan), ("verified", verified), ("frozen", frozen)):
            if value is not None:
                c.execute(f"UPDATE accounts SET {column} = ? WHERE id = ?",
                          (value if column == "plan" else int(value), account_id))
        row = c.execute("SELECT * FROM accounts WHERE id = ?", (account_id,)).fetchone()
    return account_json(row)

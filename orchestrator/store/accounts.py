"""The accounts table and each account's security events."""
from __future__ import annotations

import json

from orchestrator.records.account import Account, SecurityEvent
from orchestrator.store.database import Connection, Row

_FLAGS = ("plan", "verified", "frozen")


def _account(r: Row | None) -> Account | None:
    if r is None:
        return None
    return Account(id=r["id"], email=r["email"], handle=r["handle"], plan=r["plan"], verified=bool(r["verified"]),
                   frozen=bool(r["frozen"]), created_at_ms=r["created_at_ms"])


def get(c: Connection, account_id: str) -> Account | None:
    return _account(c.execute("SELECT * FROM accounts WHERE id = ?", (account_id,)).fetchone())


def by_email(c: Connection, email: str) -> Account | None:
    return _account(c.execute("SELECT * FROM accounts WHERE email = ?", (email,)).fetchone())


def handle_taken(c: Connection, handle: str) -> bool:
    return c.execute("SELECT 1 FROM accounts WHERE handle = ?", (handle,)).fetchone() is not None


def insert(c: Connection, a: Account) -> None:
    c.execute("INSERT INTO accounts (id, email, handle, plan, verified, frozen, created_at_ms) "
              "VALUES (?, ?, ?, ?, ?, ?, ?)",
              (a.id, a.email, a.handle, a.plan, int(a.verified), int(a.frozen), a.created_at_ms))


def update(c: Connection, account_id: str, *, plan: str | None = None, verified: bool | None = None,
           frozen: bool | None = None) -> None:
    """Set the fields given (None keeps a field)."""
    for column, value in zip(_FLAGS, (plan, verified, frozen)):
        if value is not None:
            c.execute(f"UPDATE accounts SET {column} = ? WHERE id = ?",
                      (value if column == "plan" else int(value), account_id))


def first(c: Connection) -> Account | None:
    """The account created first (the owner of a bootstrapped data dir)."""
    return _account(c.execute("SELECT * FROM accounts ORDER BY created_at_ms LIMIT 1").fetchone())


def count(c: Connection) -> int:
    return c.execute("SELECT count(*) FROM accounts").fetchone()[0]


def add_event(c: Connection, account_id: str, kind: str, detail: dict, at_ms: int) -> None:
    c.execute("INSERT INTO security_events (account_id, kind, detail, at_ms) VALUES (?, ?, ?, ?)",
              (account_id, kind, json.dumps(detail, sort_keys=True), at_ms))


def events(c: Connection, account_id: str) -> list[SecurityEvent]:
    rows = c.execute("SELECT kind, detail, at_ms FROM security_events WHERE account_id = ? ORDER BY id",
                     (account_id,)).fetchall()
    return [SecurityEvent(kind=r["kind"], detail=json.loads(r["detail"]), at_ms=r["at_ms"]) for r in rows]

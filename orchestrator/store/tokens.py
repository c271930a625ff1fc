"""The tokens table: API access tokens by their SHA-256."""
from __future__ import annotations

import json

from orchestrator.records.account import Account
from orchestrator.records.token import Token
from orchestrator.store.database import Connection, Row

_TOKEN = ("id", "account_id", "name", "prefix", "created_at_ms", "expires_at_ms", "revoked_at_ms", "last_used_at_ms")


def _token(r: Row | None) -> Token | None:
    if r is None:
        return None
    return Token(**{k: r[k] for k in _TOKEN}, scopes=tuple(json.loads(r["scopes"])))


def holder(c: Connection, token_hash: str) -> tuple[Token, Account] | None:
    """The token with this hash and its account, in one indexed read (every request makes it)."""
    r = c.execute("SELECT t.*, a.email, a.handle, a.plan, a.verified, a.frozen, a.created_at_ms AS a_created "
                  "FROM tokens t JOIN accounts a ON a.id = t.account_id WHERE t.token_hash = ?",
                  (token_hash,)).fetchone()
    if r is None:
        return None
    account = Account(id=r["account_id"], email=r["email"], handle=r["handle"], plan=r["plan"],
                      verified=bool(r["verified"]), frozen=bool(r["frozen"]), created_at_ms=r["a_created"])
    return _token(r), account


def get(c: Connection, token_id: str) -> Token | None:
    return _token(c.execute("SELECT * FROM tokens WHERE id = ?", (token_id,)).fetchone())


def active(c: Connection, account_id: str, prefix: str) -> Token | None:
    """The account's unrevoked token with this prefix."""
    return _token(c.execute("SELECT * FROM tokens WHERE account_id = ? AND prefix = ? AND revoked_at_ms IS NULL",
                            (account_id, prefix)).fetchone())


def active_count(c: Connection, account_id: str, now: int) -> int:
    return c.execute("SELECT COUNT(*) FROM tokens WHERE account_id = ? AND revoked_at_ms IS NULL "
                     "AND (expires_at_ms IS NULL OR expires_at_ms > ?)", (account_id, now)).fetchone()[0]


def of_account(c: Connection, account_id: str) -> list[Token]:
    rows = c.execute("SELECT * FROM tokens WHERE account_id = ? ORDER BY created_at_ms, id", (account_id,)).fetchall()
    return [_token(r) for r in rows]


def insert(c: Connection, t: Token, token_hash: str) -> None:
    c.execute("INSERT INTO tokens (id, account_id, name, prefix, token_hash, scopes, created_at_ms, expires_at_ms) "
              "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
              (t.id, t.account_id, t.name, t.prefix, token_hash, json.dumps(list(t.scopes)), t.created_at_ms,
               t.expires_at_ms))


def revoke(c: Connection, token_id: str, at_ms: int) -> None:
    c.execute("UPDATE tokens SET revoked_at_ms = ? WHERE id = ?", (at_ms, token_id))


def note_used(c: Connection, used: dict[str, int]) -> None:
    """token id -> time of its last use; a time older than the stored one leaves it."""
    c.executemany("UPDATE tokens SET last_used_at_ms = CASE WHEN COALESCE(last_used_at_ms, 0) > ? "
                  "THEN last_used_at_ms ELSE ? END WHERE id = ?", [(ms, ms, tid) for tid, ms in used.items()])

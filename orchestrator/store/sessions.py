"""The web console's sign-in tables: passwords, one-time links and sessions."""
from __future__ import annotations

from orchestrator.records.session import LoginLink, Session
from orchestrator.store.database import Connection


def add_link(c: Connection, token_hash: str, account_id: str, expires_at_ms: int) -> None:
    c.execute("INSERT INTO console_login_links (token_hash, account_id, expires_at_ms) VALUES (?, ?, ?)",
              (token_hash, account_id, expires_at_ms))


def link(c: Connection, token_hash: str) -> LoginLink | None:
    r = c.execute("SELECT * FROM console_login_links WHERE token_hash = ?", (token_hash,)).fetchone()
    return None if r is None else LoginLink(token_hash=r["token_hash"], account_id=r["account_id"],
                                            expires_at_ms=r["expires_at_ms"], used_at_ms=r["used_at_ms"])


def use_link(c: Connection, token_hash: str, at_ms: int) -> None:
    c.execute("UPDATE console_login_links SET used_at_ms = ? WHERE token_hash = ?", (at_ms, token_hash))


def set_password(c: Connection, account_id: str, password_hash: str, at_ms: int) -> None:
    c.execute("INSERT INTO console_passwords (account_id, password_hash, updated_at_ms) VALUES (?, ?, ?) "
              "ON CONFLICT (account_id) DO UPDATE SET password_hash = excluded.password_hash, "
              "updated_at_ms = excluded.updated_at_ms", (account_id, password_hash, at_ms))


def password(c: Connection, email: str) -> tuple[str, str] | None:
    """(account id, password hash) of the account with this email, when it has a password."""
    r = c.execute("SELECT a.id, p.password_hash FROM console_passwords p JOIN accounts a ON a.id = p.account_id "
                  "WHERE a.email = ?", (email,)).fetchone()
    return None if r is None else (r["id"], r["password_hash"])


def open_session(c: Connection, id_hash: str, account_id: str, csrf: str, at_ms: int) -> None:
    c.execute("INSERT INTO console_sessions (id_hash, account_id, csrf, created_at_ms) VALUES (?, ?, ?, ?)",
              (id_hash, account_id, csrf, at_ms))


def live(c: Connection, id_hash: str) -> Session | None:
    """The unrevoked session with this id hash."""
    r = c.execute("SELECT s.account_id, s.csrf, s.id_hash, a.email FROM console_sessions s "
                  "JOIN accounts a ON a.id = s.account_id WHERE s.id_hash = ? AND s.revoked_at_ms IS NULL",
                  (id_hash,)).fetchone()
    return None if r is None else Session(account_id=r["account_id"], email=r["email"], csrf=r["csrf"],
                                          id_hash=r["id_hash"])


def revoke(c: Connection, id_hash: str, at_ms: int) -> None:
    c.execute("UPDATE console_sessions SET revoked_at_ms = ? WHERE id_hash = ?", (at_ms, id_hash))


def revoke_all(c: Connection, account_id: str, at_ms: int) -> None:
    c.execute("UPDATE console_sessions SET revoked_at_ms = ? WHERE account_id = ? AND revoked_at_ms IS NULL",
              (at_ms, account_id))

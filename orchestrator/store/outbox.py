"""The email_outbox table: notices queued with the change they report, and their delivery."""
from __future__ import annotations

from orchestrator.records.account import Notice
from orchestrator.store.database import Connection, Row


def _notice(r: Row) -> Notice:
    return Notice(id=r["id"], account_id=r["account_id"], to=r["to_addr"], subject=r["subject"], body=r["body"],
                  created_at_ms=r["created_at_ms"], sent_at_ms=r["sent_at_ms"], send_error=r["send_error"],
                  attempts=r["attempts"])


def queue(c: Connection, account_id: str | None, to: str, subject: str, body: str, at_ms: int) -> None:
    c.execute("INSERT INTO email_outbox (account_id, to_addr, subject, body, created_at_ms) VALUES (?, ?, ?, ?, ?)",
              (account_id, to, subject, body, at_ms))


def notices(c: Connection, to: str | None = None) -> list[Notice]:
    """Every notice, oldest first; with `to`, those to that address."""
    rows = c.execute("SELECT * FROM email_outbox WHERE CAST(? AS TEXT) IS NULL OR to_addr = ? ORDER BY id", (to, to)).fetchall()
    return [_notice(r) for r in rows]


def due(c: Connection, max_attempts: int, now: int) -> list[Notice]:
    """Unsent notices with attempts left whose retry time has come."""
    rows = c.execute("SELECT * FROM email_outbox WHERE sent_at_ms IS NULL AND attempts < ? AND "
                     "(next_attempt_at_ms IS NULL OR next_attempt_at_ms <= ?) ORDER BY id",
                     (max_attempts, now)).fetchall()
    return [_notice(r) for r in rows]


def failed(c: Connection, notice_id: int, error: str, retry_at_ms: int) -> None:
    c.execute("UPDATE email_outbox SET attempts = attempts + 1, send_error = ?, next_attempt_at_ms = ? WHERE id = ?",
              (error, retry_at_ms, notice_id))


def sent(c: Connection, notice_id: int, at_ms: int) -> None:
    c.execute("UPDATE email_outbox SET attempts = attempts + 1, sent_at_ms = ?, send_error = NULL WHERE id = ?",
              (at_ms, notice_id))

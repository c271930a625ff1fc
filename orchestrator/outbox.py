"""Security events and the email outbox (SPEC.md "Authentication" 10, "Events").

Every notice is written to the `email_outbox` table in the same transaction as the change it reports,
so the operator can always read it (`studio outbox list`); when config.toml has an [smtp] table it is
also sent, and the row records when or why not.

    [smtp]
    host = "smtp.example.org"
    port = 587
    from = "studio@example.org"
    starttls = true
    username = "..."   # optional
    password = "..."   # optional
"""
from __future__ import annotations

import json
import smtplib
import sqlite3
from email.message import EmailMessage

from orchestrator.core import Core
from orchestrator.store import now_ms


def security_event(c: sqlite3.Connection, account: sqlite3.Row, kind: str, detail: dict,
                   subject: str, body: str) -> None:
    """Record the event on the account and queue its email notice; call inside a write transaction."""
    at = now_ms()
    c.execute("INSERT INTO security_events (account_id, kind, detail, at_ms) VALUES (?, ?, ?, ?)",
              (account["id"], kind, json.dumps(detail, sort_keys=True), at))
    c.execute("INSERT INTO email_outbox (account_id, to_addr, subject, body, created_at_ms) VALUES (?, ?, ?, ?, ?)",
              (account["id"], account["email"], subject, body, at))


def events(core: Core, account_id: str) -> list[dict]:
    rows = core.store.all("SELECT kind, detail, at_ms FROM security_events WHERE account_id = ? ORDER BY id",
                          (account_id,))
    return [{"kind": r["kind"], "detail": json.loads(r["detail"]), "at_ms": r["at_ms"]} for r in rows]


def messages(core: Core, to_addr: str | None = None) -> list[dict]:
    rows = core.store.all("SELECT * FROM email_outbox WHERE ? IS NULL OR to_addr = ? ORDER BY id",
                          (to_addr, to_addr))
    return [{"id": r["id"], "to": r["to_addr"], "subject": r["subject"], "body": r["body"],
             "created_at_ms": r["created_at_ms"], "sent_at_ms": r["sent_at_ms"], "send_error": r["send_error"]}
            for r in rows]


def deliver_pending(core: Core) -> int:
    """Send unsent notices through SMTP when configured; return how many were sent."""
    smtp = core.config.get("smtp")
    if not smtp:
        return 0
    pending = core.store.all("SELECT * FROM email_outbox WHERE sent_at_ms IS NULL AND send_error IS NULL ORDER BY id")
    sent = 0
    for row in pending:
        msg = EmailMessage()
        msg["From"] = smtp.get("from", "studio@localhost")
        msg["To"] = row["to_addr"]
        msg["Subject"] = row["subject"]
        msg.set_content(row["body"])
        try:
            with smtplib.SMTP(smtp["host"], int(smtp.get("port", 25)), timeout=10) as s:
                if smtp.get("starttls"):
                    s.starttls()
                if smtp.get("username"):
                    s.login(smtp["username"], smtp.get("password", ""))
                s.send_message(msg)
        except (OSError, smtplib.SMTPException) as e:
            # Keep the notice readable in the outbox; the error says why it did not leave.
            with core.store.write() as c:
                c.execute("UPDATE email_outbox SET send_error = ? WHERE id = ?", (str(e)[:500], row["id"]))
            continue
        with core.store.write() as c:
            c.execute("UPDATE email_outbox SET sent_at_ms = ? WHERE id = ?", (now_ms(), row["id"]))
        sent += 1
    return sent

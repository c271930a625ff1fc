"""Security events and the email outbox (docs/api.md, "Authentication, scopes, limits", "Events").

Every notice is written to the `email_outbox` table in the same transaction as the change it reports,
so the operator can always read it (`studio outbox list`). Delivery happens after the commit, through
orchestrator.mail (backend `outbox`, a Maildir under the data dir, by default; `smtp`; `null`), with
retries: inside `studio serve` a background thread sends, elsewhere (the admin CLI) the caller does.
"""
from __future__ import annotations

import json
import sqlite3

from orchestrator.core import Core


def security_event(c: sqlite3.Connection, account: sqlite3.Row, kind: str, detail: dict,
                   subject: str, body: str, *, at_ms: int) -> None:
    """Record the event on the account and queue its email notice; call inside a write transaction."""
    c.execute("INSERT INTO security_events (account_id, kind, detail, at_ms) VALUES (?, ?, ?, ?)",
              (account["id"], kind, json.dumps(detail, sort_keys=True), at_ms))
    c.execute("INSERT INTO email_outbox (account_id, to_addr, subject, body, created_at_ms) VALUES (?, ?, ?, ?, ?)",
              (account["id"], account["email"], subject, body, at_ms))


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
    """After a notice is queued: wake the service's mail thread, or deliver now when none runs here."""
    from orchestrator import mail

    return mail.notify(core)

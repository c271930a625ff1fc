"""Security events and the email outbox (docs/api.md, "Authentication, scopes, limits", "Events").

Every notice is written to the `email_outbox` table in the same transaction as the change it reports,
so the operator can always read it (`studio outbox list`). Delivery happens after the commit, through
the mail module (backend `outbox`, a Maildir under the data dir, by default; `smtp`; `null`), with
retries: inside `studio serve` a background thread sends, elsewhere (the admin CLI) the caller does.
"""
from __future__ import annotations

from orchestrator.core import Core
from orchestrator.records.account import Account
from orchestrator.store import Connection, accounts as account_rows, outbox as notice_rows


def security_event(c: Connection, account: Account, kind: str, detail: dict,
                   subject: str, body: str, *, at_ms: int) -> None:
    """Record the event on the account and queue its email notice; call inside a write transaction."""
    account_rows.add_event(c, account.id, kind, detail, at_ms)
    notice_rows.queue(c, account.id, account.email, subject, body, at_ms)


def events(core: Core, account_id: str) -> list[dict]:
    return [e.model_dump() for e in account_rows.events(core.store.conn(), account_id)]


def messages(core: Core, to_addr: str | None = None) -> list[dict]:
    return [n.view() for n in notice_rows.notices(core.store.conn(), to_addr)]


def deliver_pending(core: Core) -> int:
    """After a notice is queued: wake the service's mail thread, or deliver now when none runs here."""
    from orchestrator import mail

    return mail.notify(core)

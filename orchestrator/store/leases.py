"""The leases table: one holder per name until its lease expires unrenewed."""
from __future__ import annotations

from orchestrator.store.database import Connection


def take(c: Connection, name: str, holder: str, now_ms: int, ttl_ms: int) -> bool:
    """Take or renew the lease for `holder`: True when it holds it until now + ttl, False when another
    holder's lease has not expired. Call inside a write transaction (writes are serialized)."""
    row = c.execute("SELECT holder, expires_at_ms FROM leases WHERE name = ?", (name,)).fetchone()
    if row is not None and row[0] != holder and row[1] > now_ms:
        return False
    if row is None:
        c.execute("INSERT INTO leases (name, holder, expires_at_ms, taken_at_ms) VALUES (?, ?, ?, ?)",
                  (name, holder, now_ms + ttl_ms, now_ms))
    elif row[0] == holder:
        c.execute("UPDATE leases SET expires_at_ms = ? WHERE name = ?", (now_ms + ttl_ms, name))
    else:
        c.execute("UPDATE leases SET holder = ?, expires_at_ms = ?, taken_at_ms = ? WHERE name = ?",
                  (holder, now_ms + ttl_ms, now_ms, name))
    return True


def holder(c: Connection, name: str, now_ms: int) -> str | None:
    """Who holds the lease now, or None when nobody does."""
    row = c.execute("SELECT holder FROM leases WHERE name = ? AND expires_at_ms > ?", (name, now_ms)).fetchone()
    return None if row is None else row[0]


def release(c: Connection, name: str, holder: str) -> None:
    """Give the lease up at once (a clean stop), so another head need not wait for it to expire."""
    c.execute("DELETE FROM leases WHERE name = ? AND holder = ?", (name, holder))


def holds(c: Connection, name: str, holder: str, until_ms: int) -> bool:
    """Whether `holder` holds the lease until at least `until_ms`: a fence checked inside the writer's own
    transaction. An UPDATE rather than a SELECT, so that on PostgreSQL the row stays locked until that
    transaction ends and a head taking the lease over waits for it."""
    return c.execute("UPDATE leases SET holder = holder WHERE name = ? AND holder = ? AND expires_at_ms > ?",
                     (name, holder, until_ms)).rowcount > 0


def service_id(c: Connection, candidate: str) -> str:
    """The id every head of one service (one store) shares: the first head's `candidate`, kept for good
    as a lease that never expires. Call inside a write transaction."""
    c.execute("INSERT INTO leases (name, holder, expires_at_ms, taken_at_ms) VALUES (?, ?, ?, 0) "
              "ON CONFLICT (name) DO NOTHING", (SERVICE, candidate, FOREVER_MS))
    return c.execute("SELECT holder FROM leases WHERE name = ?", (SERVICE,)).fetchone()[0]


SERVICE = "service"
FOREVER_MS = 2 ** 62

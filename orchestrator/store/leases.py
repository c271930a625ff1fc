"""The leases table: one holder per name until its lease expires unrenewed."""
from __future__ import annotations

from orchestrator.store.database import Connection


def take(c: Connection, name: str, holder: str, now_ms: int, ttl_ms: int, fresh: bool = False) -> str | None:
    """Take or renew the lease for `holder` until now + ttl: its tenure (`tenure`), or None when another
    holder's lease has not expired. fresh: a new tenure even when `holder` holds it already (a head
    starting to dispatch again); a renewal keeps the tenure. Call inside a write transaction (writes
    are serialized)."""
    row = c.execute("SELECT holder, expires_at_ms, taken_at_ms FROM leases WHERE name = ?", (name,)).fetchone()
    if row is not None and row[0] != holder and row[1] > now_ms:
        return None
    if row is None:
        c.execute("INSERT INTO leases (name, holder, expires_at_ms, taken_at_ms) VALUES (?, ?, ?, ?)",
                  (name, holder, now_ms + ttl_ms, now_ms))
        return _tenure(holder, now_ms)
    if row[0] == holder and not fresh:
        c.execute("UPDATE leases SET expires_at_ms = ? WHERE name = ?", (now_ms + ttl_ms, name))
        return _tenure(holder, row[2])
    taken = max(now_ms, row[2] + 1)  # a new tenure never repeats the last one's
    c.execute("UPDATE leases SET holder = ?, expires_at_ms = ?, taken_at_ms = ? WHERE name = ?",
              (holder, now_ms + ttl_ms, taken, name))
    return _tenure(holder, taken)


def tenure(c: Connection, name: str) -> str | None:
    """The current tenure of the lease, expired or not: `holder@taken_at_ms`, which changes whenever it
    is taken anew (another holder, or the same one after a release or a fresh take); None when nobody
    has it. A write stamped with an older tenure comes from a holder that another take has superseded."""
    row = c.execute("SELECT holder, taken_at_ms FROM leases WHERE name = ?", (name,)).fetchone()
    return None if row is None else _tenure(row[0], row[1])


def _tenure(holder: str, taken_at_ms: int) -> str:
    return f"{holder}@{taken_at_ms}"


def holder(c: Connection, name: str, now_ms: int) -> str | None:
    """Who holds the lease now, or None when nobody does."""
    row = c.execute("SELECT holder FROM leases WHERE name = ? AND expires_at_ms > ?", (name, now_ms)).fetchone()
    return None if row is None else row[0]


def release(c: Connection, name: str, holder: str) -> None:
    """Give the lease up at once (a clean stop), so another head need not wait for it to expire."""
    c.execute("DELETE FROM leases WHERE name = ? AND holder = ?", (name, holder))


def holds(c: Connection, name: str, holder: str, until_ms: int, taken_at_ms: int | None = None) -> bool:
    """Whether `holder` holds the lease until at least `until_ms` (in the tenure taken at `taken_at_ms`,
    when given): a fence checked inside the writer's own transaction. An UPDATE rather than a SELECT, so
    that on PostgreSQL the row stays locked until that transaction ends and a head taking the lease
    over waits for it."""
    sql = "UPDATE leases SET holder = holder WHERE name = ? AND holder = ? AND expires_at_ms > ?"
    args: tuple = (name, holder, until_ms)
    if taken_at_ms is not None:
        sql, args = sql + " AND taken_at_ms = ?", (*args, taken_at_ms)
    return c.execute(sql, args).rowcount > 0


def stamped(c: Connection, name: str, token: str) -> bool:
    """Whether a write stamped with `token` (a tenure) may land: it is the lease's current tenure. Like `holds`, an
    UPDATE, so the row stays locked until the writer's transaction ends; a take waits for it, and so
    whatever the write landed is there for the new holder to find."""
    holder_, _, taken = token.rpartition("@")
    if not holder_ or not taken.isdigit():
        return False
    return c.execute("UPDATE leases SET holder = holder WHERE name = ? AND holder = ? AND taken_at_ms = ?",
                     (name, holder_, int(taken))).rowcount > 0


def service_id(c: Connection, candidate: str) -> str:
    """The id every head of one service (one store) shares: the first head's `candidate`, kept for good
    as a lease that never expires. Call inside a write transaction."""
    c.execute("INSERT INTO leases (name, holder, expires_at_ms, taken_at_ms) VALUES (?, ?, ?, 0) "
              "ON CONFLICT (name) DO NOTHING", (SERVICE, candidate, FOREVER_MS))
    return c.execute("SELECT holder FROM leases WHERE name = ?", (SERVICE,)).fetchone()[0]


SERVICE = "service"
FOREVER_MS = 2 ** 62

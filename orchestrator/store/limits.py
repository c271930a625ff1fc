"""The rate_counts table: per-minute request counts shared by every head on the store.

One statement per hit, `INSERT ... ON CONFLICT DO UPDATE ... RETURNING`, which SQLite and PostgreSQL
both run atomically: two heads counting one subject at once each see the other's hit. A hit must never
wait long for a write lock that a slow transaction holds (requests that only read would stall behind
it), so on SQLite it goes through a connection of its own whose busy wait is WAIT_S; when the store
refuses it for now (locked past that wait, or a full disk), `add` answers None and the caller counts
in its own memory.
"""
from __future__ import annotations

import sqlite3
import threading

from orchestrator.store import database, postgres

WAIT_S = 0.05  # the longest a hit waits for SQLite's write lock

_UPSERT = """
ON CONFLICT (scope, subject) DO UPDATE SET
    hits = CASE WHEN rate_counts.period = excluded.period THEN rate_counts.hits + 1 ELSE 1 END,
    period = excluded.period
RETURNING hits"""
_ADD = "INSERT INTO rate_counts (scope, subject, period, hits) VALUES (?, ?, ?, 1)" + _UPSERT
# PostgreSQL would flush its log to disk before each count's commit returns (milliseconds here): a
# count lost in a crash costs nothing, so its commit does not wait for the flush (synchronous_commit
# off for this statement's transaction only), in the same single round trip.
_ADD_PG = ("WITH quiet AS (SELECT set_config('synchronous_commit', 'off', true)) "
           "INSERT INTO rate_counts (scope, subject, period, hits) SELECT ?, ?, ?, 1 FROM quiet" + _UPSERT)
_PRUNE = "DELETE FROM rate_counts WHERE period < ?"


class Counts:
    """The counts of one store (a `Store` or a `PostgresStore`)."""

    def __init__(self, store) -> None:
        self.store = store
        self._local = threading.local()

    def _conn(self):
        if self.store.dialect != "sqlite":
            return self.store.conn()  # autocommit: the statement commits alone, and takes no advisory lock
        c = getattr(self._local, "conn", None)
        if c is None:
            c = sqlite3.connect(self.store.path, isolation_level=None, timeout=WAIT_S)
            c.execute("PRAGMA synchronous=NORMAL")  # as the store's own connections
            self._local.conn = c
        return c

    def add(self, scope: str, subject: str, period: int) -> int | None:
        """Count one hit for subject in period (a new period starts again from one); the count with this
        hit, or None when the store refused the write for now."""
        try:
            # fetchall, not fetchone: SQLite commits when the statement has run to its end
            sql = _ADD if self.store.dialect == "sqlite" else _ADD_PG
            return self._conn().execute(sql, (scope, subject, period)).fetchall()[0][0]
        except Exception as e:
            if _for_now(e):
                return None
            raise

    def prune(self, before: int) -> None:
        """Drop the rows of periods before `before` (subjects not seen since), best effort."""
        try:
            self._conn().execute(_PRUNE, (before,))
        except Exception as e:
            if not _for_now(e):
                raise

    def close(self) -> None:
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.close()
            self._local.conn = None


def _for_now(e: BaseException) -> bool:
    """Either database refusing the count for now (busy, locked, full, gone), not a fault."""
    return database.unavailable(e) is not None or postgres.unavailable(e) is not None

"""The database: SQLite in WAL mode under the data dir, versioned by the migrations beside it.

One connection per thread (sqlite3 connections must not be shared across threads), autocommit mode
with explicit transactions: writes take `BEGIN IMMEDIATE` so the server and the admin CLI serialize
on the write lock instead of failing half-way with SQLITE_BUSY on lock upgrade.
"""
from __future__ import annotations

import json
import os
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from orchestrator.store import migrations

DB_NAME = "studio.db"

# What the repositories hand each other inside a transaction, and what a read gives back: named so
# that nothing above the store imports the driver for its types.
Connection = sqlite3.Connection
Row = sqlite3.Row
# SQLite's primary result codes for "not now": the write lock is held elsewhere past the busy wait
# (BUSY, LOCKED) or the disk has no room (FULL). The change was rolled back; the same request can
# succeed later, so the transports answer 503 with Retry-After (seconds) instead of a server fault.
_RETRY_AFTER_S = {sqlite3.SQLITE_BUSY: 5, sqlite3.SQLITE_LOCKED: 5, sqlite3.SQLITE_FULL: 60}


def unavailable(e: BaseException) -> int | None:
    """Seconds to wait before retrying, when e is the store refusing a write for now; else None."""
    if not isinstance(e, sqlite3.OperationalError):
        return None
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None:
        return _RETRY_AFTER_S.get(code & 0xFF)
    text = str(e)  # raised without a code (tests, older builds): the messages SQLite gives these
    if "database is locked" in text or "database table is locked" in text:
        return _RETRY_AFTER_S[sqlite3.SQLITE_BUSY]
    if "database or disk is full" in text:
        return _RETRY_AFTER_S[sqlite3.SQLITE_FULL]
    return None


# How long a write waits for another process's write lock before the store refuses it (503 on a
# request, a wait of record_patience_s in a run): `[store] busy_timeout_s` in config.toml.
BUSY_TIMEOUT_S = 10.0


def finite_json(text: str | None) -> str | None:
    """JSON text as SQLite's JSON functions read it: an earlier version wrote numbers JSON cannot carry
    as Infinity or NaN (json.dumps' way), which SQLite refuses as malformed; they read as null. Queries
    call it where json_valid() is false."""
    if text is None:
        return None
    try:
        return json.dumps(json.loads(text, parse_constant=lambda _: None), ensure_ascii=False)
    except ValueError:
        return "null"


class Store:
    """Opens the database in `data_dir` (created if missing) and brings its schema up to date."""

    def __init__(self, data_dir: str | Path, busy_timeout_s: float = BUSY_TIMEOUT_S):
        self.busy_timeout_s = busy_timeout_s
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = self.data_dir / DB_NAME
        if not self.path.exists():  # created 0600 here; SQLite gives its WAL and -shm files the same mode
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        self._local = threading.local()
        self.created = self.schema_version() == 0  # a first start: the caller bootstraps the owner
        self.migrate()

    def conn(self) -> sqlite3.Connection:
        c = getattr(self._local, "conn", None)
        if c is None:
            c = sqlite3.connect(self.path, isolation_level=None, timeout=self.busy_timeout_s,
                                check_same_thread=True)
            c.row_factory = sqlite3.Row
            c.execute("PRAGMA journal_mode=WAL")
            c.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable across app crashes
            c.execute("PRAGMA foreign_keys=ON")
            c.create_function("finite_json", 1, finite_json, deterministic=True)
            self._local.conn = c
        return c

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction; commits on success, rolls back on any exception."""
        c = self.conn()
        c.execute("BEGIN IMMEDIATE")
        try:
            yield c
        except BaseException:
            c.execute("ROLLBACK")
            raise
        c.execute("COMMIT")

    def one(self, sql: str, params: tuple = ()) -> sqlite3.Row | None:
        return self.conn().execute(sql, params).fetchone()

    def all(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        return self.conn().execute(sql, params).fetchall()

    dialect = "sqlite"

    def ping(self) -> None:
        """Raises StoreError unless the database answers a read now (a file moved or deleted under a
        running service answers from its open connections, so the file is looked at too)."""
        if not self.path.is_file():
            raise sqlite3.OperationalError(f"unable to open database file: {self.path} is gone")
        self.conn().execute("SELECT COUNT(*) FROM sqlite_master").fetchone()

    def schema_version(self) -> int:
        return self.conn().execute("PRAGMA user_version").fetchone()[0]

    def migrate(self) -> int:
        """Apply pending migrations, each in its own transaction with the version bump."""
        for i in range(len(migrations.MIGRATIONS)):
            with self.write() as c:
                # Re-read inside the lock: the CLI and the server may start on one data dir at once.
                if c.execute("PRAGMA user_version").fetchone()[0] != i:
                    continue
                for statement in _statements(migrations.MIGRATIONS[i]):
                    c.execute(statement)
                c.execute(f"PRAGMA user_version = {i + 1}")
        return self.schema_version()

    def close(self) -> None:
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.close()
            self._local.conn = None


def _statements(script: str) -> list[str]:
    # executescript() would COMMIT our open transaction; split on complete statements instead.
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        raise ValueError(f"incomplete SQL statement in migration: {buf.strip()[:60]}")
    return out

"""The control plane on PostgreSQL: the same schema and the same interface as the SQLite database
(`conn()`, `write()`, `one()`, `all()`), so the repositories above run on either.

SQLite lets one writer in at a time (`BEGIN IMMEDIATE`) and the rules above rely on it: a launch
counts the queue and takes a slot in one transaction. Here every write transaction takes the same
transaction-level advisory lock first, so writes are serialized the same way across every head on
the database, and reads never wait. A lock not granted within the busy wait is refused for now
(503 with Retry-After), as SQLite's busy wait is.
"""
from __future__ import annotations

import re
import select
import sqlite3
import threading
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

import psycopg
from psycopg import errors as pgerrors
from psycopg.adapt import Loader
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool

from orchestrator.store import migrations
from orchestrator.store.dialect import POSTGRES_FUNCTIONS
from orchestrator.store.errors import Unstorable

SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
WRITE_LOCK = 0x5354_5544_494F  # one advisory lock for every write transaction of the service
MIGRATE_LOCK = WRITE_LOCK + 1
_BEGIN_LOCKED = f"BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK})"


class UrlError(ValueError):
    """A store URL that does not parse or names another database."""


def conninfo(url: str) -> str:
    """The libpq URL for psycopg: `postgresql+psycopg://` (SQLAlchemy's spelling) read as `postgresql://`.
    The error never repeats the URL, which may hold a password."""
    try:
        parts = urlsplit(url)
        parts.port  # raises on a port that is not a number
    except ValueError as e:
        raise UrlError(f"not a URL ({e})") from None
    if parts.scheme not in SCHEMES:
        raise UrlError(f"the scheme is {parts.scheme or 'missing'!r}; a PostgreSQL URL starts with postgresql://")
    if not parts.hostname and "host=" not in (parts.query or ""):
        raise UrlError("no host: postgresql://user:password@host:port/database")
    if not parts.path.strip("/"):
        raise UrlError("no database name: postgresql://user:password@host:port/database")
    return "postgresql" + url[len(parts.scheme):]


def password(url: str) -> str | None:
    try:
        return urlsplit(url).password
    except ValueError:
        return None


def redacted(url: str) -> str:
    """The URL as it may be printed: its password replaced."""
    secret = password(url)
    if secret is None:
        return url
    return url.replace(f":{secret}@", ":***@", 1)


class Row:
    """A row read by name or by position, as the SQLite rows are."""

    __slots__ = ("_names", "_values")

    def __init__(self, names: dict[str, int], values: tuple):
        self._names, self._values = names, values

    def __getitem__(self, key):
        return self._values[self._names[key] if isinstance(key, str) else key]

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self):
        return iter(self._values)

    def keys(self) -> list[str]:
        return list(self._names)


def _rows(cursor: psycopg.Cursor):
    # the names straight from the result: `description` builds an object per column per statement
    res = cursor.pgresult
    names = {} if res is None else {res.fname(i).decode(): i for i in range(res.nfields)}
    return lambda values: Row(names, values)


_PLACEHOLDER = re.compile(r"\?")
_translated: dict[str, str] = {}


def translate(sql: str) -> str:
    """SQLite's `?` placeholders as psycopg's `%s` (a literal % doubled); statements are constants,
    so each is translated once."""
    out = _translated.get(sql)
    if out is None:
        out = _translated[sql] = _PLACEHOLDER.sub("%s", sql.replace("%", "%%"))
    return out


# psycopg's classes, and the store's own (errors.py) each is also made an instance of
_VOCABULARY = ((psycopg.IntegrityError, sqlite3.IntegrityError), (psycopg.OperationalError, sqlite3.OperationalError),
               (psycopg.ProgrammingError, sqlite3.ProgrammingError), (psycopg.DataError, sqlite3.DataError),
               (psycopg.InterfaceError, sqlite3.InterfaceError), (psycopg.InternalError, sqlite3.InternalError),
               (psycopg.NotSupportedError, sqlite3.NotSupportedError), (psycopg.Error, sqlite3.Error))
_as_store: dict[type, type] = {}


def as_store_error(e: psycopg.Error) -> psycopg.Error:
    """e, its class swapped for one deriving from both its own and the store's matching class; the
    same object, so its message, SQLSTATE and diagnostics stay."""
    kind = type(e)
    if not isinstance(e, sqlite3.Error):
        cls = _as_store.get(kind)
        if cls is None:
            base = next(lite for driver, lite in _VOCABULARY if isinstance(e, driver))
            cls = _as_store[kind] = type(kind.__name__, (kind, base), {"__module__": __name__})
        e.__class__ = cls
    return e


@contextmanager
def _store_errors() -> Iterator[None]:
    try:
        yield
    except psycopg.Error as e:
        as_store_error(e)
        raise


NUL_TEXT = "a text holds a NUL character (U+0000), which the store cannot hold: send it without"


def _params(params, sql: str = "") -> tuple:
    # SQLite keeps booleans as 0/1 in INTEGER columns; PostgreSQL would type True as boolean
    out = tuple(int(p) if p is True or p is False else p for p in params)
    if any(isinstance(p, str) and "\x00" in p for p in out):
        if not sql.lstrip()[:6].upper() == "SELECT":
            raise Unstorable(NUL_TEXT)
        # a read: no stored text holds a NUL, so such a value equals nothing, as on SQLite (NULL neither)
        out = tuple(None if isinstance(p, str) and "\x00" in p else p for p in out)
    return out


class _Numeric(Loader):
    """NUMERIC (what SUM of integers and AVG give) read as SQLite gives it: an int when whole, else
    a float, never a Decimal that JSON and float arithmetic refuse."""

    def load(self, data) -> int | float:
        text = bytes(data).decode()
        try:
            return int(text)
        except ValueError:
            return float(text)


class Connection:
    """What the repositories call: `execute(sql, params)` with SQLite's placeholders."""

    dialect = "postgresql"

    def __init__(self, raw: psycopg.Connection):
        self.raw = raw

    def execute(self, sql: str, params: tuple | list = ()) -> psycopg.Cursor:
        try:
            if params:
                return self.raw.execute(translate(sql), _params(params, sql))
            return self.raw.execute(sql)
        except psycopg.Error as e:
            as_store_error(e)
            raise

    def executemany(self, sql: str, rows) -> psycopg.Cursor:
        cursor = self.raw.cursor()
        with _store_errors():
            cursor.executemany(translate(sql), [_params(r) for r in rows])
        return cursor

    def close(self) -> None:
        self.raw.close()


class Pooled:
    """`conn()` outside a write: each statement on a connection borrowed from the pool for it alone
    (autocommit: the statement commits by itself). The cursor comes back with its rows already on the
    client, so it is read after the connection went back. A read whose connection the server dropped
    under it is sent once more on another; a write is not (it may have committed)."""

    dialect = "postgresql"

    def __init__(self, pool: ConnectionPool):
        self.pool = pool

    def execute(self, sql: str, params: tuple | list = ()) -> psycopg.Cursor:
        raw, cursor = _on_sound(self.pool, lambda raw: Connection(raw).execute(sql, params), _is_read(sql))
        self.pool.putconn(raw)
        return cursor

    def executemany(self, sql: str, rows) -> psycopg.Cursor:
        raw = _borrow(self.pool)
        try:
            return Connection(raw).executemany(sql, rows)
        finally:
            self.pool.putconn(raw)


def _borrow(pool: ConnectionPool) -> psycopg.Connection:
    # getconn and putconn, not the pool's context manager, whose layers cost a statement's worth of CPU
    try:
        return pool.getconn()
    except psycopg.Error as e:
        raise as_store_error(e) from None


def _on_sound(pool: ConnectionPool, first, again: bool) -> tuple[psycopg.Connection, Any]:
    """A borrowed connection and what `first(connection)` returned. The check on borrow cannot see a
    drop whose goodbye is still on its way (pg_terminate_backend returns before the backend has gone):
    a first statement that finds its connection gone is sent once more on another when `again` (a read,
    a BEGIN: nothing was changed). On any failure the connection goes back, its transaction ended."""
    while True:
        raw = _borrow(pool)
        try:
            return raw, first(raw)
        except BaseException as e:
            if not raw.broken and raw.info.transaction_status != TransactionStatus.IDLE:
                with suppress(psycopg.Error):  # the lock's wait ran out, say
                    raw.execute("ROLLBACK")
            pool.putconn(raw)
            if again and raw.broken and isinstance(e, psycopg.OperationalError):
                again = False
                continue
            if isinstance(e, psycopg.Error):
                as_store_error(e)
            raise


def _is_read(sql: str) -> bool:
    return sql.lstrip()[:6].upper() == "SELECT"


def schema(script: str) -> str:
    """A migration of the SQLite schema as PostgreSQL writes it: 64-bit integers, identity keys, double
    precision, bytea; no rowid clause."""
    script = re.sub(r"\bINTEGER PRIMARY KEY AUTOINCREMENT\b", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", script)
    script = re.sub(r"\bINTEGER\b", "BIGINT", script)
    script = re.sub(r"\bREAL\b", "DOUBLE PRECISION", script)
    script = re.sub(r"\bBLOB\b", "BYTEA", script)
    return re.sub(r"\)\s*WITHOUT ROWID", ")", script)


def statements(script: str) -> list[str]:
    """A migration's statements: comments dropped, split on the semicolons that end them."""
    text = "\n".join(line.split("--", 1)[0] for line in script.splitlines())
    return [s.strip() for s in text.split(";") if s.strip()]


# `[store] pool_size` in config.toml: the most connections one process holds open to the database. A
# write holds one for its transaction (waiting on the write lock included), a read only for its
# statement; a borrow that finds none free within the busy wait is a refusal for now (503).
POOL_SIZE = 20
_MIN_OPEN = 2  # kept open while idle, so a quiet head's next request does not pay a connect


def _checked(raw: psycopg.Connection) -> None:
    """The check on borrow. A connection the server dropped (a restart, pg_terminate_backend) has the
    server's goodbye or the end of the stream waiting on its socket, and a sound idle one has nothing:
    only then is a round trip spent to find out; a failure here makes the pool discard it and try
    another."""
    if raw.closed or raw.broken:
        raise psycopg.OperationalError("the connection is closed")
    # poll, not select: select refuses a descriptor numbered past 1024, which a head holding many
    # sockets (long-polling agents) gives every new connection, and every borrow then failed
    waiting = select.poll()
    waiting.register(raw.fileno(), select.POLLIN)
    if waiting.poll(0):
        raw.execute("")


class PostgresStore:
    dialect = "postgresql"

    def __init__(self, url: str, busy_timeout_s: float, migrate: bool = True, data_dir: str | Path | None = None,
                 pool_size: int = POOL_SIZE):
        self.url = url
        self.busy_timeout_s = busy_timeout_s
        self.data_dir = None if data_dir is None else Path(data_dir)  # the archive's, not the store's
        self._conninfo = conninfo(url)
        self._local = threading.local()  # the connection of the write transaction this thread is in
        self.created = False
        with _store_errors():  # connected once first: a server that cannot be reached says why, at once
            first = self._connect()
        try:
            if migrate:
                self.created = self._version(first) == 0
                self._migrate(Connection(first))
        except psycopg.Error as e:
            first.close()
            raise as_store_error(e) from None
        first.close()
        self.pool = ConnectionPool(self._conninfo, min_size=min(_MIN_OPEN, pool_size), max_size=pool_size,
                                   kwargs={"autocommit": True, "row_factory": _rows, "connect_timeout": 10},
                                   configure=self._configure, check=_checked, timeout=busy_timeout_s,
                                   name="studio-store", open=True)

    def _configure(self, raw: psycopg.Connection) -> None:
        raw.adapters.register_loader("numeric", _Numeric)
        raw.execute(f"SET lock_timeout = {int(self.busy_timeout_s * 1000)}")

    def _connect(self) -> psycopg.Connection:
        raw = psycopg.connect(self._conninfo, autocommit=True, row_factory=_rows, connect_timeout=10)
        self._configure(raw)
        return raw

    def conn(self) -> Connection | Pooled:
        """Inside a write on this thread, its transaction's connection (reads see its changes); else
        each statement on a connection borrowed for it."""
        return getattr(self._local, "tx", None) or Pooled(self.pool)

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction, serialized with every other one on the database; commits on success,
        rolls back on any exception. A write inside a write is a savepoint of the same transaction."""
        held = getattr(self._local, "tx", None)
        if held is not None:
            with _store_errors(), held.raw.transaction():
                yield held
            return
        raw, _ = _on_sound(self.pool, lambda raw: raw.execute(_BEGIN_LOCKED), again=True)  # one round trip
        c = self._local.tx = Connection(raw)
        try:
            with _store_errors():
                try:
                    yield c
                except BaseException:
                    with suppress(psycopg.Error):  # a connection that cannot roll back, the pool discards
                        raw.execute("ROLLBACK")
                    raise
                raw.execute("COMMIT")
        finally:
            self._local.tx = None
            self.pool.putconn(raw)

    def one(self, sql: str, params: tuple = ()) -> Row | None:
        return self.conn().execute(sql, params).fetchone()

    def all(self, sql: str, params: tuple = ()) -> list[Row]:
        return self.conn().execute(sql, params).fetchall()

    def ping(self) -> None:
        self.conn().execute("SELECT 1").fetchone()

    def schema_version(self) -> int:
        with _store_errors(), self.pool.connection() as raw:
            return self._version(raw)

    @staticmethod
    def _version(raw: psycopg.Connection) -> int:
        if raw.execute("SELECT to_regclass('studio_schema')").fetchone()[0] is None:
            return 0
        row = raw.execute("SELECT version FROM studio_schema").fetchone()
        return 0 if row is None else row[0]

    def migrate(self) -> int:
        """Bring the schema to the current version, one migration per transaction; heads starting at
        once take turns (an advisory lock), and each re-reads the version under it."""
        with _store_errors(), self.pool.connection() as raw:
            return self._migrate(Connection(raw))

    def _migrate(self, c: Connection) -> int:
        for i in range(len(migrations.MIGRATIONS)):
            with c.raw.transaction():
                c.raw.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
                c.raw.execute("CREATE TABLE IF NOT EXISTS studio_schema (version BIGINT NOT NULL)")
                row = c.raw.execute("SELECT version FROM studio_schema").fetchone()
                if (0 if row is None else row[0]) != i:
                    continue
                for statement in statements(schema(migrations.MIGRATIONS[i])):
                    c.raw.execute(statement)
                if row is None:
                    c.raw.execute("INSERT INTO studio_schema (version) VALUES (%s)", (i + 1,))
                else:
                    c.raw.execute("UPDATE studio_schema SET version = %s", (i + 1,))
        with c.raw.transaction():  # the functions the dialect's queries call, as this version writes them
            c.raw.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
            c.raw.execute(POSTGRES_FUNCTIONS)
        return self._version(c.raw)

    def close(self) -> None:
        self.pool.close()


# PostgreSQL's "not now": a lock not granted in the busy wait, a serialization or deadlock retry, the
# server going away or out of room. Seconds to wait before the same request can succeed.
_RETRY_AFTER_S: dict[type, int] = {pgerrors.LockNotAvailable: 5, pgerrors.SerializationFailure: 5,
                                   pgerrors.DeadlockDetected: 5, pgerrors.DiskFull: 60,
                                   pgerrors.AdminShutdown: 5, pgerrors.CannotConnectNow: 5}


def unavailable(e: BaseException) -> int | None:
    for kind, seconds in _RETRY_AFTER_S.items():
        if isinstance(e, kind):
            return seconds
    if isinstance(e, psycopg.OperationalError):  # the connection went away: another try reconnects
        return 5
    return None


def tables(c: Any) -> dict[str, list[str]]:
    """Every table of the schema and its columns in order (what `studio store copy` and its test compare)."""
    rows = c.execute("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = "
                     "current_schema() AND table_name <> 'studio_schema' ORDER BY table_name, ordinal_position").fetchall()
    out: dict[str, list[str]] = {}
    for r in rows:
        out.setdefault(r[0], []).append(r[1])
    return out

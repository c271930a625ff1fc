"""`studio store copy`: a stopped single-box install's whole control plane, from its SQLite database
into an empty PostgreSQL database, row for row. Values are copied as stored (token hashes, key
ciphertexts, ids, JSON text), so every token, key and id works as before; identity counters continue
after the highest id copied. Afterwards every table's row count and every numeric column's sum are
compared, and any difference is an error."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import psycopg

from orchestrator.store import postgres as pg
from orchestrator.store.database import Store

BATCH = 2_000  # rows per round trip
# held by the running heads of an install, and the install is stopped: nothing in them carries over
EPHEMERAL = ("leases",)


class NotEmpty(Exception):
    """The target database already holds the control plane's tables or rows."""


class Mismatch(Exception):
    """A table whose count or sums differ after the copy."""


class Refused(Exception):
    """The PostgreSQL server refused the connection or a statement (its message, without the URL)."""


@dataclass
class Copied:
    tables: dict[str, int] = field(default_factory=dict)  # rows per table
    sums: dict[str, dict[str, float | int]] = field(default_factory=dict)  # per table, per numeric column


def _tables(source: Store) -> list[str]:
    # parents before children: the foreign keys of accounts, batches are met in creation order
    names = source.all("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid")
    return [r[0] for r in names if r[0] not in EPHEMERAL]


def _columns(source: Store, table: str) -> list[tuple[str, str]]:
    return [(r["name"], (r["type"] or "").upper()) for r in source.all(f"PRAGMA table_info({table})")]


def _numeric(columns: list[tuple[str, str]]) -> list[str]:
    return [name for name, kind in columns if kind in ("INTEGER", "REAL")]


def _sums(one: Callable, table: str, numeric: list[str]) -> tuple[int, dict[str, float]]:
    exprs = ", ".join(["COUNT(*)"] + [f"SUM({c})" for c in numeric])
    row = one(f"SELECT {exprs} FROM {table}")
    return row[0], {c: row[i + 1] or 0 for i, c in enumerate(numeric)}


def _same(a: tuple[int, dict], b: tuple[int, dict]) -> bool:
    """Equal counts and integer sums; float sums equal but for the order they were added in."""
    return a[0] == b[0] and a[1].keys() == b[1].keys() and all(
        math.isclose(float(a[1][k]), float(b[1][k]), rel_tol=1e-12, abs_tol=1e-9)
        if isinstance(a[1][k], float) or isinstance(b[1][k], float) else int(a[1][k]) == int(b[1][k])
        for k in a[1])


def _empty(target: pg.PostgresStore) -> None:
    """Refuses a database holding rows of any table (an empty schema, left by a copy that failed, is fine)."""
    full = sorted(t for t in pg.tables(target.conn()) if target.one(f"SELECT 1 FROM {t} LIMIT 1") is not None)
    if full:
        raise NotEmpty(f"it is not empty: {', '.join(full[:5])}{' ...' if len(full) > 5 else ''} hold rows")


def copy(source: Store, url: str, progress: Callable[[str, int, int], None] = lambda *a: None) -> Copied:
    """Copy every row of `source` into the empty database at `url`; the counts and sums copied."""
    try:
        return _copy(source, url, progress)
    except psycopg.Error as e:
        raise Refused(str(e).replace(url, pg.redacted(url)).strip()) from None


def _copy(source: Store, url: str, progress: Callable[[str, int, int], None]) -> Copied:
    target = pg.PostgresStore(url, source.busy_timeout_s, migrate=False)  # emptiness is checked first
    _empty(target)
    target.migrate()
    if target.schema_version() != source.schema_version():
        raise Mismatch(f"the source is at schema version {source.schema_version()}, this version of the "
                       f"service writes {target.schema_version()}: start the service on the data dir once first")
    out = Copied()
    tables = _tables(source)
    with target.write() as c:
        for table in tables:
            columns = _columns(source, table)
            names = [n for n, _ in columns]
            total = source.one(f"SELECT COUNT(*) FROM {table}")[0]
            insert = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
            done = 0
            cursor = source.conn().execute(f"SELECT {', '.join(names)} FROM {table}")
            while rows := cursor.fetchmany(BATCH):
                c.executemany(insert, rows)
                done += len(rows)
                progress(table, done, total)
            if total == 0:
                progress(table, 0, 0)
            for col in (n for n, kind in columns if kind == "INTEGER" and n in ("seq", "id")):
                c.raw.execute(f"SELECT setval(pg_get_serial_sequence('{table}', '{col}'), "
                              f"GREATEST((SELECT MAX({col}) FROM {table}), 1), (SELECT COUNT(*) > 0 FROM {table}))")
        # compared inside the transaction: a difference rolls the whole copy back
        for table in tables:
            numeric = _numeric(_columns(source, table))
            before, after = _sums(source.one, table, numeric), _sums(lambda q: c.execute(q).fetchone(), table, numeric)
            if not _same(before, after):
                raise Mismatch(f"{table}: {before} in the data dir, {after} copied")
            out.tables[table], out.sums[table] = before
    target.close()
    return out

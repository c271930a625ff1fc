"""The control plane's store on a real PostgreSQL: the same schema as SQLite's, brought up to date
by the same migrations; the interface the repositories use (SQLite's placeholders, rows by name and
position, one transaction per write); writes serialized across connections as SQLite serializes them;
a lock held past the busy wait is a refusal for now (503), not a failure; URLs checked without
printing a password."""
from __future__ import annotations

import threading
import time

import psycopg
import pytest

from orchestrator.store import MIGRATIONS, IntegrityError, OperationalError, Store, StoreError, unavailable
from orchestrator.store import postgres as pg


def test_the_schema_is_sqlites_table_for_table_and_column_for_column(pg_url, tmp_path):
    store = pg.PostgresStore(pg_url, busy_timeout_s=5)
    assert store.schema_version() == len(MIGRATIONS)
    lite = Store(tmp_path / "lite")
    names = [r[0] for r in lite.all("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    expected = {n: [r["name"] for r in lite.all(f"PRAGMA table_info({n})")] for n in names}
    assert pg.tables(store.conn()) == expected
    # a second start (another head) finds it current and changes nothing
    again = pg.PostgresStore(pg_url, busy_timeout_s=5)
    assert again.migrate() == len(MIGRATIONS)
    store.close(), again.close()


def test_placeholders_rows_and_transactions(pg_url):
    store = pg.PostgresStore(pg_url, busy_timeout_s=5)
    with store.write() as c:
        c.execute("INSERT INTO accounts (id, email, handle, plan, created_at_ms) VALUES (?, ?, ?, ?, ?)",
                  ("acc_1", "a@example.org", "a%b", "lab", 1_700_000_000_000))
    row = store.one("SELECT id, handle, created_at_ms FROM accounts WHERE handle LIKE ?", ("a%",))
    assert (row["id"], row[1], row["created_at_ms"]) == ("acc_1", "a%b", 1_700_000_000_000)
    assert row.keys() == ["id", "handle", "created_at_ms"] and list(row) == ["acc_1", "a%b", 1_700_000_000_000]
    with pytest.raises(RuntimeError), store.write() as c:
        c.execute("UPDATE accounts SET plan = ? WHERE id = ?", ("free", "acc_1"))
        raise RuntimeError("rolled back")
    assert store.one("SELECT plan FROM accounts")["plan"] == "lab"
    with pytest.raises(psycopg.errors.UniqueViolation) as refused, store.write() as c:
        c.execute("INSERT INTO accounts (id, email, handle, plan, created_at_ms) VALUES (?, ?, ?, ?, ?)",
                  ("acc_2", "a@example.org", "b", "lab", 1))
    # the store's own vocabulary catches it, as it catches SQLite's: nothing above names the driver
    assert isinstance(refused.value, IntegrityError) and isinstance(refused.value, StoreError)
    assert unavailable(refused.value) is None
    # identity keys count on like SQLite's AUTOINCREMENT, and 64-bit integers hold milliseconds
    with store.write() as c:
        for n in range(3):
            c.execute("INSERT INTO security_events (account_id, kind, detail, at_ms) VALUES (?, ?, ?, ?)",
                      ("acc_1", "k", str(n), 2**62))
    assert [r["id"] for r in store.all("SELECT id FROM security_events ORDER BY id")] == [1, 2, 3]
    store.close()


def test_writes_are_serialized_and_a_held_lock_is_a_refusal_for_now(pg_url):
    store = pg.PostgresStore(pg_url, busy_timeout_s=1)
    entered, release, order = threading.Event(), threading.Event(), []

    def first():
        with store.write():
            order.append("first in")
            entered.set()
            release.wait(10)
            order.append("first out")

    t = threading.Thread(target=first)
    t.start()
    assert entered.wait(10)
    other = pg.PostgresStore(pg_url, busy_timeout_s=1)
    started = time.monotonic()
    with pytest.raises(psycopg.errors.LockNotAvailable) as refused, other.write():
        order.append("second in")
    assert 0.9 <= time.monotonic() - started < 5 and unavailable(refused.value) == 5
    assert isinstance(refused.value, OperationalError)
    try:  # what the dispatcher and `studio serve` catch
        raise refused.value
    except (StoreError, OSError) as e:
        assert e is refused.value
    reads = other.one("SELECT COUNT(*) FROM accounts")  # reads never wait on the write lock
    assert reads[0] == 0
    release.set()
    t.join(10)
    with other.write():
        order.append("second in")
    assert order == ["first in", "first out", "second in"]
    store.close(), other.close()


@pytest.mark.parametrize("url, says", [
    ("mysql://u:secret@h/db", "the scheme is 'mysql'"),
    ("postgresql://u:secret@/db", "no host"),
    ("postgresql://u:secret@h:5432", "no database name"),
    ("postgresql://u:secret@h:port/db", "not a URL"),
])
def test_a_url_that_cannot_name_a_database_is_refused_without_its_password(url, says):
    with pytest.raises(pg.UrlError) as e:
        pg.conninfo(url)
    assert says in str(e.value) and "secret" not in str(e.value)
    assert pg.redacted(url).count("secret") == 0


def test_sqlalchemys_spelling_is_read_as_libpqs():
    assert pg.conninfo("postgresql+psycopg://u:p@127.0.0.1:5432/db") == "postgresql://u:p@127.0.0.1:5432/db"


def test_a_server_that_cannot_be_reached_is_the_stores_operational_error():
    with pytest.raises(StoreError) as refused:
        pg.PostgresStore("postgresql://u:p@127.0.0.1:1/db", busy_timeout_s=1)
    assert isinstance(refused.value, OperationalError) and unavailable(refused.value) == 5

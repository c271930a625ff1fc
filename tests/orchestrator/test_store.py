"""The control-plane store: WAL, versioned migrations, concurrent writers on one data dir."""
from __future__ import annotations

import sqlite3
import threading

from orchestrator import accounts
from orchestrator.core import Core
from orchestrator.store import MIGRATIONS, Store


def test_migrations_run_on_open_and_are_idempotent(tmp_path):
    store = Store(tmp_path / "d")
    assert store.schema_version() == len(MIGRATIONS)
    tables = {r[0] for r in store.all("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"accounts", "tokens", "scenarios", "skills", "security_events", "email_outbox",
            "provider_keys"} <= tables
    again = Store(tmp_path / "d")
    assert again.schema_version() == len(MIGRATIONS)


def test_wal_mode_and_data_dir_created(tmp_path):
    store = Store(tmp_path / "new" / "dir")
    assert (tmp_path / "new" / "dir" / "studio.db").exists()
    assert store.one("PRAGMA journal_mode")[0] == "wal"


def test_a_new_migration_applies_on_the_next_open(tmp_path, monkeypatch):
    Store(tmp_path / "d")
    monkeypatch.setattr("orchestrator.store.migrations.MIGRATIONS", MIGRATIONS + ["CREATE TABLE later (x INTEGER);"])
    store = Store(tmp_path / "d")
    assert store.schema_version() == len(MIGRATIONS) + 1
    assert store.one("SELECT COUNT(*) FROM later")[0] == 0


def test_failed_write_rolls_back(tmp_path):
    store = Store(tmp_path / "d")
    try:
        with store.write() as c:
            c.execute("INSERT INTO accounts (id, email, handle, plan, created_at_ms) VALUES ('a', 'e', 'h', 'free', 0)")
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert store.one("SELECT COUNT(*) FROM accounts")[0] == 0


def test_two_processes_worth_of_writers_do_not_collide(tmp_path):
    # Two Cores on one data dir stand for `studio serve` and the admin CLI.
    a, b = Core.open(tmp_path / "d"), Core.open(tmp_path / "d")
    errors: list[BaseException] = []

    def work(core: Core, tag: str) -> None:
        try:
            for i in range(40):
                accounts.create_account(core, f"{tag}{i}@example.org")
        except BaseException as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(c, t)) for c, t in ((a, "a"), (b, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert a.store.one("SELECT COUNT(*) FROM accounts")[0] == 80
    raw = sqlite3.connect(tmp_path / "d" / "studio.db")
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

"""`studio store copy --to URL` on a real PostgreSQL: a data dir holding every kind of row (an account
and its tokens, console password, session and sign-in link, a scenario, a skill, a key, a played
series and a run launched through the service; what only play writes, a finished run, a series' kept
summary, a model run's turns and decision grading's rows, written as the service writes them) is copied row for row: every
value equal, byte for byte where bytes; the identity counters go on after the ids copied. A database
that is not empty, a URL naming no PostgreSQL database and a data dir in use are refused (exit 2),
and no password is ever printed."""
from __future__ import annotations

import json
import subprocess
import sys

import psycopg

from orchestrator import accounts, console_auth, datadir
from orchestrator.seats import keys
from orchestrator.store import Store
from orchestrator.store import copy as store_copy
from orchestrator.store import postgres as pg
from tests.runs.conftest import account, local_body, start

STUDIO = [sys.executable, "-m", "api.cli"]


def _studio(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*STUDIO, *args], capture_output=True, text=True, timeout=300, check=False)


def _fill(tmp_path) -> Store:
    s = start(tmp_path / "data", dispatch=False)  # launches are stored as queued: rows, not play, are copied
    try:
        token = account(s.core)
        email = "copy@example.org"
        accounts.create_account(s.core, email, plan="lab", verified=True)
        console_auth.set_password(s.core, email, "a long enough password")
        console_auth.sign_in_password(s.core, email, "a long enough password", "127.0.0.1")
        console_auth.login_link(s.core, email)
        keys.set_key(s.core, provider="router", key="k-router-secret", email=email, base_url="http://127.0.0.1:9/v1")
        with s.client(token) as c:
            r = c.post("/api/v1/skills", json={"name": "copy", "text": "a skill that is copied"})
            assert r.status_code == 201, r.text
            r = c.post("/api/v1/scenarios", json={"name": "copied", "season_ticks": 40})
            assert r.status_code == 201, r.text
            batch = c.post("/api/v1/runs", json=local_body(season_ticks=20, trials=2)).json()["batch"]
            assert c.post("/api/v1/runs", json=local_body(season_ticks=20)).status_code == 201
    finally:
        s.stop()
    store = Store(tmp_path / "data")
    run_id = batch["run_ids"][0]
    # what only played runs, a model seat and decision grading write, as they write it
    with store.write() as c:
        c.execute("UPDATE runs SET status = 'finished', spend_usd = 0.125, results = '{\"agents\": []}' WHERE id = ?",
                  (run_id,))
        c.execute("INSERT INTO batch_summaries (batch_id, version, matches, summary, computed_at_ms) "
                  "VALUES (?, 'v1', 1, '{\"seats\": []}', 2)", (batch["batch_id"],))
        c.execute("INSERT INTO run_turns (run_id, tick, seat, n, turn, play, memory) VALUES (?, 3, 0, 0, ?, '[]', ?)",
                  (run_id, json.dumps({"reply": "north", "latency_ms": 12.5}), json.dumps({"role": "assistant"})))
        c.execute("INSERT INTO decision_turns (run_id, tick, seat, turn) VALUES (?, 3, 0, '{\"loss\": 0.25}')", (run_id,))
        c.execute("INSERT INTO decision_seats (run_id, seat, summary) VALUES (?, 0, '{\"accuracy\": 91.5}')", (run_id,))
        c.execute("INSERT INTO security_events (account_id, kind, detail, at_ms) SELECT id, 'copy', 'kept', 1 "
                  "FROM accounts LIMIT 1")
        c.execute("INSERT INTO email_outbox (to_addr, subject, body, created_at_ms) VALUES ('a@b.c', 's', 'b', 1)")
        c.execute("INSERT INTO rate_counts (scope, subject, period, hits) VALUES ('token', 'tok_1', 29000000, 3)")
    empty = [t for t in _tables(store) if store.one(f"SELECT COUNT(*) FROM {t}")[0] == 0]
    assert not empty, f"every kind of row: {empty} hold none"
    return store


def _tables(store: Store) -> list[str]:
    """Every table but the running heads' leases, which a stopped install's copy leaves behind."""
    return [r[0] for r in store.all("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            if r[0] not in store_copy.EPHEMERAL]


def test_a_copy_holds_every_row_and_refuses_what_it_must(tmp_path, pg_url):
    store = _fill(tmp_path)
    data = str(tmp_path / "data")
    done = _studio("store", "copy", "--to", pg_url, "--data-dir", data)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    password = pg_url.split(":")[2].split("@")[0]
    assert password not in done.stdout + done.stderr and ":***@" in printed["to"]
    assert "runs" in done.stderr  # progress, per table

    with psycopg.connect(pg.conninfo(pg_url)) as target:
        for table in _tables(store):
            columns = [r["name"] for r in store.all(f"PRAGMA table_info({table})")]
            key = ", ".join(columns)
            lite = [tuple(r) for r in store.all(f"SELECT {key} FROM {table} ORDER BY {key}")]
            copied = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r)
                      for r in target.execute(f"SELECT {key} FROM {table} ORDER BY {key}").fetchall()]
            assert copied == lite, table
            assert printed["tables"][table] == len(lite)
        # identity counters go on after the ids copied: a new row does not collide
        top = store.one("SELECT MAX(seq) FROM runs")[0]
        target.execute("INSERT INTO skills (id, account_id, name, text, created_at_ms) "
                       "SELECT 'skl_new', id, 'n', 't', 1 FROM accounts LIMIT 1")
        assert target.execute("SELECT seq FROM skills WHERE id = 'skl_new'").fetchone()[0] > 1
        assert top >= 2

    again = _studio("store", "copy", "--to", pg_url, "--data-dir", data)
    assert again.returncode == 2 and "not empty" in again.stderr and password not in again.stderr
    bad = _studio("store", "copy", "--to", "mysql://u:hunter2@h/db", "--data-dir", data)
    assert bad.returncode == 2 and "--to" in bad.stderr and "hunter2" not in bad.stderr
    held = datadir.lock(data, what="a running `studio serve`")
    try:
        busy = _studio("store", "copy", "--to", pg_url, "--data-dir", data)
        assert busy.returncode == 2 and "in use" in busy.stderr
    finally:
        held.close()

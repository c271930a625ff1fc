"""The PostgreSQL store's connections come from a pool sized by `[store] pool_size`, each checked when
it is borrowed: a service whose every connection the server dropped (pg_terminate_backend, as a
restart of PostgreSQL does) answers its next request as before, and nothing written is lost."""
from __future__ import annotations

import os
import threading

import httpx
import psycopg
import pytest

from orchestrator import accounts, auth
from orchestrator.core import Core
from orchestrator.store import StoreError, location, unavailable
from orchestrator.store import postgres as pg
from tests.api.util import bearer, serving


def _terminate_all_but_mine(url: str) -> int:
    """Drops every other connection to the database, the service's included; how many it dropped."""
    with psycopg.connect(pg.conninfo(url), autocommit=True) as admin:
        pids = [r[0] for r in admin.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                                            "AND pid <> pg_backend_pid()").fetchall()]
        for pid in pids:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    return len(pids)


def test_a_service_whose_connections_were_dropped_answers_the_next_request_and_loses_nothing(pg_url, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(f'[store]\nurl = "{pg_url}"\npool_size = 3\n')
    core = Core.open(data)
    assert core.store.pool.max_size == 3
    accounts.create_account(core, "pool@example.org", plan="lab", verified=True)
    token = auth.mint(core, "pool@example.org", scopes=auth.SCOPES)[0]
    with serving(core) as url, httpx.Client(base_url=url, headers=bearer(token), timeout=30) as c:
        made = []
        for n in range(5):
            r = c.post("/api/v1/skills", json={"name": f"skill {n}", "text": "Trade fairly."})
            assert r.status_code == 201, r.text
            made.append(r.json()["skill"]["id"])
        for _ in range(2):  # twice: the second time every connection in the pool is a new one
            assert _terminate_all_but_mine(pg_url) >= 1
            r = c.get("/api/v1/skills")  # a read first, on a connection the server dropped
            assert r.status_code == 200, r.text
            assert sorted(s["id"] for s in r.json()["mine"]) == sorted(made)
            assert _terminate_all_but_mine(pg_url) >= 1
            r = c.post("/api/v1/skills", json={"name": f"skill {len(made)}", "text": "Trade fairly."})
            assert r.status_code == 201, r.text  # a write first, too
            made.append(r.json()["skill"]["id"])
        assert c.get("/api/v1/health").json()["store"] == "postgresql"
    with psycopg.connect(pg.conninfo(pg_url)) as check:
        assert check.execute("SELECT COUNT(*) FROM skills").fetchone()[0] == len(made) == 7
    core.store.close()


def test_the_pool_holds_at_most_its_size_and_a_borrow_past_the_busy_wait_is_a_refusal_for_now(pg_url):
    store = pg.PostgresStore(pg_url, busy_timeout_s=1, pool_size=2)
    entered, release = threading.Event(), threading.Event()

    def hold():
        with store.write():
            entered.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    assert entered.wait(10)
    assert store.one("SELECT COUNT(*) FROM accounts")[0] == 0  # the second connection
    with store.pool.connection():  # every connection borrowed: the next borrow waits, then is refused
        with pytest.raises(StoreError) as refused:
            store.one("SELECT 1")
    assert unavailable(refused.value) == 5
    release.set()
    t.join(10)
    assert store.pool.get_stats()["pool_max"] == 2
    assert store.one("SELECT 1")[0] == 1
    store.close()


@pytest.mark.parametrize("value", [0, -1, 1.5, "8", True, 1001])
def test_a_pool_size_that_is_not_a_count_of_connections_is_refused(value):
    with pytest.raises(location.SettingError) as refused:
        location.pool_size({"store": {"pool_size": value}})
    assert "[store] pool_size" in str(refused.value)


def test_the_default_pool_size():
    assert location.pool_size({}) == pg.POOL_SIZE == 20


def test_a_process_holding_many_descriptors_still_borrows(pg_url):
    # a head with a thousand long-polling agents numbers its new sockets past 1024, where the check on
    # borrow used select(), which refuses them: every borrow was refused after the busy wait
    held = [open(os.devnull) for _ in range(1100)]
    store = pg.PostgresStore(pg_url, busy_timeout_s=2, pool_size=2)
    try:
        for _ in range(5):  # each borrow after the first checks a connection numbered past 1024
            assert store.one("SELECT 1")[0] == 1
            with store.write() as c:
                c.execute("SELECT 1")
    finally:
        store.close()
        for f in held:
            f.close()


def test_a_write_whose_connection_was_dropped_before_the_check_could_see_it_begins_on_another(pg_url, monkeypatch):
    # pg_terminate_backend returns before the backend has gone, so the check on borrow may pass a
    # connection whose goodbye is still on its way (a make test run answered 503 to the request after
    # the drop): here the check sees nothing at all, and the BEGIN alone finds the connection gone
    monkeypatch.setattr(pg, "_checked", lambda raw: None)
    store = pg.PostgresStore(pg_url, busy_timeout_s=2, pool_size=1)
    try:
        with store.write() as c:
            c.execute("SELECT 1")
        assert _terminate_all_but_mine(pg_url) >= 1
        with store.write() as c:
            assert c.execute("SELECT COUNT(*) FROM accounts").fetchone()[0] == 0
        assert store.one("SELECT 1")[0] == 1
    finally:
        store.close()

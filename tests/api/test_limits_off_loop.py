"""A request's token checks never hold every other request: on PostgreSQL the token's read and its
per-minute count are network round trips, taken off the event loop; on SQLite the count waits at most
its short busy wait. A count held up by a lock in the store (a slow transaction on the row) delays only
its own request: the health check answers meanwhile, on either store."""
from __future__ import annotations

import sqlite3
import threading
import time

import httpx
import pytest

from api.app import create_app
from orchestrator import accounts, auth
from tests.api.util import bearer, free_port, start_server
from tests.orchestrator.conftest import open_core


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def served(request, tmp_path):
    url = request.getfixturevalue("pg_url") if request.param == "postgresql" else None
    core = open_core(tmp_path / "data", url)
    port = free_port()
    server, thread = start_server(create_app(core=core), port)
    yield core, url, f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
    core.store.close()


def _held_count(core, url: str | None):
    """A transaction holding the token counts' rows (PostgreSQL) or the write lock (SQLite)."""
    if url is None:
        c = sqlite3.connect(core.store.path, isolation_level=None)
        c.execute("BEGIN IMMEDIATE")
        return c
    import psycopg

    c = psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"))
    c.execute("SELECT * FROM rate_counts WHERE scope = 'token' FOR UPDATE")
    return c


def test_a_count_held_in_the_store_delays_only_its_own_request(served):
    core, url, base = served
    accounts.create_account(core, "held@example.org", plan="lab")
    token, _ = auth.mint(core, "held@example.org")
    with httpx.Client(base_url=base, timeout=30) as c:
        assert c.get("/api/v1/me", headers=bearer(token)).status_code == 200  # its count's row exists
        lock = _held_count(core, url)
        answers: list[int] = []
        counted = threading.Thread(target=lambda: answers.append(
            httpx.get(f"{base}/api/v1/me", headers=bearer(token), timeout=30).status_code))
        try:
            counted.start()
            time.sleep(0.5)  # the request is in its count, waiting on the lock
            began = time.monotonic()
            assert c.get("/api/v1/health").status_code == 200
            took = time.monotonic() - began
            time.sleep(1.5)
        finally:
            lock.rollback()
            lock.close()
        counted.join(timeout=30)
    assert answers == [200]  # the held request was answered too, once the lock went
    assert took < 1.0, f"the health check waited {took:.2f} s behind another request's count"

"""A full disk answers writes 503 `unavailable` with Retry-After, not 500; reads keep answering; the
same write succeeds once there is room. (A held write lock: tests/faults/test_requests.py.)"""
from __future__ import annotations

import time

import httpx

from api.app import create_app
from orchestrator import accounts, auth
from orchestrator.core import Core
from tests.api.util import bearer, free_port, start_server
from tests.faults.conftest import fill, tmpfs  # noqa: F401  (the fixture: a 48 MiB tmpfs)


def test_a_full_disk_answers_writes_503_with_retry_after_and_reads_still_work(tmpfs):  # noqa: F811
    core = Core.open(tmpfs / "data")
    srv, thread = start_server(create_app(core=core), port := free_port())
    try:
        accounts.create_account(core, "d@example.org", plan="lab", verified=True)
        token, _ = auth.mint(core, "d@example.org", scopes=("scenarios:read", "scenarios:write", "runs:read"))
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=bearer(token), timeout=30) as c:
            assert c.get("/api/v1/me").status_code == 200
            filler = fill(tmpfs)
            try:
                answers = []
                for k in range(200):  # SQLite first fills the room its WAL already has
                    r = c.post("/api/v1/skills", json={"name": f"full {k}", "text": "x" * 2000})
                    answers.append(r.status_code)
                    if r.status_code != 201:
                        break
                assert answers[-1] == 503 and set(answers) <= {201, 503}, answers
                assert r.json()["error"] == "unavailable" and "full" in r.json()["message"], r.text
                assert int(r.headers["retry-after"]) > 0
                started = time.monotonic()
                assert c.get("/api/v1/me").status_code == 200  # reads never need room
                assert c.get("/api/v1/skills").status_code == 200
                assert time.monotonic() - started < 3
            finally:
                filler.unlink()
            r = c.post("/api/v1/skills", json={"name": "after", "text": "written once there is room"})
            assert r.status_code == 201, r.text
    finally:
        srv.should_exit = True
        thread.join(timeout=10)

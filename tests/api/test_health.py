"""GET /api/v1/health and the X-Studio-Head header: which head answered, whether it dispatches, and
503 `unavailable` while it cannot reach its store (here: its database file moved away under it)."""
from __future__ import annotations

import httpx

from orchestrator.core import Core
from tests.api.util import serving


def test_health_names_the_head_and_follows_the_store(tmp_path):
    core = Core.open(tmp_path / "data")
    with serving(core) as url, httpx.Client(base_url=url, timeout=30) as c:
        r = c.get("/api/v1/health")
        assert r.status_code == 200, r.text
        body = r.json()
        assert body == {"status": "ok", "head": body["head"], "dispatching": False, "store": "sqlite"}
        head = body["head"]
        assert head and r.headers["x-studio-head"] == head
        # every answer names the head: discovery, an error, a console page
        for path, status in (("/api/v1", 200), ("/api/v1/runs", 401), ("/api/v1/nowhere", 404), ("/console/login", 200)):
            r = c.get(path)
            assert r.status_code == status and r.headers["x-studio-head"] == head, (path, r.status_code)
        assert "/api/v1/health" not in c.get("/api/v1/openapi.json").json()["paths"]

        db = core.store.path
        db.rename(db.with_name("moved.db"))
        try:
            r = c.get("/api/v1/health")
            assert r.status_code == 503 and r.json()["error"] == "unavailable", r.text
            assert "cannot reach its store" in r.json()["message"] and int(r.headers["retry-after"]) > 0
            assert r.headers["x-studio-head"] == head
        finally:
            db.with_name("moved.db").rename(db)
        assert c.get("/api/v1/health").json()["status"] == "ok"


def test_a_dispatching_head_says_so(shared_srv):
    r = httpx.get(shared_srv.url + "/api/v1/health", timeout=30)
    assert r.status_code == 200 and r.json()["dispatching"] is True and r.json()["store"] == "sqlite"

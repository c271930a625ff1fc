"""Text PostgreSQL cannot hold (a NUL character) is the request's fault on a server whose control plane is
on PostgreSQL: 400 `bad_request` naming it, nothing changed, never a 500; a read filtered by such text matches
nothing (schemathesis found both)."""
from __future__ import annotations

import httpx
import pytest

from orchestrator import accounts, auth
from tests.api.util import bearer

pytestmark = pytest.mark.postgres


def test_a_nul_in_a_body_or_a_query_is_refused_and_changes_nothing(live_pg):
    email = "nul@example.org"
    accounts.create_account(live_pg.core, email, plan="lab")
    token, _ = auth.mint(live_pg.core, email, scopes=auth.SCOPES)
    with httpx.Client(base_url=live_pg.url, headers=bearer(token), timeout=30) as c:
        r = c.post("/api/v1/skills", json={"name": "Nul", "text": "before the NUL\x00after it"})
        assert r.status_code == 400 and r.json()["error"] == "bad_request", r.text
        assert "NUL" in r.json()["message"]
        assert c.get("/api/v1/skills").json()["mine"] == []
        made = c.post("/api/v1/skills", json={"name": "Kept", "text": "plain words to keep"})
        assert made.status_code == 201, made.text
        sid = made.json()["skill"]["id"]
        r = c.put(f"/api/v1/skills/{sid}", json={"text": "plain\x00words to keep"})
        assert r.status_code == 400 and r.json()["error"] == "bad_request", r.text
        assert c.get(f"/api/v1/skills/{sid}").json()["skill"]["text"] == "plain words to keep"
        # a filter no stored id can equal matches nothing, as on SQLite (a read is not refused)
        r = c.get("/api/v1/runs", params={"batch_id": "bat_\x00"})
        assert r.status_code == 200 and r.json()["runs"] == [], r.text
        r = c.get("/api/v1/runs/run_%00")  # a lookup by such an id finds nothing
        assert r.status_code == 404 and r.json()["error"] == "unknown_run", r.text

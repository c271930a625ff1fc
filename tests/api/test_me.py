"""GET /me: the account view with the plan's limits (GET /api/v1/me)."""
from __future__ import annotations

from tests.api.util import bearer

from orchestrator import accounts


def test_me_reports_account_plan_token_and_limits(client, make_account):
    acct = make_account("starter")
    token = acct.token(scopes=("runs:write",), expires_in_ms=3_600_000, name="ci")
    d = client.get("/api/v1/me", headers=bearer(token)).json()
    assert d["user"]["email"] == acct.email and d["user"]["id"].startswith("acc_")
    assert d["plan"] == {"id": "starter", "name": "Starter", "status": "active", "source": "operator",
                         "period_end_ms": None}
    assert d["api_access"] == "full"
    assert d["token"]["name"] == "ci" and d["token"]["prefix"] == token[:12]
    assert d["token"]["scopes"] == ["runs:write"]  # as minted, implications not spelled out
    assert d["token"]["expires_at_ms"] > 0
    assert d["limits"] == {"seats_per_run": 6, "ticks_per_run": 600, "agent_turns_per_month": 12000,
                           "queued_runs": 2, "series_max_trials": 4, "saved_scenarios": 20, "saved_skills": 20,
                           "access_tokens": 3, "requests_per_minute": 120}


def test_me_free_plan_is_read_access_and_lab_turns_are_null(client, make_account, live):
    free = make_account("free")
    d = client.get("/api/v1/me", headers=bearer(free.token())).json()
    assert d["api_access"] == "read" and d["limits"]["access_tokens"] == 1
    lab = client.get("/api/v1/me", headers=bearer(make_account("lab").token())).json()
    assert lab["limits"]["agent_turns_per_month"] is None
    # the operator override in the live data dir's config.toml is what /me reports
    assert lab["limits"]["requests_per_minute"] == 1_000_000


def test_plan_change_applies_on_next_request(client, make_account, live):
    acct = make_account("free")
    token = acct.token()
    assert client.get("/api/v1/me", headers=bearer(token)).json()["plan"]["id"] == "free"
    accounts.set_account(live.core, acct.email, plan="pro", frozen=True)
    d = client.get("/api/v1/me", headers=bearer(token)).json()
    assert d["plan"]["id"] == "pro" and d["plan"]["status"] == "frozen" and d["api_access"] == "full"


def test_x_api_key_header_works_like_bearer(client, lab_token):
    assert client.get("/api/v1/me", headers={"x-api-key": lab_token}).status_code == 200

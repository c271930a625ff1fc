"""Every endpoint x {no token, malformed, unknown, revoked, expired, missing scope, free plan write}
gives the API's code (Authentication 1-11)."""
from __future__ import annotations

import secrets
import time

import httpx
import pytest
from tests.api.util import MINUTE_START, bearer, expired_token, serving

from orchestrator import accounts, auth
from orchestrator.clock import ManualClock
from orchestrator.core import Core

VALID_SCENARIO = {"name": "matrix", "season_ticks": 50}
VALID_SKILL = {"name": "matrix skill", "text": "Trade fairly and often."}

# (method, path, needed scope, is a write, body)
ENDPOINTS = [
    ("GET", "/api/v1/me", None, False, None),
    ("GET", "/api/v1/scenarios/schema", "scenarios:read", False, None),
    ("GET", "/api/v1/library/scenarios", "scenarios:read", False, None),
    ("GET", "/api/v1/library/anchors", "scenarios:read", False, None),
    ("POST", "/api/v1/scenarios/validate", "scenarios:read", False, VALID_SCENARIO),
    ("GET", "/api/v1/scenarios", "scenarios:read", False, None),
    ("POST", "/api/v1/scenarios", "scenarios:write", True, VALID_SCENARIO),
    ("GET", "/api/v1/scenarios/{scenario}", "scenarios:read", False, None),
    ("PUT", "/api/v1/scenarios/{scenario}", "scenarios:write", True, {"description": "x"}),
    ("DELETE", "/api/v1/scenarios/{scenario}", "scenarios:write", True, None),
    ("GET", "/api/v1/skills", "scenarios:read", False, None),
    ("POST", "/api/v1/skills", "scenarios:write", True, VALID_SKILL),
    ("GET", "/api/v1/skills/{skill}", "scenarios:read", False, None),
    ("PUT", "/api/v1/skills/{skill}", "scenarios:write", True, {"name": "renamed"}),
    ("DELETE", "/api/v1/skills/{skill}", "scenarios:write", True, None),
]
IDS = [f"{m} {p}" for m, p, *_ in ENDPOINTS]


@pytest.fixture(scope="module")
def tokens(live):
    core = live.core
    stamp = time.time_ns()
    lab, free, narrow = (f"{k}-{stamp}@matrix.test" for k in ("lab", "free", "narrow"))
    accounts.create_account(core, lab, plan="lab")
    accounts.create_account(core, free, plan="free")
    accounts.create_account(core, narrow, plan="lab")
    revoked, _ = auth.mint(core, lab, name="revoked")
    auth.revoke(core, lab, revoked[:12])
    expired = expired_token(core, lab)
    return {
        "malformed": "dsk_not-hex",
        "unknown": "dsk_" + secrets.token_hex(32),
        "revoked": revoked,
        "expired": expired,
        "missing_scope": auth.mint(core, narrow, scopes=("runs:read", "runs:write"))[0],
        "free_write": auth.mint(core, free, scopes=("scenarios:write",))[0],
        "lab": auth.mint(core, lab)[0],
    }


def _call(client, method, path, token=None, body=None, headers=None):
    h = dict(headers or {})
    if token is not None:
        h.update(bearer(token))
    path = path.format(scenario="usc_" + "0" * 24, skill="usk_" + "0" * 24)
    return client.request(method, path, json=body, headers=h)


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=IDS)
@pytest.mark.parametrize("case", ["none", "malformed", "unknown", "revoked", "expired"])
def test_unusable_token_is_token_required(client, tokens, endpoint, case):
    method, path, _, _, body = endpoint
    r = _call(client, method, path, None if case == "none" else tokens[case], body)
    assert r.status_code == 401, r.text
    assert r.json()["error"] == "token_required"
    assert r.json()["message"]


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=IDS)
def test_token_without_the_scope_is_scope_required(client, tokens, endpoint):
    method, path, scope, _, body = endpoint
    r = _call(client, method, path, tokens["missing_scope"], body)
    if scope is None:  # /me: any token
        assert r.status_code == 200
    else:
        assert r.status_code == 403, r.text
        assert r.json()["error"] == "scope_required"
        assert scope in r.json()["message"]


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=IDS)
def test_free_plan_token_reads_but_does_not_write(client, tokens, endpoint):
    method, path, scope, write, body = endpoint
    r = _call(client, method, path, tokens["free_write"], body)
    if write:
        assert r.status_code == 403, r.text
        assert r.json()["error"] == "plan_api"
    elif "{" in path:  # reads of a placeholder id get as far as the lookup
        assert r.status_code == 404
    else:
        assert r.status_code == 200, r.text


def test_public_endpoints_ignore_tokens(client, tokens):
    for token in (None, tokens["malformed"], tokens["revoked"]):
        for path in ("/api/v1", "/api/v1/openapi.json"):
            assert _call(client, "GET", path, token).status_code == 200


def test_x_api_key_refusals_match_bearer(client, tokens):
    for case in ("malformed", "unknown", "revoked", "expired"):
        r = client.get("/api/v1/scenarios", headers={"x-api-key": tokens[case]})
        assert (r.status_code, r.json()["error"]) == (401, "token_required")
    r = client.get("/api/v1/scenarios", headers={"Authorization": f"Basic {tokens['lab']}"})
    assert (r.status_code, r.json()["error"]) == (401, "token_required")


def test_scope_is_checked_before_the_body_is_read(client, tokens):
    r = client.post("/api/v1/scenarios", content=b"{broken", headers={**bearer(tokens["missing_scope"]),
                                                                       "content-type": "application/json"})
    assert (r.status_code, r.json()["error"]) == (403, "scope_required")
    r = client.post("/api/v1/scenarios", content=b"{broken", headers={**bearer(tokens["free_write"]),
                                                                       "content-type": "application/json"})
    assert (r.status_code, r.json()["error"]) == (403, "plan_api")


def test_write_scope_implies_read(client, tokens):
    assert _call(client, "GET", "/api/v1/scenarios", tokens["free_write"]).status_code == 200


def test_revocation_is_effective_on_the_next_request(client, live):
    email = f"rev-{time.time_ns()}@matrix.test"
    accounts.create_account(live.core, email, plan="pro")
    token, _ = auth.mint(live.core, email)
    assert client.get("/api/v1/scenarios", headers=bearer(token)).status_code == 200
    auth.revoke(live.core, email, token[:12])
    r = client.get("/api/v1/scenarios", headers=bearer(token))
    assert (r.status_code, r.json()["error"]) == (401, "token_required")


def test_expiry_takes_effect_without_any_action(tmp_path):
    core = Core.open(tmp_path / "data", clock=ManualClock(MINUTE_START))  # the server's time: the test moves it
    accounts.create_account(core, "exp@matrix.test", plan="pro")
    token, _ = auth.mint(core, "exp@matrix.test", expires_in_ms=400)
    with serving(core) as url, httpx.Client(base_url=url, headers=bearer(token)) as c:
        assert c.get("/api/v1/me").status_code == 200
        core.clock.advance(399)
        assert c.get("/api/v1/me").status_code == 200
        core.clock.advance(1)
        assert c.get("/api/v1/me").status_code == 401


def test_foreign_ids_read_as_unknown(client, make_account):
    owner, other = make_account("pro"), make_account("pro")
    owner_token, other_token = owner.token(), other.token()
    sc = client.post("/api/v1/scenarios", json=VALID_SCENARIO, headers=bearer(owner_token)).json()["scenario"]
    sk = client.post("/api/v1/skills", json=VALID_SKILL, headers=bearer(owner_token)).json()["skill"]
    for method, body in (("GET", None), ("PUT", {"description": "mine now"}), ("DELETE", None)):
        r = client.request(method, f"/api/v1/scenarios/{sc['id']}", json=body, headers=bearer(other_token))
        assert (r.status_code, r.json()["error"]) == (404, "unknown_scenario")
    for method, body in (("GET", None), ("PUT", {"name": "mine now"}), ("DELETE", None)):
        r = client.request(method, f"/api/v1/skills/{sk['id']}", json=body, headers=bearer(other_token))
        assert (r.status_code, r.json()["error"]) == (404, "unknown_skill")
    assert client.get("/api/v1/scenarios", headers=bearer(other_token)).json()["scenarios"] == []
    assert client.get("/api/v1/skills", headers=bearer(other_token)).json()["mine"] == []
    # and the owner still has both, untouched
    assert client.get(f"/api/v1/scenarios/{sc['id']}", headers=bearer(owner_token)).json()["scenario"] == sc

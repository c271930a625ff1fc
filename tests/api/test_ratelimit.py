"""Per-token ceilings (plan figure per minute) and the per-address ceiling on refused requests."""
from __future__ import annotations

import time

import httpx
import pytest

from api.app import create_app
from orchestrator import accounts, auth
from orchestrator.core import Core
from tests.api.util import bearer, free_port, start_server


def _not_near_minute_end() -> None:
    # The windows roll on the wall-clock minute; start a burst with room to finish inside one.
    left = 60 - time.time() % 60
    if left < 5:
        time.sleep(left + 0.05)


def test_token_over_its_plan_ceiling_gets_429_with_retry_after(client, make_account):
    acct = make_account("free")  # 60 requests per minute
    token = acct.token()
    _not_near_minute_end()
    codes = [client.get("/api/v1/me", headers=bearer(token)).status_code for _ in range(60)]
    assert codes == [200] * 60
    r = client.get("/api/v1/me", headers=bearer(token))
    assert r.status_code == 429
    assert r.json()["error"] == "rate_limited" and "60" in r.json()["message"]
    assert 1 <= int(r.headers["retry-after"]) <= 60
    # another token of another account is unaffected
    assert client.get("/api/v1/me", headers=bearer(make_account("free").token())).status_code == 200


@pytest.fixture
def strict_server(tmp_path):
    """A second live server whose per-address ceiling is low enough to reach in a test."""
    core = Core.open(tmp_path / "data", refused_per_address_per_minute=5)
    port = free_port()
    server, thread = start_server(create_app(core=core), port)
    yield core, f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def test_refused_requests_per_address_hit_a_ceiling(strict_server):
    core, url = strict_server
    accounts.create_account(core, "ok@example.org", plan="pro")
    good, _ = auth.mint(core, "ok@example.org", scopes=("runs:read",))
    _not_near_minute_end()
    with httpx.Client(base_url=url) as c:
        codes = [c.get("/api/v1/scenarios", headers=bearer("dsk_" + "0" * 64)).status_code for _ in range(5)]
        assert codes == [401] * 5
        r = c.get("/api/v1/scenarios")  # unauthenticated, past the ceiling
        assert r.status_code == 429 and r.json()["error"] == "rate_limited" and "retry-after" in r.headers
        # a refusal of a valid token (missing scope) from the same address is now 429 as well
        assert c.get("/api/v1/scenarios", headers=bearer(good)).status_code == 429
        # requests that are not refused still pass
        assert c.get("/api/v1/me", headers=bearer(good)).status_code == 200
        assert c.get("/api/v1").status_code == 200

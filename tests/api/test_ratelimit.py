"""Per-token ceilings (plan figure per minute) and the per-address ceiling on refused requests."""
from __future__ import annotations

import httpx
import pytest

from api.app import create_app
from orchestrator import accounts, auth
from orchestrator.clock import ManualClock
from orchestrator.core import Core
from tests.api.util import bearer, free_port, start_server


MINUTE_START = 1_790_000_040_000 - 1_790_000_040_000 % 60_000 + 60_000  # a minute boundary, in ms


@pytest.fixture
def strict_server(tmp_path):
    """A live server whose per-address ceiling is low enough to reach in a test, on a clock the test
    sets: the windows roll on the wall-clock minute, and no test waits for one."""
    clock = ManualClock(MINUTE_START + 1_000)
    core = Core.open(tmp_path / "data", refused_per_address_per_minute=5, clock=clock)
    port = free_port()
    server, thread = start_server(create_app(core=core), port)
    yield core, f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def test_token_over_its_plan_ceiling_gets_429_with_retry_after(strict_server):
    core, url = strict_server
    accounts.create_account(core, "free@example.org", plan="free")  # 60 requests per minute
    accounts.create_account(core, "other@example.org", plan="free")
    token, _ = auth.mint(core, "free@example.org")
    with httpx.Client(base_url=url) as c:
        codes = [c.get("/api/v1/me", headers=bearer(token)).status_code for _ in range(60)]
        assert codes == [200] * 60
        r = c.get("/api/v1/me", headers=bearer(token))
        assert r.status_code == 429
        assert r.json()["error"] == "rate_limited" and "60" in r.json()["message"]
        assert int(r.headers["retry-after"]) == 59  # one second into the minute
        # another token of another account is unaffected
        assert c.get("/api/v1/me", headers=bearer(auth.mint(core, "other@example.org")[0])).status_code == 200
        core.clock.advance(59_000)  # the minute rolls: the token is served again
        assert c.get("/api/v1/me", headers=bearer(token)).status_code == 200


def test_refused_requests_per_address_hit_a_ceiling(strict_server):
    core, url = strict_server
    accounts.create_account(core, "ok@example.org", plan="pro")
    good, _ = auth.mint(core, "ok@example.org", scopes=("runs:read",))
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

"""Issue 50, F11: one rule for whole numbers on every surface (docs/api.md, "Bodies and errors"): an
integer field refuses an integral float (300.0) with its own code, through REST and MCP alike, the same
message; a literal 1e400 where a number goes is refused the same way. Every integer field of the run
and scenario bodies is checked."""
from __future__ import annotations

import copy
import json

import httpx
import pytest

from tests.mcp.conftest import call, connect, rest
from tests.runs.conftest import account

BASE = {"scenario_id": "svc:custom-base-v1", "roster": [{"model": "local/random"}, {"model": "local/honest-trader"}]}
# (where in the run body, the integral float, the code)
FIELDS = [(("season_ticks",), 300.0, "bad_season_ticks"), (("trials",), 2.0, "bad_trials"),
          (("env", "seed"), 7.0, "bad_env"), (("env", "spawn_seed"), 7.0, "bad_env"),
          (("env", "turn_timeout_ms"), 6000.0, "bad_env"), (("env", "actions_per_turn"), 2.0, "bad_env"),
          (("roster", 0, "max_tokens"), 100.0, "bad_roster"), (("until", "seat"), 1.0, "bad_until"),
          (("fork", "tick"), 30.0, "bad_fork"), (("max_spend_usd",), 1e400, "bad_spend_cap"),
          (("budget_usd",), 1e400, "bad_spend_cap"), (("env", "resources", "food", "regen"), 1e400, "bad_env")]


def _with(path: tuple, value) -> dict:
    body = copy.deepcopy(BASE)
    body["until"] = {"half_width": 5.0} if path[0] == "until" else body.get("until")
    body["fork"] = {"run_id": "run_unknown", "tick": 30} if path[0] == "fork" else None
    body = {k: v for k, v in body.items() if v is not None}
    if path[0] in ("until", "budget_usd"):
        body["trials"] = 10
    at = body
    for part in path[:-1]:
        at = at.setdefault(part, {}) if isinstance(part, str) else at[part]
    at[path[-1]] = value
    return body


def _post_text(server, token: str, path: str, text: str) -> httpx.Response:
    with httpx.Client(base_url=server.url, timeout=60, headers={"Authorization": f"Bearer {token}",
                                                                 "content-type": "application/json"}) as c:
        return c.post(path, content=text.encode())


@pytest.mark.anyio
@pytest.mark.parametrize("path,value,code", FIELDS, ids=[".".join(map(str, f[0])) for f in FIELDS])
async def test_an_integral_float_or_1e400_is_refused_alike_on_rest_and_mcp(idle, path, value, code):
    token = account(idle.core)
    body = _with(path, value)
    text = json.dumps(body).replace("Infinity", "1e400")  # as a client writes it
    r = _post_text(idle, token, "/api/v1/runs/estimate", text)
    assert r.status_code == 400 and r.json()["error"] == code, r.text
    assert ".".join(str(p) for p in path if isinstance(p, str)).split(".")[-1] in r.json()["message"]
    if value < 1e300:  # the MCP client encodes its arguments itself, and cannot write 1e400
        async with connect(idle, token) as client:
            is_error, answer = await call(client, "estimate_run", body)
        assert is_error and answer == r.json()
    fixed = _with(path, int(value) if value < 1e300 else 1)
    if path[0] != "fork":  # the fork's run is unknown: 404, after the body passed
        ok = rest(idle, token, "POST", "/api/v1/runs/estimate", fixed)
        assert ok.status_code == 200, (fixed, ok.text)


def test_a_scenario_refuses_an_integral_float_season(idle):
    token = account(idle.core)
    for value in ("300.0", "1e400"):
        r = _post_text(idle, token, "/api/v1/scenarios", '{"name": "floaty", "season_ticks": %s}' % value)
        assert r.status_code == 400 and r.json()["error"] == "bad_season_ticks", r.text

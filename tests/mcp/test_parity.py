"""The parity table: for every error code a tool can answer, the same input through REST and through
MCP gives the same code and message (the API: every error has the same code and message on every
surface). MCP calls carry the token in the Authorization header, as REST's do; api_key is the input
where the case is about the token itself."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import pytest

from orchestrator import accounts, auth
from orchestrator.seats import keys
from orchestrator.clock import ManualClock
from orchestrator.errors import STATUS
from tests.api.util import MINUTE_START, expired_token
from tests.mcp.conftest import CONFIG, call, connect, rest
from tests.runs.conftest import ALL_SCOPES, local_body, start

SEAT = {"model": "local/random"}
UNKNOWN = "dsk_" + "0" * 64
_n = iter(range(10**6))


@dataclass
class Who:
    email: str
    token: str


def who(core, plan: str = "lab", scopes=ALL_SCOPES, verified: bool = True) -> Who:
    email = f"parity{next(_n)}-{time.monotonic_ns()}@example.com"
    accounts.create_account(core, email, plan=plan, verified=verified)
    return Who(email, auth.mint(core, email, scopes=scopes)[0])


@dataclass
class Case:
    code: str
    tool: str
    args: dict
    method: str
    path: str
    body: object = None
    plan: str = "lab"
    scopes: tuple = ALL_SCOPES
    verified: bool = True
    token: str = "account"  # account | none | api_key:<kind> (the token goes in the api_key argument)
    setup: Callable | None = None  # (server, Who) -> {placeholder: value} for args, path and body
    fill: dict = field(default_factory=dict)


def est(code, plan="lab", setup=None, verified=True, **over) -> Case:
    body = local_body(**over)
    return Case(code, "estimate_run", body, "POST", "/api/v1/runs/estimate", body, plan=plan, setup=setup,
                verified=verified)


def _scenario(server, w):
    r = rest(server, w.token, "POST", "/api/v1/scenarios", {"name": "the only one"})
    return {"{scenario}": r.json()["scenario"]["id"]}


def _skill(server, w):
    rest(server, w.token, "POST", "/api/v1/skills", {"name": "the only one", "text": "trade early, trade often"})
    return {}


def _queued_run(server, w):
    # the idle server has no dispatcher: the run stays queued and holds the plan's one queue slot
    r = rest(server, w.token, "POST", "/api/v1/runs", local_body())
    assert r.status_code == 201, r.json()
    return {"{run}": r.json()["run"]["run_id"]}


def _launching_run(server, w):
    run_id = _queued_run(server, w)["{run}"]
    with server.core.store.write() as db:  # as the dispatcher does while it hands the run to the world
        db.execute("UPDATE runs SET status = 'launching' WHERE id = ?", (run_id,))
    return {"{run}": run_id}


def _agent_run(server, w):
    body = local_body(roster=[{"provider": "agent", "model": "parity-agent"}, {"model": "local/random"}])
    r = rest(server, w.token, "POST", "/api/v1/runs", body)
    assert r.status_code == 201, r.json()
    return {"{run}": r.json()["run"]["run_id"]}


def _frozen(server, w):
    accounts.set_account(server.core, w.email, frozen=True)
    return {}


def _empty_router_key(server, w):
    # an unreachable balance endpoint: the stored balance (0) is what the launch checks
    keys.set_key(server.core, provider="router", key="rk-test", email=w.email, base_url="http://127.0.0.1:9",
                 balance_usd=0.0)
    return {}


def _sponsor(server, w):
    keys.set_key(server.core, provider="router", key="pk-test", platform=True, models=["sponsored/model"],
                 base_url="http://127.0.0.1:9")
    return {}


def _revoked(server, w):
    auth.revoke(server.core, w.email, w.token[:12])
    return {}


def _expired(server, w):
    return {"{expired}": expired_token(server.core, w.email, name="short")}


CASES = [
    Case("token_required", "whoami", {}, "GET", "/api/v1/me", token="none"),
    Case("token_required", "list_scenarios", {"api_key": UNKNOWN}, "GET", "/api/v1/scenarios", token=UNKNOWN),
    Case("token_required", "get_usage", {"api_key": "dsk_nope"}, "GET", "/api/v1/usage", token="dsk_nope"),
    Case("token_required", "whoami", {"api_key": "{token}"}, "GET", "/api/v1/me", token="{token}", setup=_revoked),
    Case("token_required", "whoami", {"api_key": "{expired}"}, "GET", "/api/v1/me", token="{expired}",
         setup=_expired),
    Case("scope_required", "list_scenarios", {}, "GET", "/api/v1/scenarios", scopes=("runs:read",)),
    Case("scope_required", "create_scenario", {"name": "ok"}, "POST", "/api/v1/scenarios", {"name": "ok"},
         scopes=("scenarios:read", "runs:write")),
    Case("scope_required", "estimate_run", local_body(), "POST", "/api/v1/runs/estimate", local_body(),
         scopes=("scenarios:read",)),
    Case("scope_required", "launch_run", local_body(), "POST", "/api/v1/runs", local_body(), scopes=("runs:read",)),
    Case("scope_required", "get_batch", {"id": "bat_x"}, "GET", "/api/v1/batches/bat_x", scopes=("scenarios:read",)),
    Case("plan_api", "create_scenario", {"name": "ok"}, "POST", "/api/v1/scenarios", {"name": "ok"}, plan="free"),
    Case("plan_api", "launch_run", local_body(), "POST", "/api/v1/runs", local_body(), plan="free"),
    Case("plan_api", "cancel_run", {"id": "run_x"}, "POST", "/api/v1/runs/run_x/cancel", plan="free"),
    Case("plan_api", "delete_skill", {"id": "usk_x"}, "DELETE", "/api/v1/skills/usk_x", plan="free"),
    Case("bad_request", "create_scenario", {"name": "ok", "colour": "red"}, "POST", "/api/v1/scenarios",
         {"name": "ok", "colour": "red"}),
    # list_runs: the query reaches the service raw on REST too, so a bad value reads the same
    Case("bad_request", "list_runs", {"limit": 0}, "GET", "/api/v1/runs?limit=0"),
    Case("bad_request", "list_runs", {"limit": 101}, "GET", "/api/v1/runs?limit=101"),
    Case("bad_request", "list_runs", {"cursor": "abc"}, "GET", "/api/v1/runs?cursor=abc"),
    Case("bad_request", "list_runs", {"status": "asleep"}, "GET", "/api/v1/runs?status=asleep"),
    Case("bad_request", "validate_scenario", {}, "POST", "/api/v1/scenarios/validate", {}),
    Case("bad_request", "validate_scenario", {"name": "big", "description": "x" * 70_000}, "POST",
         "/api/v1/scenarios/validate", {"name": "big", "description": "x" * 70_000}),
    Case("bad_request", "create_skill", {"name": "only a name"}, "POST", "/api/v1/skills", {"name": "only a name"}),
    est("bad_request", name="x" * 81),
    est("bad_request", colour="red"),
    Case("bad_scenario", "validate_scenario", {"name": "x"}, "POST", "/api/v1/scenarios/validate", {"name": "x"}),
    Case("bad_scenario", "update_scenario", {"id": "{scenario}", "description": 5}, "PUT",
         "/api/v1/scenarios/{scenario}", {"description": 5}, setup=_scenario),
    est("bad_scenario", scenario_id="svc:nope"),
    Case("bad_season_ticks", "create_scenario", {"name": "ok", "season_ticks": 5}, "POST", "/api/v1/scenarios",
         {"name": "ok", "season_ticks": 5}),
    Case("bad_season_ticks", "validate_scenario", {"name": "ok", "season_ticks": "300"}, "POST",
         "/api/v1/scenarios/validate", {"name": "ok", "season_ticks": "300"}),
    est("bad_season_ticks", season_ticks=2001),
    Case("bad_env", "validate_scenario", {"name": "ok", "env": {"actions_per_turn": 9}}, "POST",
         "/api/v1/scenarios/validate", {"name": "ok", "env": {"actions_per_turn": 9}}),
    Case("bad_env", "update_scenario", {"id": "{scenario}", "env": {"anchors": ["nobody"]}}, "PUT",
         "/api/v1/scenarios/{scenario}", {"env": {"anchors": ["nobody"]}}, setup=_scenario),
    est("bad_env", env={"resources": {"gold": {"max": 2}}}),
    Case("too_many_scenarios", "create_scenario", {"name": "second"}, "POST", "/api/v1/scenarios",
         {"name": "second"}, plan="starter", setup=_scenario),
    Case("unknown_scenario", "get_scenario", {"id": "usc_nope"}, "GET", "/api/v1/scenarios/usc_nope"),
    Case("unknown_scenario", "update_scenario", {"id": "usc_nope", "name": "ok"}, "PUT",
         "/api/v1/scenarios/usc_nope", {"name": "ok"}),
    Case("unknown_scenario", "delete_scenario", {"id": "usc_nope"}, "DELETE", "/api/v1/scenarios/usc_nope"),
    Case("bad_skill", "create_skill", {"name": "ok", "text": "short"}, "POST", "/api/v1/skills",
         {"name": "ok", "text": "short"}),
    Case("bad_skill", "update_skill", {"id": "builtin:trader", "name": "mine"}, "PUT",
         "/api/v1/skills/builtin:trader", {"name": "mine"}),
    Case("bad_skill", "delete_skill", {"id": "builtin:trader"}, "DELETE", "/api/v1/skills/builtin:trader"),
    Case("too_many_skills", "create_skill", {"name": "second", "text": "hold the centre"}, "POST",
         "/api/v1/skills", {"name": "second", "text": "hold the centre"}, plan="starter", setup=_skill),
    Case("unknown_skill", "get_skill", {"id": "usk_nope"}, "GET", "/api/v1/skills/usk_nope"),
    Case("unknown_skill", "update_skill", {"id": "usk_nope", "name": "ok"}, "PUT", "/api/v1/skills/usk_nope",
         {"name": "ok"}),
    Case("unknown_skill", "delete_skill", {"id": "usk_nope"}, "DELETE", "/api/v1/skills/usk_nope"),
    est("unknown_skill", roster=[SEAT, {"model": "local/random", "skills": ["usk_nope"]}]),
    est("bad_roster", roster=[]),
    est("bad_roster", roster=[{"name": "no model"}]),
    est("bad_roster", roster=[{"model": "local/flying-monk"}]),
    est("bad_provider", roster=[{"model": "m", "provider": "carrier-pigeon"}]),
    est("provider_key_required", roster=[{"model": "gpt-x", "provider": "openai"}]),
    est("router_key_required", roster=[{"model": "vendor/model"}]),
    est("router_balance_low", roster=[{"model": "vendor/model"}], setup=_empty_router_key),
    est("email_unverified", roster=[{"model": "sponsored/model"}], setup=_sponsor, verified=False),
    est("billing_frozen", setup=_frozen),
    est("bad_trials", trials=0),
    est("bad_trials", trials="2"),
    est("bad_spend_cap", max_spend_usd="5"),
    # docs/RUNS.md: a series' target and budget
    est("bad_until", trials=3, until={"half_width": 0}),
    est("bad_until", trials=3, until={"half_width": 3, "seat": 9}),
    est("bad_until", until={"half_width": 3}),
    est("bad_spend_cap", trials=3, budget_usd="5"),
    est("bad_request", budget_usd=5),
    est("plan_seats", plan="starter", roster=[SEAT] * 7),
    est("plan_ticks", plan="starter", season_ticks=601),
    est("plan_series", plan="starter", trials=5),
    est("plan_quota", plan="starter", season_ticks=300, trials=2),
    est("too_many_runs", plan="starter", setup=_queued_run),
    Case("too_many_runs", "launch_run", local_body(), "POST", "/api/v1/runs", local_body(), plan="starter",
         setup=_queued_run),
    est("seed_not_allowed", trials=2, env={"spawn_seed": 4}),
    est("seed_not_allowed", scenario_id="svc:long-winter", env={"seed": 4}),
    # docs/FORKS.md: a fork that cannot be read, through estimate_run and fork_run alike
    Case("bad_fork", "estimate_run", {"fork": "x"}, "POST", "/api/v1/runs/estimate", {"fork": "x"}),
    Case("bad_fork", "fork_run", {"run_id": "run_nope", "tick": "3"}, "POST", "/api/v1/runs",
         {"fork": {"run_id": "run_nope", "tick": "3"}}, plan="starter"),
    Case("unknown_run", "fork_run", {"run_id": "run_nope", "tick": 3}, "POST", "/api/v1/runs",
         {"fork": {"run_id": "run_nope", "tick": 3}}, plan="starter"),
    Case("unknown_run", "get_run", {"id": "run_nope"}, "GET", "/api/v1/runs/run_nope"),
    Case("unknown_run", "cancel_run", {"id": "run_nope"}, "POST", "/api/v1/runs/run_nope/cancel"),
    Case("unknown_run", "get_batch", {"id": "bat_nope"}, "GET", "/api/v1/batches/bat_nope"),
    Case("unknown_run", "get_transcript", {"id": "run_nope"}, "GET", "/api/v1/runs/run_nope/transcript"),
    Case("run_launching", "cancel_run", {"id": "{run}"}, "POST", "/api/v1/runs/{run}/cancel",
         setup=_launching_run),
    # result bundles: of a series no account of this one has, of a run still queued
    Case("unknown_batch", "export_run", {"id": "bat_nope", "format": "bundle"}, "GET", "/api/v1/batches/bat_nope/bundle"),
    Case("run_not_ended", "export_run", {"id": "{run}", "format": "bundle"}, "GET", "/api/v1/runs/{run}/bundle",
         setup=_queued_run),
    # docs/AGENTS.md: an agent seat's turns (the run stays queued on the idle server)
    Case("unknown_run", "get_seat_turn", {"run_id": "run_nope", "seat": 0}, "GET", "/api/v1/runs/run_nope/seats/0/turn"),
    Case("not_agent_seat", "get_seat_turn", {"run_id": "{run}", "seat": 1}, "GET", "/api/v1/runs/{run}/seats/1/turn",
         setup=_agent_run),
    Case("bad_request", "get_seat_turn", {"run_id": "{run}", "seat": 0, "wait_ms": 30001}, "GET",
         "/api/v1/runs/{run}/seats/0/turn?wait_ms=30001", setup=_agent_run),
    Case("bad_actions", "submit_seat_actions", {"run_id": "{run}", "seat": 0, "tick": 0, "actions": ["wait"]}, "POST",
         "/api/v1/runs/{run}/seats/0/actions", {"tick": 0, "actions": ["wait"]}, setup=_agent_run),
    Case("turn_closed", "submit_seat_actions", {"run_id": "{run}", "seat": 0, "tick": 0, "actions": []}, "POST",
         "/api/v1/runs/{run}/seats/0/actions", {"tick": 0, "actions": []}, setup=_agent_run),
]


def _fill(value, fill: dict):
    if isinstance(value, str):
        for k, v in fill.items():
            value = value.replace(k, v)
        return value
    if isinstance(value, dict):
        return {k: _fill(v, fill) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, fill) for v in value]
    return value


@pytest.mark.anyio
@pytest.mark.parametrize("case", CASES, ids=[f"{c.code}-{c.tool}-{i}" for i, c in enumerate(CASES)])
async def test_same_input_same_refusal_on_rest_and_mcp(idle, case):
    w = who(idle.core, case.plan, case.scopes, case.verified)
    fill = {"{token}": w.token, **(case.setup(idle, w) if case.setup else {})}
    args, path, body = _fill(case.args, fill), _fill(case.path, fill), _fill(case.body, fill)
    if case.token == "account":
        rest_token, header = w.token, w.token
    else:  # the token under test travels as REST's header and as MCP's api_key; MCP sends no header
        rest_token, header = (None if case.token == "none" else _fill(case.token, fill)), None
    r = rest(idle, rest_token, case.method, path, body)
    async with connect(idle, header) as client:
        is_error, envelope = await call(client, case.tool, args)
    assert is_error
    assert r.json() == envelope, (r.json(), envelope)
    assert set(envelope) == {"error", "message"} and envelope["message"]
    assert (r.status_code, envelope["error"]) == (STATUS[case.code], case.code)


def test_every_code_a_tool_can_answer_is_in_the_table():
    # run_history_full (a platform-wide ceiling), internal_error and unavailable (faults) are not reachable
    # on demand; not_found and method_not_allowed are router answers, which no tool gives.
    reachable = set(STATUS) - {"run_history_full", "internal_error", "unavailable", "not_found",
                               "method_not_allowed", "csrf_failed", "sign_in_failed",
                               "bad_base_url",  # the web console's own refusals
                               "log_not_kept",  # the public log and replay pages' answer (docs/RUNS.md)
                               "archive_damaged"}  # needs a damaged file: tests/faults/test_damaged_archive.py
    assert reachable - {c.code for c in CASES} == {"rate_limited"}  # tested below, it needs a burst


@pytest.fixture
def ticking(tmp_path):
    """A server like `idle` on a clock the test sets: the rate-limit window rolls on the wall-clock
    minute, and the burst starts at the top of one."""
    s = start(tmp_path / "data", CONFIG, dispatch=False, clock=ManualClock(MINUTE_START + 1_000))
    yield s
    s.stop()


@pytest.mark.anyio
async def test_rate_limited_is_shared_by_rest_and_mcp_calls(ticking):
    w = who(ticking.core, "free")  # 60 requests per minute
    async with connect(ticking, w.token) as client:
        for _ in range(30):
            assert rest(ticking, w.token, "GET", "/api/v1/me").status_code == 200
            assert not (await call(client, "whoami"))[0]
        r = rest(ticking, w.token, "GET", "/api/v1/me")
        is_error, envelope = await call(client, "whoami")
    assert r.status_code == 429 and is_error
    # the same refusal, to the letter: the clock stands still, so even the retry hint agrees
    assert r.json() == envelope and envelope["error"] == "rate_limited"
